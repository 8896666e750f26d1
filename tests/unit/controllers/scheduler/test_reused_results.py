"""Filter and Score results reused per pod shape decide every pod as a framework that computes
everything anew for each decision."""

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
from dra_operator.controllers.scheduler import Placement, State, Verdicts, decide_pod
from dra_operator.model import Pod

from .builders import NS, claim, device_class, new_state, node, pod, resource_slice, settings

Raw = dict[str, Any]
_TAINTS = {
    "none": (),
    "prefer": (("dedicated", "gpu", "PreferNoSchedule"),),
    "never": (("dedicated", "gpu", "NoSchedule"),),
}
_TOLERATE = [{"key": "dedicated", "operator": "Exists"}]

# A node: CPU, devices, taint, zone label. A pod: devices, CPU, tolerates the taint, zone wanted,
# spread over the zones (maxSkew 1, DoNotSchedule, over the pods that spread).
_NODES = st.lists(
    st.tuples(
        st.integers(1, 8),
        st.integers(0, 3),
        st.sampled_from(sorted(_TAINTS)),
        st.sampled_from("ab"),
    ),
    min_size=1,
    max_size=8,
)
_PODS = st.lists(
    st.tuples(
        st.integers(1, 2),
        st.sampled_from(["100m", "1"]),
        st.booleans(),
        st.sampled_from(["", "a"]),
        st.booleans(),
    ),
    max_size=12,
)
_SPREAD = {
    "maxSkew": 1,
    "topologyKey": "zone",
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "spread"}},
}


class _Cluster:
    def __init__(self, shapes: list[tuple[int, int, str, str]]) -> None:
        self.state = new_state()
        self.state.verdicts = Verdicts()
        self.versions = itertools.count(1)
        self.pods = 0
        self._apply("classes", device_class())
        for i, (cpu, devices, taint, zone) in enumerate(shapes):
            raw = node(
                f"n{i}",
                labels={"zone": zone},
                taints=_TAINTS[taint],
                allocatable={"cpu": str(cpu), "memory": "8Gi", "pods": "110"},
            )
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

    def new_pod(self, count: int, cpu: str, tolerates: bool, zone: str, spread: bool) -> Pod:
        self.pods += 1
        name = f"p{self.pods}"
        self._apply("claims", claim(f"{name}-gpu", count=count))
        raw = pod(
            name,
            claims=[f"{name}-gpu"],
            cpu=cpu,
            tolerations=_TOLERATE if tolerates else (),
            node_selector={"zone": zone} if zone else None,
        )
        if spread:
            raw["metadata"]["labels"] = {"app": "spread"}
            raw["spec"]["topologySpreadConstraints"] = [_SPREAD]
        self._apply("pods", raw)
        entry = self.state.pods.get(ObjectKey(NS, name))
        assert entry is not None
        return entry.obj


@settings_hypothesis(max_examples=property_examples(60), deadline=None)
@given(nodes=_NODES, pods=_PODS)
def test_reused_results_decide_as_a_fresh_framework(
    nodes: list[tuple[int, int, str, str]], pods: list[tuple[int, str, bool, str, bool]]
) -> None:
    """Pods of a few shapes, placed one after the other (each placement assumed, so the nodes'
    NodeInfos change under the kept results): the live framework, which keeps results across
    decisions (PodTopologySpread's per-node counts included), decides each pod as a framework
    built for that decision alone."""
    cluster = _Cluster(nodes)
    kept = cluster.state
    for count, cpu, tolerates, zone, spread in pods:
        pending = cluster.new_pod(count, cpu, tolerates, zone, spread)
        fresh: State = dataclasses.replace(kept, framework=None)  # the default profile, anew
        expected = decide_pod(pending, fresh, settings())
        decision = decide_pod(pending, kept, settings())
        assert decision == expected
        kept.score_start = fresh.score_start
        if isinstance(decision, Placement):
            (write,) = decision.claims
            assert write.allocation is not None
            kept.ledger.reserve(write.uid, write.allocation)
            kept.node_infos.assume(pending, decision.node)
