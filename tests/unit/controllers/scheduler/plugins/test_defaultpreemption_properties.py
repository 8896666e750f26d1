"""DefaultPreemption over random cpu/memory clusters: what upstream's algorithm guarantees.

Every victim has a lower priority than the preemptor; with the victims gone the preemptor fits
the chosen node; no victim could have been spared (giving any one back, the preemptor no longer
fits); when no node is chosen, evicting every lower-priority pod helps on no node; and the node
chosen is the best of all nodes' candidates by upstream's order (fewest budget violations,
lowest highest victim priority, lowest priority sum, fewest victims, latest start).
"""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st
from tests.support.counts import property_examples

from dra_operator.controllers.scheduler.framework import Code, CycleState, Snapshot
from dra_operator.controllers.scheduler.plugins.defaultpreemption import (
    Candidate,
    chosen_candidate,
)
from dra_operator.controllers.scheduler.plugins.defaultpreemption._victims import (
    priority,
    start_time,
)
from dra_operator.model import Node, Pod

from .builders import node_info
from .test_defaultpreemption import framework, node, pod, statuses

PRIORITIES = st.sampled_from([-10, 0, 5, 100])


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod], Pod]:
    nodes = [
        node(f"n{i}", {"cpu": f"{draw(st.integers(1, 2))}", "memory": "8Gi"})
        for i in range(draw(st.integers(1, 4)))
    ]
    pods = []
    for i in range(draw(st.integers(2, 12))):
        on = draw(st.sampled_from(nodes)).metadata.name
        cpu = draw(st.sampled_from(["250m", "500m", "1"]))
        pods.append(
            pod(
                f"p{i}",
                node=on,
                priority=draw(PRIORITIES),
                req={"cpu": cpu, "memory": "1Gi"},
                started=draw(st.integers(0, 3)),
            )
        )
    preemptor = pod(
        "x", priority=draw(PRIORITIES), req={"cpu": draw(st.sampled_from(["500m", "1", "1500m"]))}
    )
    return nodes, pods, preemptor


def _fits(nodes: list[Node], on: Node, pods: list[Pod], preemptor: Pod) -> bool:
    fw, _, _ = framework(nodes, pods)
    info = node_info(on, [p for p in pods if p.spec.node_name == on.metadata.name])
    state = CycleState()
    fw.start_cycle(Snapshot([info]))
    fw.run_pre_filter(state, preemptor, [info])
    return fw.run_filter(state, preemptor, info).ok


def _key(c: Candidate) -> tuple[int, int, int, int, float]:
    top = max(priority(v) for v in c.victims)
    latest = min(start_time(v) for v in c.victims if priority(v) == top).timestamp()
    return (
        c.num_pdb_violations,
        priority(c.victims[0]),
        sum(priority(v) + 2**31 for v in c.victims),
        len(c.victims),
        -latest,
    )


@settings(max_examples=property_examples(150), deadline=None)
@given(clusters())
def test_victims_as_upstream_chooses_them(
    cluster: tuple[list[Node], list[Pod], Pod],
) -> None:
    nodes, pods, preemptor = cluster
    fw, plugin, snapshot = framework(nodes, pods)
    state = CycleState()
    fw.run_pre_filter(state, preemptor, snapshot.node_infos)
    codes = {}
    for info in snapshot:
        if not fw.run_filter(state, preemptor, info).ok:
            codes[info.name] = Code.UNSCHEDULABLE
    if len(codes) < len(nodes):
        return  # the pod fits somewhere: PostFilter would not run
    _, status = plugin.post_filter(state, preemptor, statuses(snapshot, codes))
    chosen = chosen_candidate(state)
    event("preempted" if chosen is not None else "no candidate")
    lower = {
        n.metadata.name: [
            p
            for p in pods
            if p.spec.node_name == n.metadata.name and priority(p) < priority(preemptor)
        ]
        for n in nodes
    }
    if chosen is None:
        assert status.code is Code.UNSCHEDULABLE
        for n in nodes:
            if lower[n.metadata.name]:
                keep = [p for p in pods if p not in lower[n.metadata.name]]
                assert not _fits(nodes, n, keep, preemptor)
        return
    assert status.ok
    on = next(n for n in nodes if n.metadata.name == chosen.node)
    victims = list(chosen.victims)
    assert victims and all(priority(v) < priority(preemptor) for v in victims)
    remaining = [p for p in pods if p not in victims]
    assert _fits(nodes, on, remaining, preemptor)
    for v in victims:
        assert not _fits(nodes, on, [*remaining, v], preemptor)
    # every other node's own best victims would not be better by upstream's order
    for n in nodes:
        if n.metadata.name == chosen.node or not lower[n.metadata.name]:
            continue
        keep = [p for p in pods if p not in lower[n.metadata.name]]
        if not _fits(nodes, n, keep, preemptor):
            continue
        fw2, plugin2, snapshot2 = framework(
            [n], [p for p in pods if p.spec.node_name == n.metadata.name]
        )
        state2 = CycleState()
        fw2.run_pre_filter(state2, preemptor, snapshot2.node_infos)
        plugin2.post_filter(
            state2, preemptor, statuses(snapshot2, {n.metadata.name: Code.UNSCHEDULABLE})
        )
        other = chosen_candidate(state2)
        assert other is not None
        assert _key(chosen) <= _key(other)
