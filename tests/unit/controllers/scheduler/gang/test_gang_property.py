"""Over random clusters: a gang is placed whole or not at all, no part of a gang that failed
holds a device or node room, and a claim the members share is allocated once and counted once.

The cycle runs the real decisions (`decide_gang` over the scheduler's `State`); each example
checks the ledger and the NodeInfos after it.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import settings as settings_hypothesis
from hypothesis import strategies as st
from tests.support.counts import property_examples

from dra_operator.controllers.scheduler import Governor, State
from dra_operator.controllers.scheduler.gang import Gang, decide_gang, gang_of, revert
from dra_operator.model import DeviceID, parse_pod_group

from ..builders import NS, claim, device_class, new_state, node, pod, resource_slice, settings


def _member(name: str, own: bool, shared: bool) -> dict[str, Any]:
    names = ([f"{name}-gpu"] if own else []) + (["shared"] if shared else [])
    raw = pod(name, claims=names)
    raw["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    return raw


def _state(devices: list[int], members: list[dict[str, Any]], shared: bool) -> State:
    state = new_state()
    objects: list[tuple[Any, dict[str, Any]]] = [(state.classes, device_class())]
    for index, count in enumerate(devices):
        objects.append((state.nodes, node(f"n{index}")))
        objects.append((state.slices, resource_slice(f"n{index}", count)))
    claims = {c for m in members for c in (e["name"] for e in m["spec"]["resourceClaims"])}
    objects += [(state.claims, claim(name)) for name in sorted(claims)]
    objects += [(state.pods, m) for m in members]
    for version, (store, raw) in enumerate(objects, start=1):
        raw["metadata"]["resourceVersion"] = str(version)
        change = store.apply("ADDED", raw)
        assert change is not None and change.new is not None
        if store is state.claims:
            state.ledger.observe(change)
        if store is state.nodes:
            state.node_infos.node_changed(change.new.obj)
    return state


def _gang(state: State, min_count: int) -> Gang:
    group = parse_pod_group(
        {
            "metadata": {"name": "g", "namespace": NS, "uid": "g"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
        }
    )
    return gang_of(
        group,
        (e.obj for e in state.pods),
        placed=lambda p: state.node_infos.node_of(p.metadata.uid) is not None,
        ours=lambda p: True,
    )


def _held(state: State) -> set[DeviceID]:
    """Every device the ledger counts in use (observed or in flight)."""
    return set(state.ledger.snapshot().exclusive)


@settings_hypothesis(max_examples=property_examples(60), deadline=None)
@given(
    devices=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=4),
    size=st.integers(min_value=1, max_value=6),
    data=st.data(),
)
def test_a_gang_is_placed_whole_or_not_at_all(devices: list[int], size: int, data: Any) -> None:
    min_count = data.draw(st.integers(min_value=1, max_value=size), label="min_count")
    shared = data.draw(st.booleans(), label="shared")
    own = data.draw(st.lists(st.booleans(), min_size=size, max_size=size), label="own")
    members = [_member(f"p{i}", own[i], shared) for i in range(size)]
    state = _state(devices, members, shared)
    assert not _held(state)
    gang = _gang(state, min_count)

    outcome, _ = decide_gang(gang, state, settings(), Governor())

    if not shared:  # members are independent: each with its own claim takes one device
        fitting = own.count(False) + min(sum(devices), own.count(True))
        assert outcome.ok == (fitting >= min_count)

    uids = [m["metadata"]["uid"] for m in members]
    claim_uids = [entry.obj.metadata.uid for entry in state.claims]
    if not outcome.ok:
        assert not _held(state), "a gang that failed holds devices"
        assert not any(state.ledger.is_in_flight(uid) for uid in claim_uids)
        assert all(state.node_infos.node_of(uid) is None for uid in uids)
        assert outcome.message.startswith(f"minCount ({min_count}) cannot be satisfied")
        return
    assert len(outcome.placed) >= min_count
    allocations = [
        (write.key, write.allocation)
        for _, placement in outcome.placed
        for write in placement.claims
        if write.allocation is not None
    ]
    keys = [key for key, _ in allocations]
    assert len(keys) == len(set(keys)), "a claim allocated twice in one cycle"
    devices_taken = [
        (r.driver, r.pool, r.device) for _, a in allocations for r in a.devices.results
    ]
    assert len(devices_taken) == len(set(devices_taken)), "a device counted twice"
    assert {DeviceID(*d) for d in devices_taken} == _held(state)
    for member, placement in outcome.placed:
        assert state.node_infos.node_of(member.metadata.uid) == placement.node
    if shared:
        nodes = {placement.node for _, placement in outcome.placed}
        assert len(nodes) == 1, "members sharing a node-local claim on several nodes"
        assert sum(key.name == "shared" for key in keys) == 1
    for _, placement in outcome.placed:
        revert(state, placement)
    assert not _held(state)
