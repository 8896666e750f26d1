"""A NoExecute device taint racing a preemption for the same device (issue #29, item 4).

The clusters of test_preemption_devices_properties: every GPU held by low-priority pods, a
high-priority pod preempts. Once its devices are nominated, three things happen in a random
order, as they may in a cluster: a device (often the nominated one) gets a NoExecute taint and
the eviction controller's decisions are carried out (the pods it evicts go, and the claims
reserved only for pods gone are deallocated); the victims go (their claims likewise); another
pod, of any priority and tolerating the taint or not, is decided. Then the preemptor is decided
as the scheduler decides it (its nomination out of the ledger for its own decision, back if
that did not place it). Throughout:

- no device is ever given to two pods: the allocated claims of live pods and every placement
  made hold distinct devices;
- the other pod never gets a device nominated to the preemptor, tolerating the taint or not;
- nobody is placed on a device whose NoExecute taint it does not tolerate, and the eviction
  controller never evicts a pod that is only nominated (it is not bound);
- the preemptor, placed, gets exactly the nominated devices.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

from hypothesis import event, given
from hypothesis import settings as settings_hypothesis
from hypothesis import strategies as st
from tests.support.counts import property_examples

from dra_operator.cluster import ObjectKey, pod_claim_keys
from dra_operator.controllers.eviction._taints import (
    DeviceID,
    claim_eviction,
    pod_eviction,
    slice_taints,
)
from dra_operator.controllers.scheduler import Placement, State, decide_pod
from dra_operator.controllers.scheduler._claim_nomination import ClaimNominations
from dra_operator.controllers.scheduler._preemption_cycle import (
    claims_freed,
    find_victims,
    nominated_allocation,
)
from dra_operator.controllers.scheduler.framework import Nominator
from dra_operator.model import Pod, ResourceClaim

from .builders import NS, pod, settings
from .test_preemption_cycle import _pod, _prioritized
from .test_preemption_devices_properties import _devices, clusters

TAINT = "example.com/broken"
NOW = datetime.datetime(2026, 11, 27, tzinfo=datetime.UTC)
STEPS = ("taint", "victims", "other")


def _tolerating(state: State, name: str) -> None:
    """Claim `name`'s request tolerates the NoExecute taint, forever."""
    entry = state.claims.get(ObjectKey(NS, name))
    assert entry is not None
    raw = copy.deepcopy(entry.raw)
    toleration = {"key": TAINT, "operator": "Exists", "effect": "NoExecute"}
    raw["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [toleration]
    raw["metadata"]["resourceVersion"] = str(int(raw["metadata"]["resourceVersion"]) + 1000)
    change = state.claims.apply("MODIFIED", raw)
    assert change is not None
    state.ledger.observe(change)


def _taint(state: State, pool: str, device: str) -> None:
    """A NoExecute taint published on the device in its node's slice."""
    entry = next(e for e in state.slices if e.obj.pool.name == pool)
    raw = entry.raw
    devices = [
        {**d, "taints": [{"key": TAINT, "effect": "NoExecute"}]} if d["name"] == device else d
        for d in raw["spec"]["devices"]
    ]
    version = str(int(raw["metadata"]["resourceVersion"]) + 1000)
    changed = {
        **raw,
        "metadata": {**raw["metadata"], "resourceVersion": version},
        "spec": {**raw["spec"], "devices": devices},
    }
    state.slices.apply("MODIFIED", changed)


def _bound_pods(state: State) -> list[Pod]:
    return [e.obj for e in state.pods if e.obj.spec.node_name]


def _claims_of(state: State, subject: Pod) -> list[ResourceClaim]:
    entries = (state.claims.get(key) for key in pod_claim_keys(subject))
    return [e.obj for e in entries if e is not None]


def _evicted(state: State) -> list[Pod]:
    """The pods the eviction controller would evict now (published NoExecute taints only)."""
    published = slice_taints(e.obj for e in state.slices)

    def on(device: DeviceID) -> Any:
        return published.get(device, ())

    return [
        p
        for p in _bound_pods(state)
        if pod_eviction(p, _claims_of(state, p), lambda c: claim_eviction(c, on, (), NOW))
    ]


def _go(state: State, leaving: list[Pod]) -> None:
    """The pods are gone; the claims reserved only for them are deallocated."""
    freed = claims_freed(state, leaving)
    for subject in leaving:
        entry = state.pods.get(ObjectKey(NS, subject.metadata.name))
        if entry is None:
            continue
        state.pods.apply("DELETED", entry.raw)
        state.node_infos.forget(subject.metadata.uid)
    for entry in list(state.claims):
        if entry.obj.metadata.uid in freed:
            change = state.claims.apply("DELETED", entry.raw)
            assert change is not None
            state.ledger.observe(change)


def _given(state: State) -> list[tuple[str, str]]:
    """The devices of allocated claims reserved for pods still in the cache."""
    live = {e.obj.metadata.uid for e in state.pods}
    held: list[tuple[str, str]] = []
    for entry in state.claims:
        allocation = entry.obj.status.allocation
        reserved = {r.uid for r in entry.obj.status.reserved_for}
        if allocation is not None and reserved & live:
            held += [(r.pool, r.device) for r in allocation.devices.results]
    return held


def _untolerated(state: State) -> set[tuple[str, str]]:
    published = slice_taints(e.obj for e in state.slices)
    return {(d.pool, d.device) for d in published}


@settings_hypothesis(max_examples=property_examples(60), deadline=None)
@given(
    clusters(),
    st.integers(0, 30),
    st.booleans(),
    st.booleans(),
    st.permutations(STEPS),
    st.integers(0, 10),
)
def test_a_tainted_device_and_a_preemption_never_give_it_to_two_pods(
    cluster: tuple[State, list[str]],
    other_priority: int,
    other_tolerates: bool,
    on_nominated: bool,
    order: list[str],
    pick: int,
) -> None:
    state, _ = cluster
    high = _pod(state, "high")
    candidate, _ = find_victims(high, state, settings(), nominator=Nominator(), budgets=lambda: ())
    if candidate is None:
        event("no candidate")
        return
    allocations = nominated_allocation(high, candidate, state, settings())
    assert allocations
    nominations = ClaimNominations(state.ledger)
    held = nominations.hold(high.metadata.uid, candidate.node, allocations)
    nominated = {(d.split("/")[1], d.split("/")[2]) for d in held.devices()}
    every = sorted((e.obj.pool.name, d.name) for e in state.slices for d in e.obj.devices)
    tainted = sorted(nominated)[0] if on_nominated else every[pick % len(every)]
    event(f"taint on the nominated device: {tainted in nominated}")
    placements: list[set[tuple[str, str]]] = []

    for step in order:
        if step == "taint":
            _taint(state, *tainted)
            evicted = _evicted(state)
            assert all(p.metadata.uid != high.metadata.uid for p in evicted)
            _go(state, evicted)
        elif step == "victims":
            _go(state, list(candidate.victims))
        else:
            if other_tolerates:
                _tolerating(state, "other")
            other = _prioritized(pod("other-pod", claims=["other"]), other_priority)
            other["metadata"]["resourceVersion"] = "999"
            added = state.pods.apply("ADDED", other)
            assert added is not None and added.new is not None
            decided = decide_pod(added.new.obj, state, settings())
            if isinstance(decided, Placement):
                got = _devices(decided)
                assert not got & nominated, "a nominated device given to another pod"
                if not other_tolerates:
                    assert not got & _untolerated(state)
                for write in decided.claims:
                    if write.allocation is not None:
                        state.ledger.reserve(write.uid, write.allocation)
                placements.append(got)
        given_now = _given(state) + [d for got in placements for d in got]
        assert len(given_now) == len(set(given_now)), "a device given to two pods"

    nominations.release(high.metadata.uid)
    mine = decide_pod(high, state, settings())
    if not isinstance(mine, Placement):
        assert nominations.restore(high.metadata.uid)
        event("the preemptor waits")
        return
    got = _devices(mine)
    event("the preemptor placed")
    assert not got & _untolerated(state)
    if mine.node == candidate.node and not nominated & _untolerated(state):
        assert got == nominated
    everything = _given(state) + [d for done in placements for d in done] + sorted(got)
    assert len(everything) == len(set(everything)), "a device given to two pods"
