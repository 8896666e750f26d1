"""Verdicts reused across alike claims: same decisions as asking the allocator on every node."""

from __future__ import annotations

import copy
import dataclasses
import itertools
from typing import Any

from hypothesis import given
from hypothesis import settings as settings_hypothesis
from hypothesis import strategies as st
from tests.support.counts import property_examples

from dra_operator.allocator import BinPack, FirstFit, Policy
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import (
    Decision,
    Fits,
    Placement,
    Settings,
    State,
    Unschedulable,
    Verdicts,
    decide_pod,
    default_framework,
    default_profile,
    nodes_to_score,
    renamed_reason,
    shape_of,
)
from dra_operator.controllers.scheduler.framework import Framework
from dra_operator.model import FrozenMap

from .builders import DRIVER, NS, claim, device, device_class, new_state, node, pod, settings

Raw = dict[str, Any]
_NODES = 4


@dataclasses.dataclass(frozen=True, slots=True)
class EveryNode:
    """FirstFit's order and scores, but not FirstFit: every node goes to the allocator."""

    name: str = "EveryNode"
    alternatives: int = 0
    order_candidates = FirstFit.order_candidates
    score = FirstFit.score


class _Cluster:
    """Stores fed like the watch would, plus the placements decided so far."""

    def __init__(self, *, unscored: bool = False, nodes: int = _NODES) -> None:
        self.state = new_state()
        if unscored:  # FirstFit with nothing to score: the first node that fits wins
            self.state.framework = _unscored()
        self.versions = itertools.count(1)
        self.generations = itertools.count(2)
        self.placed: list[str] = []  # claim UIDs reserved in the ledger
        self.pods = 0
        self.apply("classes", device_class())
        for i in range(nodes):
            self.apply("nodes", node(f"n{i}"))
            self.set_slice(f"n{i}", 2)

    def apply(self, kind: str, raw: Raw, event: str = "MODIFIED") -> None:
        raw = copy.deepcopy(raw)
        raw["metadata"]["resourceVersion"] = str(next(self.versions))
        store: Any = getattr(self.state, kind)
        change = store.apply(event, raw)
        if kind == "claims" and change is not None:
            self.state.ledger.observe(change)

    def set_slice(self, node_name: str, count: int, *, shared: bool = False) -> None:
        """The node's slice with `count` devices (none: deleted); `shared`: the one slice
        selecting nodes labelled zone=a instead."""
        name = "shared" if shared else node_name
        spec: Raw = {
            "driver": DRIVER,
            "pool": {"name": name, "generation": next(self.generations), "resourceSliceCount": 1},
            "devices": [device(f"gpu-{i}") for i in range(count)],
        }
        if shared:
            term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
            spec["nodeSelector"] = {"nodeSelectorTerms": [term]}
        else:
            spec["nodeName"] = node_name
        raw = {"metadata": {"name": f"{name}-slice", "uid": f"slice-{name}"}, "spec": spec}
        raw |= {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice"}
        self.apply("slices", raw, "MODIFIED" if count else "DELETED")

    def new_pod(self, count: int) -> Any:
        self.pods += 1
        name = f"p{self.pods}"
        self.apply("claims", claim(f"{name}-gpu", count=count))
        self.apply("pods", pod(name, claims=[f"{name}-gpu"]))
        entry = self.state.pods.get(ObjectKey(NS, name))
        assert entry is not None
        return entry.obj


_EVENTS = st.one_of(
    st.tuples(st.just("pod"), st.integers(1, 2)),
    st.tuples(st.just("release"), st.integers(0, 20)),
    st.tuples(st.just("slice"), st.integers(0, _NODES - 1), st.integers(0, 3)),
    st.tuples(st.just("shared"), st.integers(0, 3)),
    st.tuples(st.just("label"), st.integers(0, _NODES - 1), st.booleans()),
    st.tuples(st.just("class"), st.booleans()),
)


class Attempts:
    """Counts allocator calls (the scheduler reports each one to its metrics)."""

    def __init__(self) -> None:
        self.count = 0

    def allocation_attempted(self, outcome: Any, **_: Any) -> None:
        self.count += 1

    def pod_bound(self, *, seconds_since_creation: float) -> None:
        pass

    def workqueue(self, name: str) -> Any:
        raise NotImplementedError

    def api_conflict(self, kind: str) -> None:
        pass

    def api_retried(self, kind: str, reason: Any) -> None:
        pass


def _unscored() -> Framework:
    """The default profile with its Score point off."""
    profile = default_profile()
    off = FrozenMap({"score": frozenset(profile.multi_point)})
    return default_framework(profile=dataclasses.replace(profile, disabled=off))


def _run(
    events: list[tuple[Any, ...]], cached: Settings, plain: Settings, *, unscored: bool = False
) -> int:
    """Play `events`, deciding every new pod both ways; returns the cached side's allocator
    calls."""
    attempts = Attempts()
    cached = dataclasses.replace(cached, metrics=attempts)
    cluster = _Cluster(unscored=unscored)
    state = cluster.state
    state.verdicts = Verdicts()
    uncached: State = dataclasses.replace(state, verdicts=None)
    for event in events:
        kind = event[0]
        if kind == "pod":
            pending = cluster.new_pod(event[1])
            first: Decision = decide_pod(pending, state, cached)
            second: Decision = decide_pod(pending, uncached, plain)
            assert first == second
            if isinstance(first, Placement):
                (write,) = first.claims
                assert write.allocation is not None
                state.ledger.reserve(write.uid, write.allocation)
                cluster.placed.append(write.uid)
        elif kind == "release" and cluster.placed:
            state.ledger.rollback(cluster.placed.pop(event[1] % len(cluster.placed)))
        elif kind == "slice":
            cluster.set_slice(f"n{event[1]}", event[2])
        elif kind == "shared":
            cluster.set_slice("", event[1], shared=True)
        elif kind == "label":
            labels = {"zone": "a"} if event[2] else {}
            cluster.apply("nodes", node(f"n{event[1]}", labels=labels))
        elif kind == "class":
            expression = 'device.attributes["gpu.example.com"].index < 1' if event[1] else None
            cluster.apply("classes", device_class(expression=expression or _DRIVER_ONLY))
    return attempts.count


_DRIVER_ONLY = f"device.driver == '{DRIVER}'"


@settings_hypothesis(max_examples=property_examples(150), deadline=None)
@given(events=st.lists(_EVENTS, max_size=30))
def test_first_fit_with_reused_verdicts_decides_as_the_allocator_on_every_node(
    events: list[tuple[Any, ...]],
) -> None:
    base = settings()
    _run(events, base, dataclasses.replace(base, policy=EveryNode()))


@settings_hypothesis(max_examples=property_examples(40), deadline=None)
@given(events=st.lists(_EVENTS, max_size=30))
def test_a_scored_policy_with_reused_verdicts_decides_as_without(
    events: list[tuple[Any, ...]],
) -> None:
    scored = dataclasses.replace(settings(), policy=BinPack())
    _run(events, scored, scored)


def test_pods_of_one_template_reuse_the_full_nodes_verdicts() -> None:
    """Nine one-device pods on four two-device nodes: once a node is full, later pods skip it
    without asking the allocator; only the node that changed is asked again (nothing scores,
    so FirstFit takes the first node that fits)."""
    plain = dataclasses.replace(settings(), policy=EveryNode())
    asked = _run([("pod", 1)] * 9, settings(), plain, unscored=True)
    # Pods 1-8: the node that took the last pod (full every other time, then the next one);
    # pod 9: n3 is full, and the misses of n0-n2 are explained from what was kept.
    assert asked == 1 + 1 + 2 + 1 + 2 + 1 + 2 + 1 + 1  # asking every node: 4 per pod


def test_a_ledger_change_drops_only_the_verdicts_of_its_node() -> None:
    cluster = _Cluster()
    state = cluster.state
    state.verdicts = Verdicts()
    policy: Policy = BinPack()  # scored: every node is asked
    attempts = Attempts()
    scored = dataclasses.replace(settings(), policy=policy, metrics=attempts)
    first = decide_pod(cluster.new_pod(1), state, scored)
    assert isinstance(first, Placement)
    assert attempts.count == _NODES
    (write,) = first.claims
    assert write.allocation is not None
    state.ledger.reserve(write.uid, write.allocation)
    second = decide_pod(cluster.new_pod(1), state, scored)
    assert isinstance(second, Placement) and second.node == first.node  # BinPack: the used one
    # The node that changed is asked again (its verdict is what places the pod); the other
    # nodes' verdicts still hold.
    assert attempts.count == _NODES + 1


def test_no_node_fits_names_the_claim_of_the_pod_asking() -> None:
    cluster = _Cluster()
    state = cluster.state
    state.verdicts = Verdicts()
    attempts = Attempts()
    counted = dataclasses.replace(settings(), metrics=attempts)
    first = decide_pod(cluster.new_pod(3), state, counted)
    second = decide_pod(cluster.new_pod(3), state, counted)
    assert isinstance(first, Unschedulable) and isinstance(second, Unschedulable)
    assert "cannot allocate claim p1-gpu (" in first.message
    assert "cannot allocate claim p2-gpu (" in second.message
    assert attempts.count == _NODES  # the second pod is explained from the first one's misses


def test_renamed_reason_substitutes_only_the_claim_it_can_place() -> None:
    reason = "cannot allocate claim a (request gpu: 0/2 devices usable: 2 in use)"
    assert renamed_reason(reason, ["a"], ["b"]) == reason.replace("claim a", "claim b")
    summary = "cannot allocate all claims (no combination … of claim default/p1-gpu (…))"
    assert renamed_reason(summary, ["p1-gpu"], ["p2-gpu"]) is None
    assert renamed_reason(summary, ["p1-gpu"], ["p1-gpu"]) == summary
    plain = "cannot allocate all claims (the requests together need more devices than are usable)"
    assert renamed_reason(plain, ["p1-gpu"], ["p2-gpu"]) == plain


def test_nodes_to_score_follows_kube_schedulers_adaptive_percentage() -> None:
    assert nodes_to_score(99, 0) == 99
    assert nodes_to_score(500, 0) == 230  # 46 %
    assert nodes_to_score(5000, 0) == 500  # 10 %
    assert nodes_to_score(500, 10) == 100  # never fewer than 100
    assert nodes_to_score(500, 100) == 500


def test_a_first_fit_decision_without_scores_stops_at_the_first_node_that_fits() -> None:
    cluster = _Cluster(unscored=True)
    state = cluster.state
    state.verdicts = Verdicts()
    pending = cluster.new_pod(1)
    decision = decide_pod(pending, state, settings())
    assert isinstance(decision, Placement) and decision.node == "n0"
    entry = state.claims.get(ObjectKey(NS, "p1-gpu"))
    assert entry is not None
    shape = shape_of([entry.obj], FirstFit(), settings().budget)
    assert state.verdicts.get("n0", shape) == Fits(0.0)
    assert state.verdicts.get("n1", shape) is None  # never asked


def test_a_node_label_change_is_seen_through_a_slice_selecting_nodes() -> None:
    """Full nodes, then a slice for nodes labelled zone=a: labelling n2 makes it fit."""
    events: list[tuple[Any, ...]] = [("pod", 2)] * 4 + [("pod", 1), ("shared", 2), ("pod", 1)]
    events += [("label", 2, True), ("pod", 1)]
    _run(events, settings(), dataclasses.replace(settings(), policy=EveryNode()))


def test_a_scored_decision_starts_where_the_previous_one_stopped() -> None:
    """Upstream's `nextStartNodeIndex` over 150 nodes, 100 of them scored per decision: each
    walk starts where the previous stopped and wraps around, with verdicts as without."""
    seen = []
    for verdicts in (Verdicts(), None):
        cluster = _Cluster(nodes=150)
        state = cluster.state
        state.verdicts = verdicts
        scored = dataclasses.replace(settings(), policy=BinPack())
        starts, nodes = [], []
        for _ in range(3):
            decision = decide_pod(cluster.new_pod(1), state, scored)
            assert isinstance(decision, Placement)
            (write,) = decision.claims
            assert write.allocation is not None
            state.ledger.reserve(write.uid, write.allocation)
            starts.append(state.score_start)
            nodes.append(decision.node)
        seen.append((starts, nodes))
    assert seen[0] == seen[1]
    assert seen[0][0] == [100, 50, 0]
