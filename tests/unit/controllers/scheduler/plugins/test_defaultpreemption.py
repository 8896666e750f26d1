"""DefaultPreemption: upstream's TestPostFilter, TestSelectBestCandidate and
TestPodEligibleToPreemptOthers cases (kube-scheduler v1.37.2,
pkg/scheduler/framework/plugins/defaultpreemption), with NodeResourcesFit as the Filter."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    Framework,
    FrameworkHandle,
    NodeToStatus,
    PostFilterResult,
    Profile,
    Snapshot,
    Status,
)
from dra_operator.controllers.scheduler.plugins import IN_TREE, PluginArgsError
from dra_operator.controllers.scheduler.plugins.defaultpreemption import (
    DefaultPreemption,
    chosen_candidate,
    parse_args,
)
from dra_operator.model import (
    Node,
    Pod,
    PodDisruptionBudget,
    parse_pod,
    parse_pod_disruption_budget,
)

from .builders import container, make_node, node_info

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def pod(
    name: str,
    *,
    node: str = "",
    priority: int | None = None,
    req: Mapping[str, str] | None = None,
    started: int | None = None,
    labels: Mapping[str, str] | None = None,
    status: Mapping[str, Any] | None = None,
    deleting: bool = False,
    **spec: Any,
) -> Pod:
    """A pod in namespace default; `started`: its startTime in seconds after the epoch."""
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    raw_status: dict[str, Any] = dict(status or {})
    if started is not None:
        raw_status["startTime"] = (EPOCH + datetime.timedelta(seconds=started)).isoformat()
    raw_spec = {"containers": [container(requests=req)], **spec}
    return parse_pod({"metadata": meta, "spec": raw_spec, "status": raw_status})


def node(name: str, capacity: Mapping[str, str]) -> Node:
    return make_node(name, allocatable={"pods": "32", **capacity})


def framework(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    budgets: Sequence[PodDisruptionBudget] = (),
    args: Mapping[str, object] | None = None,
) -> tuple[Framework, DefaultPreemption, Snapshot]:
    profile = Profile(
        scheduler_name="default-scheduler",
        multi_point=("NodeResourcesFit", "DefaultPreemption"),
    )
    handle = FrameworkHandle(pod_disruption_budgets=lambda: budgets)
    fw = Framework(profile, IN_TREE, handle=handle)
    plugin = fw.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    if args is not None:
        plugin.args = parse_args(args)
    plugin.offset = lambda n: 0
    infos = [node_info(n, [p for p in pods if p.spec.node_name == n.name]) for n in nodes]
    snapshot = Snapshot(infos)
    fw.start_cycle(snapshot)
    return fw, plugin, snapshot


def statuses(snapshot: Snapshot, explicit: Mapping[str, Code], reason: str = "") -> NodeToStatus:
    out = NodeToStatus([n.name for n in snapshot])
    for name, code in explicit.items():
        out.explicit[name] = Status(code, (reason,) if reason else ())
    return out


def post_filter(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    preemptor: Pod,
    explicit: Mapping[str, Code],
    budgets: Sequence[PodDisruptionBudget] = (),
) -> tuple[PostFilterResult | None, Status, CycleState]:
    fw, plugin, snapshot = framework(nodes, pods, budgets)
    state = CycleState()
    fw.run_pre_filter(state, preemptor, snapshot.node_infos)
    result, status = plugin.post_filter(state, preemptor, statuses(snapshot, explicit))
    return result, status, state


U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def found(node_name: str, victims: int) -> str:
    return (
        f"preemption: found a potential placement for pod on node {node_name}, "
        f"preempting {victims} victims"
    )


def budget(name: str, label: str, allowed: int) -> PodDisruptionBudget:
    return parse_pod_disruption_budget(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"pdb": label}}},
            "status": {"disruptionsAllowed": allowed},
        }
    )


POST_FILTER_CASES = [
    pytest.param(
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        pod("p", priority=HIGH),
        {"node1": U},
        "node1",
        (Code.SUCCESS, found("node1", 1)),
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        pod("p"),
        {"node1": U},
        "",
        (U, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
        id="pod with tied priority is still unschedulable",
    ),
    pytest.param(
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        pod("p", priority=HIGH),
        {"node1": UU},
        "",
        (U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
        id="preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        pod("p", priority=HIGH),
        {},
        "",
        (U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
        id="absent NodeToStatus entry means UnschedulableAndUnresolvable",
    ),
    pytest.param(
        [pod("p1", node="node1", priority=HIGH), pod("p2", node="node2", priority=LOW)],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        pod("p", priority=MID),
        {"node1": U, "node2": U},
        "node2",
        (Code.SUCCESS, found("node2", 1)),
        id="pod can be made schedulable on one node",
    ),
    pytest.param(
        [
            pod("p1", node="node1", priority=HIGH, labels={"pdb": "non-violating"}),
            pod("p2", node="node1", priority=LOW, labels={"pdb": "violating"}),
            pod("p3", node="node2", priority=MID, labels={"pdb": "violating"}),
        ],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        pod("p", priority=VERY_HIGH),
        {"node1": U, "node2": U},
        "node2",
        (Code.SUCCESS, found("node2", 1)),
        id="pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        [pod("p1", node="node1"), pod("p2", node="node2")],
        [node("node1", SMALL), node("node2", SMALL)],
        pod("p", priority=HIGH, req=LARGE),
        {"node1": U, "node2": U},
        "",
        (U, "preemption: 0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory."),
        id="no candidate nodes found, not enough resource after removing low priority pods",
    ),
    pytest.param(
        [
            pod("p1", node="node1", priority=HIGH),
            pod("p2", node="node2"),
            pod("p3", node="node3", priority=HIGH),
        ],
        [node("node1", ONE_POD), node("node2", SMALL), node("node3", ONE_POD)],
        pod("p", priority=HIGH, req=LARGE),
        {"node1": U, "node2": U, "node3": U},
        "",
        (
            U,
            "preemption: 0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory,"
            " 2 No preemption victims found for incoming pod.",
        ),
        id="no candidate nodes found with mixed reasons",
    ),
    pytest.param(
        [pod("p1", node="node1"), pod("p2", node="node2")],
        [node(f"node{i}", SMALL) for i in range(1, 5)],
        pod("p", priority=HIGH, req=LARGE),
        {"node1": U, "node2": U, "node4": UU},
        "",
        (
            U,
            "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Insufficient memory,"
            " 2 Preemption is not helpful for scheduling.",
        ),
        id="2 unresolvable nodes and 2 nodes without enough cpu",
    ),
]


@pytest.mark.parametrize(
    ("pods", "nodes", "preemptor", "explicit", "nominated", "want"), POST_FILTER_CASES
)
def test_post_filter(
    pods: list[Pod],
    nodes: list[Node],
    preemptor: Pod,
    explicit: dict[str, Code],
    nominated: str,
    want: tuple[Code, str],
) -> None:
    budgets = [
        budget("violating-pdb", "violating", 0),
        budget("ok-pdb", "non-violating", 2**31 - 1),
    ]
    result, status, state = post_filter(nodes, pods, preemptor, explicit, budgets)
    assert (status.code, status.reasons) == (want[0], (want[1],))
    assert result == PostFilterResult(nominated)
    chosen = chosen_candidate(state)
    assert (chosen.node if chosen else "") == nominated


SELECT_BEST_CASES = [
    pytest.param(
        [
            pod("p1.1", node="node1", priority=MID, req=MEDIUM, started=0),
            pod("p1.2", node="node1", priority=MID, req=LARGE, started=0),
            pod("p2.1", node="node2", priority=MID, req=MEDIUM, started=0),
            pod("p2.2", node="node2", priority=LOW, req=MEDIUM, started=0),
            pod("p3.1", node="node3", priority=LOW, req=MEDIUM, started=0),
            pod("p3.2", node="node3", priority=LOW, req=MEDIUM, started=0),
        ],
        VERY_LARGE,
        "node3",
        id="node with min highest priority pod is picked",
    ),
    pytest.param(
        [
            pod("p1.1", node="node1", priority=MID, req=MEDIUM, started=0),
            pod("p1.2", node="node1", priority=MID, req=LARGE, started=0),
            pod("p2.1", node="node2", priority=MID, req=LARGE, started=0),
            pod("p2.2", node="node2", priority=LOW, req=MEDIUM, started=0),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, started=0),
            pod("p3.2", node="node3", priority=MID, req=MEDIUM, started=0),
        ],
        VERY_LARGE,
        "node2",
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        [
            pod("p1.1", node="node1", priority=MID, req=SMALL, started=0),
            pod("p1.2", node="node1", priority=NEG, req=SMALL, started=0),
            pod("p1.3", node="node1", priority=MID, req=SMALL, started=0),
            pod("p1.4", node="node1", priority=NEG, req=SMALL, started=0),
            pod("p2.1", node="node2", priority=MID, req=LARGE, started=0),
            pod("p2.2", node="node2", priority=NEG, req=MEDIUM, started=0),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, started=0),
            pod("p3.2", node="node3", priority=NEG, req=SMALL, started=0),
            pod("p3.3", node="node3", priority=LOW, req=SMALL, started=0),
        ],
        VERY_LARGE,
        "node2",
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        [
            pod("p1.1", node="node1", priority=MID, req=SMALL, started=0),
            pod("p1.2", node="node1", priority=NEG, req=SMALL, started=0),
            pod("p1.3", node="node1", priority=NEG, req=SMALL, started=0),
            pod("p2.1", node="node2", priority=MID, req=LARGE, started=0),
            pod("p2.2", node="node2", priority=NEG, req=MEDIUM, started=0),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, started=0),
            pod("p3.2", node="node3", priority=NEG, req=SMALL, started=0),
            pod("p3.3", node="node3", priority=LOW, req=SMALL, started=0),
        ],
        VERY_LARGE,
        "node2",
        id="sum of adjusted priorities is considered",
    ),
    pytest.param(
        [
            pod("p1.1", node="node1", priority=MID, req=MEDIUM, started=2),
            pod("p1.2", node="node1", priority=MID, req=MEDIUM, started=2),
            pod("p2.1", node="node2", priority=MID, req=MEDIUM, started=3),
            pod("p2.2", node="node2", priority=MID, req=MEDIUM, started=3),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, started=1),
            pod("p3.2", node="node3", priority=MID, req=MEDIUM, started=1),
        ],
        VERY_LARGE,
        "node2",
        id="same priority, same number of victims, different start time for each node's pod",
    ),
]


@pytest.mark.parametrize(("pods", "request_", "want"), SELECT_BEST_CASES)
def test_select_best_candidate(pods: list[Pod], request_: dict[str, str], want: str) -> None:
    nodes = [node(f"node{i}", VERY_LARGE) for i in range(1, 4)]
    preemptor = pod("p", priority=HIGH, req=request_)
    result, status, _ = post_filter(nodes, pods, preemptor, {n.name: U for n in nodes})
    assert status.code is Code.SUCCESS
    assert result == PostFilterResult(want)


def test_victims_are_the_fewest_lowest_and_budget_breakers_are_spared_first() -> None:
    pods = [
        pod("a", node="n", priority=LOW, req=MEDIUM, labels={"pdb": "violating"}, started=1),
        pod("b", node="n", priority=LOW, req=MEDIUM, started=2),
        pod("d", node="n", priority=HIGH, req=SMALL, started=0),
    ]
    nodes = [node("n", VERY_LARGE)]
    budgets = [budget("strict", "violating", 0)]
    # 500m; the preemptor needs 200m beside d (100m): one of a or b must go; a breaks a budget,
    # so it is spared first, and b goes even though a started earlier.
    result, status, state = post_filter(
        nodes, pods, pod("p", priority=HIGH, req=MEDIUM), {"n": U}, budgets
    )
    assert status.ok and result == PostFilterResult("n")
    chosen = chosen_candidate(state)
    assert chosen is not None
    assert [v.metadata.name for v in chosen.victims] == ["b"]
    assert chosen.num_pdb_violations == 0
    # with room for neither, both go, the budget breaker is counted and victims come
    # most important first.
    _, status, state = post_filter(
        nodes, pods, pod("p", priority=HIGH, req=LARGE), {"n": U}, budgets
    )
    assert status.ok
    chosen = chosen_candidate(state)
    assert chosen is not None
    assert [v.metadata.name for v in chosen.victims] == ["a", "b"]
    assert chosen.num_pdb_violations == 1


def test_a_pod_already_charged_to_a_budget_does_not_break_it() -> None:
    charged = parse_pod_disruption_budget(
        {
            "metadata": {"name": "b", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"pdb": "violating"}}},
            "status": {"disruptionsAllowed": 0, "disruptedPods": {"a": "2026-01-01T00:00:00Z"}},
        }
    )
    pods = [pod("a", node="n", priority=LOW, req=LARGE, labels={"pdb": "violating"})]
    _, status, state = post_filter(
        [node("n", LARGE)], pods, pod("p", priority=HIGH, req=LARGE), {"n": U}, [charged]
    )
    chosen = chosen_candidate(state)
    assert status.ok and chosen is not None and chosen.num_pdb_violations == 0


_PREEMPTED = {
    "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    ]
}

ELIGIBLE_CASES = [
    pytest.param(
        pod("p_with_nominated_node", priority=HIGH, status={"nominatedNodeName": "node1"}),
        [pod("p1", node="node1", priority=LOW, deleting=True)],
        UU,
        "",
        id="Pod with nominated node",
    ),
    pytest.param(
        pod("p_without_nominated_node", priority=HIGH),
        [],
        Code.SUCCESS,
        "",
        id="Pod without nominated node",
    ),
    pytest.param(
        pod("p_with_preempt_never_policy", priority=HIGH, preemptionPolicy="Never"),
        [],
        Code.SUCCESS,
        "not eligible due to preemptionPolicy=Never.",
        id="Pod with 'PreemptNever' preemption policy",
    ),
    pytest.param(
        pod("p_with_nominated_node", priority=HIGH, status={"nominatedNodeName": "node1"}),
        [pod("p1", node="node1", priority=LOW, deleting=True, status=_PREEMPTED)],
        Code.SUCCESS,
        "not eligible due to a terminating pod on the nominated node.",
        id="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget"
        " condition",
    ),
    pytest.param(
        pod("p_with_nominated_node", priority=HIGH, status={"nominatedNodeName": "node1"}),
        [pod("p1", node="node1", priority=LOW, deleting=True)],
        Code.SUCCESS,
        "",
        id="non-victim Pods terminating",
    ),
]


@pytest.mark.parametrize(("preemptor", "pods", "nominated_code", "want"), ELIGIBLE_CASES)
def test_pod_eligible_to_preempt_others(
    preemptor: Pod, pods: list[Pod], nominated_code: Code, want: str
) -> None:
    _, plugin, _ = framework([node("node1", ONE_POD)], pods)
    assert plugin.eligible(preemptor, Status(nominated_code)) == want


def test_a_terminating_victim_of_equal_priority_does_not_stop_a_new_preemption() -> None:
    preemptor = pod("p", priority=HIGH, status={"nominatedNodeName": "node1"})
    pods = [pod("p1", node="node1", priority=HIGH, deleting=True, status=_PREEMPTED)]
    _, plugin, _ = framework([node("node1", ONE_POD)], pods)
    assert plugin.eligible(preemptor, Status(U)) == ""


def _app_foo_budget() -> PodDisruptionBudget:
    return parse_pod_disruption_budget(
        {
            "metadata": {"name": "pdb", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "foo"}}},
            "status": {"disruptionsAllowed": 0},
        }
    )


SELECT_VICTIMS_CASES = [
    pytest.param(
        [pod("victim", node="node1", priority=LOW, req=LARGE)],
        (),
        {"victim"},
        0,
        id="Basic: Preempt single lower priority pod",
    ),
    pytest.param(
        [
            pod("high-prio", node="node1", priority=HIGH, req=SMALL),
            pod("mid-prio", node="node1", priority=MID, req=SMALL),
            pod("low-prio", node="node1", priority=LOW, req=SMALL),
        ],
        (),
        {"low-prio"},
        0,
        id="Priority: Prefer lower priority victim",
    ),
    pytest.param(
        [
            pod("victim-pdb", node="node1", labels={"app": "foo"}, priority=LOW, req=MEDIUM),
            pod("victim-no-pdb", node="node1", priority=MID, req=MEDIUM),
        ],
        (_app_foo_budget(),),
        {"victim-no-pdb"},
        0,
        id="PDB: Prefer non-violating victim with higher priority over violating victim with"
        " lower priority",
    ),
    pytest.param(
        [
            pod("v1", node="node1", labels={"app": "foo"}, priority=LOW, req=MEDIUM),
            pod("v2", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
        ],
        (_app_foo_budget(),),
        {"v1"},
        1,
        id="PDB: Prefer lower prioirity pod for preemption, when preemption without pdb"
        " violation is not possible",
    ),
]


@pytest.mark.parametrize(("pods", "budgets", "want", "violations"), SELECT_VICTIMS_CASES)
def test_select_victims_on_node(
    pods: list[Pod], budgets: tuple[PodDisruptionBudget, ...], want: set[str], violations: int
) -> None:
    preemptor = pod("p", priority=HIGH, req=LARGE)
    _, status, state = post_filter(
        [node("node1", VERY_LARGE)], pods, preemptor, {"node1": U}, budgets
    )
    chosen = chosen_candidate(state)
    assert status.ok and chosen is not None
    assert {v.metadata.name for v in chosen.victims} == want
    assert chosen.num_pdb_violations == violations


@pytest.mark.parametrize(
    ("args", "nodes", "want"),
    [
        ({}, 10, 10),
        ({}, 1000, 100),
        ({}, 2000, 200),
        ({"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 0}, 9, 4),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 3}, 9, 3),
    ],
)
def test_num_candidates(args: dict[str, object], nodes: int, want: int) -> None:
    plugin = DefaultPreemption(parse_args(args), FrameworkHandle())
    assert plugin.num_candidates(nodes) == want


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ({"minCandidateNodesPercentage": 101}, "not in valid range [0, 100]"),
        ({"minCandidateNodesAbsolute": -1}, "not in valid range [0, inf)"),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "cannot be zero at the same time as minCandidateNodesAbsolute",
        ),
        ({"other": 1}, "unknown field(s) other"),
    ],
)
def test_invalid_args(args: dict[str, object], text: str) -> None:
    with pytest.raises(PluginArgsError) as raised:
        parse_args(args)
    assert text in str(raised.value)


def test_search_starts_at_the_offset_and_stops_at_enough_candidates() -> None:
    nodes = [node(f"node{i}", ONE_POD) for i in range(1, 6)]
    pods = [pod(f"v{i}", node=f"node{i}", priority=LOW, started=i) for i in range(1, 6)]
    fw, plugin, snapshot = framework(nodes, pods, args={"minCandidateNodesAbsolute": 2})
    plugin.offset = lambda n: 3
    state = CycleState()
    fw.run_pre_filter(state, pods[0], snapshot.node_infos)
    preemptor = pod("p", priority=HIGH)
    result, _ = plugin.post_filter(state, preemptor, statuses(snapshot, {n.name: U for n in nodes}))
    # node4 and node5 are tried (offset 3): node5's victim started later, so node5 wins.
    assert result == PostFilterResult("node5")


def test_a_node_missing_from_a_plain_status_map_counts_as_unresolvable() -> None:
    nodes = [node("node1", ONE_POD), node("node2", ONE_POD)]
    pods = [pod("p1", node="node1"), pod("p2", node="node2")]
    fw, plugin, snapshot = framework(nodes, pods)
    state = CycleState()
    preemptor = pod("p", priority=HIGH)
    fw.run_pre_filter(state, preemptor, snapshot.node_infos)
    result, status = plugin.post_filter(state, preemptor, {"node2": Status(U)})
    assert status.ok and result == PostFilterResult("node2")


def test_victims_not_started_are_ordered_by_their_place_on_the_node() -> None:
    """Upstream reads `time.Now()` for each victim without a start time as it builds them in
    the node's order, so the earlier one on the node is the more important, also in the sort
    that merges the budget-breaking victims with the others (found by the oracle comparison)."""
    pods = [
        pod("first", node="node1", priority=LOW, req=MEDIUM),
        pod("second", node="node1", priority=LOW, req=MEDIUM, labels={"pdb": "x"}),
        pod("started", node="node1", priority=LOW, req=SMALL, started=60),
    ]
    preemptor = pod("p", priority=HIGH, req=VERY_LARGE)
    _, status, state = post_filter(
        [node("node1", VERY_LARGE)], pods, preemptor, {"node1": U}, (budget("b", "x", 0),)
    )
    chosen = chosen_candidate(state)
    assert status.ok and chosen is not None
    assert [v.metadata.name for v in chosen.victims] == ["started", "first", "second"]
    assert chosen.num_pdb_violations == 1
