"""Lazy allocation under the default profile: FirstFit scores every node alike, so the nodes that
pass the Filters are scored first and the allocator runs on the best ones only; placements and
FailedScheduling texts stay those of allocating on every sampled node."""

from __future__ import annotations

import copy
import dataclasses
import itertools
from typing import Any

from hypothesis import given
from hypothesis import settings as settings_hypothesis
from hypothesis import strategies as st
from tests.support.counts import property_examples

from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import (
    Decision,
    Placement,
    Rejected,
    State,
    Unschedulable,
    Verdicts,
    decide_pod,
    shape_of,
)
from dra_operator.model import Pod

from .builders import NS, claim, device_class, new_state, node, pod, resource_slice, settings
from .test_verdicts import Attempts, EveryNode

Raw = dict[str, Any]


class _Cluster:
    """Nodes with `(cpu, devices)` each; pods placed are assumed and reserved like the
    scheduler does, so later Scores see them."""

    def __init__(self, shapes: list[tuple[int, int]]) -> None:
        self.state = new_state()
        self.versions = itertools.count(1)
        self.pods = 0
        self._apply("classes", device_class())
        for i, (cpu, devices) in enumerate(shapes):
            raw = node(f"n{i}", allocatable={"cpu": str(cpu), "memory": "8Gi", "pods": "110"})
            self._apply("nodes", raw)
            entry = self.state.nodes.get(ObjectKey("", f"n{i}"))
            assert entry is not None
            self.state.node_infos.node_changed(entry.obj)
            if devices:
                self._apply("slices", resource_slice(f"n{i}", devices))

    def _apply(self, kind: str, raw: Raw) -> None:
        raw = copy.deepcopy(raw)
        raw["metadata"]["resourceVersion"] = str(next(self.versions))
        store: Any = getattr(self.state, kind)
        change = store.apply("ADDED", raw)
        if kind == "claims" and change is not None:
            self.state.ledger.observe(change)

    def new_pod(self, count: int, cpu: str) -> Pod:
        self.pods += 1
        name = f"p{self.pods}"
        self._apply("claims", claim(f"{name}-gpu", count=count))
        self._apply("pods", pod(name, claims=[f"{name}-gpu"], cpu=cpu))
        entry = self.state.pods.get(ObjectKey(NS, name))
        assert entry is not None
        return entry.obj

    def place(self, pending: Pod, decision: Decision) -> None:
        if isinstance(decision, Placement):
            (write,) = decision.claims
            assert write.allocation is not None
            self.state.ledger.reserve(write.uid, write.allocation)
            self.state.node_infos.assume(pending, decision.node)


_SHAPES = st.lists(st.tuples(st.integers(1, 8), st.integers(0, 3)), min_size=1, max_size=8)
_PODS = st.lists(st.tuples(st.integers(1, 2), st.sampled_from(["100m", "1", "3"])), max_size=12)


@settings_hypothesis(max_examples=property_examples(60), deadline=None)
@given(shapes=_SHAPES, pods=_PODS)
def test_lazy_allocation_places_as_allocating_on_every_sampled_node(
    shapes: list[tuple[int, int]], pods: list[tuple[int, str]]
) -> None:
    """Random clusters (CPU so the Scores differ, devices so some nodes pass the Filters but
    not the allocator): the lazy walk, with reused verdicts, decides every pod as the eager one
    without them, FailedScheduling texts included."""
    cluster = _Cluster(shapes)
    lazy_state = cluster.state
    lazy_state.verdicts = Verdicts()
    eager_state: State = dataclasses.replace(lazy_state, verdicts=None)
    eager = dataclasses.replace(settings(), policy=EveryNode())
    for count, cpu in pods:
        pending = cluster.new_pod(count, cpu)
        decision = decide_pod(pending, lazy_state, settings())
        assert decision == decide_pod(pending, eager_state, eager)
        cluster.place(pending, decision)


def test_the_allocator_runs_on_the_best_scored_node_and_on_when_it_fails_there() -> None:
    """n2 has the most free CPU (LeastAllocated's best) but no devices: it is asked first,
    rejected with the allocator's reason, and the next best, n1, is asked and wins; n0, which
    scores least, is never handed to the allocator."""
    cluster = _Cluster([(2, 2), (4, 2), (8, 0)])
    state = cluster.state
    state.verdicts = Verdicts()
    attempts = Attempts()
    pending = cluster.new_pod(1, "1")
    decision = decide_pod(pending, state, dataclasses.replace(settings(), metrics=attempts))
    assert isinstance(decision, Placement) and decision.node == "n1"
    assert attempts.count == 2
    entry = state.claims.get(ObjectKey(NS, "p1-gpu"))
    assert entry is not None
    shape = shape_of([entry.obj], settings().policy, settings().budget)
    missed = state.verdicts.get("n2", shape)
    assert isinstance(missed, Rejected) and "cannot allocate claim p1-gpu" in missed.reason
    assert state.verdicts.get("n0", shape) is None  # never asked


def test_no_node_fits_keeps_every_nodes_reason() -> None:
    cluster = _Cluster([(2, 1), (4, 0), (8, 1)])
    state = cluster.state
    state.verdicts = Verdicts()
    pending = cluster.new_pod(2, "1")
    lazy = decide_pod(pending, state, settings())
    eager = decide_pod(
        pending,
        dataclasses.replace(state, verdicts=None),
        dataclasses.replace(settings(), policy=EveryNode()),
    )
    assert isinstance(lazy, Unschedulable) and lazy == eager
    assert lazy.message.startswith("0/3 nodes are available:")
    assert "cannot allocate claim p1-gpu" in lazy.message
