"""TaintToleration, upstream's TestTaintTolerationScore, TestTaintTolerationFilter and
TestTaintTolerationFilterWithFeatureGate cases (the gate is the plugin's constructor flag)."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import SUCCESS, Code, NodeScore, Status
from dra_operator.controllers.scheduler.plugins import tainttoleration
from dra_operator.controllers.scheduler.plugins.tainttoleration import TaintToleration

from .builders import FakeHandle, make_node, make_pod, node_info, state

Raw = dict[str, Any]
REJECT = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",), "TaintToleration"
)
PNS, NS = "PreferNoSchedule", "NoSchedule"


def tol(key: str, value: str = "", effect: str = "", op: str = "") -> Raw:
    raw = {"key": key, "value": value, "effect": effect}
    return {**raw, "operator": op} if op else raw


def taint(key: str, value: str, effect: str) -> Raw:
    return {"key": key, "value": value, "effect": effect}


SLA = "node.kubernetes.io/sla"

SCORE_CASES = [
    pytest.param(
        [tol("foo", "bar", PNS, "Equal")],
        {"nodeA": [taint("foo", "bar", PNS)], "nodeB": [taint("foo", "blah", PNS)]},
        {"nodeA": 100, "nodeB": 0},
        False,
        id="node with taints tolerated by the pod, gets a higher score than those node with"
        " intolerable taints",
    ),
    pytest.param(
        [tol("cpu-type", "arm64", PNS, "Equal"), tol("disk-type", "ssd", PNS, "Equal")],
        {
            "nodeA": [],
            "nodeB": [taint("cpu-type", "arm64", PNS)],
            "nodeC": [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)],
        },
        {"nodeA": 100, "nodeB": 100, "nodeC": 100},
        False,
        id="the nodes that all of their taints are tolerated by the pod, get the same score,"
        " no matter how many tolerable taints a node has",
    ),
    pytest.param(
        [tol("foo", "bar", PNS, "Equal")],
        {
            "nodeA": [],
            "nodeB": [taint("cpu-type", "arm64", PNS)],
            "nodeC": [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)],
        },
        {"nodeA": 100, "nodeB": 50, "nodeC": 0},
        False,
        id="the more intolerable taints a node has, the lower score it gets.",
    ),
    pytest.param(
        [tol("cpu-type", "arm64", NS, "Equal"), tol("disk-type", "ssd", NS, "Equal")],
        {
            "nodeA": [],
            "nodeB": [taint("cpu-type", "arm64", NS)],
            "nodeC": [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)],
        },
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
        False,
        id="only taints and tolerations that have effect PreferNoSchedule are checked by"
        " taints-tolerations priority function",
    ),
    pytest.param(
        [],
        {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", PNS)]},
        {"nodeA": 100, "nodeB": 0},
        False,
        id="Default behaviour No taints and tolerations, lands on node with no taints",
    ),
    pytest.param(
        [tol(SLA, "950", PNS, "Gt")],
        {"nodeA": [taint(SLA, "800", PNS)], "nodeB": [taint(SLA, "999", PNS)]},
        {"nodeA": 0, "nodeB": 100},
        True,
        id="Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint",
    ),
    pytest.param(
        [tol(SLA, "800", PNS, "Lt")],
        {"nodeA": [taint(SLA, "950", PNS)], "nodeB": [taint(SLA, "700", PNS)]},
        {"nodeA": 0, "nodeB": 100},
        True,
        id="Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint",
    ),
]


@pytest.mark.parametrize(("tolerations", "nodes", "expected", "comparison"), SCORE_CASES)
def test_score(
    tolerations: list[Raw],
    nodes: dict[str, list[Raw]],
    expected: dict[str, int],
    comparison: bool,
) -> None:
    plugin = TaintToleration(comparison_operators=comparison)
    pod = make_pod(tolerations=tolerations)
    infos = [node_info(make_node(name, taints=taints)) for name, taints in nodes.items()]
    cycle = state()
    assert plugin.pre_score(cycle, pod, infos) == SUCCESS
    scores = []
    for info in infos:
        score, status = plugin.score(cycle, pod, info)
        assert status == SUCCESS
        scores.append(NodeScore(info.name, score))
    assert plugin.normalize_score(cycle, pod, scores) == SUCCESS
    assert {s.name: s.score for s in scores} == expected


FILTER_CASES = [
    pytest.param(
        [],
        [taint("dedicated", "user1", NS)],
        REJECT,
        False,
        id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
    ),
    pytest.param(
        [tol("dedicated", "user1", NS)],
        [taint("dedicated", "user1", NS)],
        SUCCESS,
        False,
        id="A pod which can be scheduled on a dedicated node assigned to user1 with effect"
        " NoSchedule",
    ),
    pytest.param(
        [tol("dedicated", "user2", NS, "Equal")],
        [taint("dedicated", "user1", NS)],
        REJECT,
        False,
        id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect"
        " NoSchedule",
    ),
    pytest.param(
        [tol("foo", "", NS, "Exists")],
        [taint("foo", "bar", NS)],
        SUCCESS,
        False,
        id="A pod can be scheduled onto the node, with a toleration uses operator Exists that"
        " tolerates the taints on the node",
    ),
    pytest.param(
        [tol("dedicated", "user2", NS, "Equal"), tol("foo", "", NS, "Exists")],
        [taint("dedicated", "user2", NS), taint("foo", "bar", NS)],
        SUCCESS,
        False,
        id="A pod has multiple tolerations, node has multiple taints, all the taints are"
        " tolerated, pod can be scheduled onto the node",
    ),
    pytest.param(
        [tol("foo", "bar", PNS, "Equal")],
        [taint("foo", "bar", NS)],
        REJECT,
        False,
        id="A pod has a toleration that keys and values match the taint on the node, but"
        " (non-empty) effect doesn't match, can't be scheduled onto the node",
    ),
    pytest.param(
        [tol("foo", "bar", "", "Equal")],
        [taint("foo", "bar", NS)],
        SUCCESS,
        False,
        id="The pod has a toleration that keys and values match the taint on the node, the"
        " effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be"
        " scheduled onto the node",
    ),
    pytest.param(
        [tol("dedicated", "user2", NS, "Equal")],
        [taint("dedicated", "user1", PNS)],
        SUCCESS,
        False,
        id="The pod has a toleration that key and value don't match the taint on the node, but"
        " the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
    ),
    pytest.param(
        [],
        [taint("dedicated", "user1", PNS)],
        SUCCESS,
        False,
        id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule."
        " Pod can be scheduled onto the node",
    ),
    pytest.param(
        [tol("node.example.com/priority-level", "950", NS, "Gt")],
        [taint("node.example.com/priority-level", "800", NS)],
        REJECT,
        True,
        id="Pod with Gt toleration cannot be scheduled on node when taint value is lower than"
        " threshold",
    ),
    pytest.param(
        [tol(SLA, "750", NS, "Gt")],
        [taint(SLA, "950", NS)],
        SUCCESS,
        True,
        id="Pod with Gt toleration can be scheduled on node when taint value is higher than"
        " threshold",
    ),
    pytest.param(
        [tol("node.example.com/priority-level", "800", NS, "Lt")],
        [taint("node.example.com/priority-level", "950", NS)],
        REJECT,
        True,
        id="Pod with Lt toleration cannot be scheduled on node when taint value is higher than"
        " threshold",
    ),
    pytest.param(
        [tol(SLA, "950", NS, "Lt")],
        [taint(SLA, "800", NS)],
        SUCCESS,
        True,
        id="Pod with Lt toleration can be scheduled on node when taint value is lower than"
        " threshold",
    ),
    pytest.param(
        [tol(SLA, "950", NS, "Gt")],
        [taint(SLA, "high", NS)],
        REJECT,
        True,
        id="Pod with Gt toleration cannot be scheduled on node with non-numeric taint value",
    ),
]

GATE_CASES = [
    pytest.param(
        [tol(SLA, "750", NS, "Gt")],
        [taint(SLA, "950", NS)],
        SUCCESS,
        True,
        id="Pod with Gt toleration can be scheduled when feature gate is enabled and taint value"
        " is higher",
    ),
    pytest.param(
        [tol(SLA, "750", NS, "Gt")],
        [taint(SLA, "950", NS)],
        REJECT,
        False,
        id="Pod with Gt toleration cannot be scheduled when feature gate is disabled",
    ),
    pytest.param(
        [tol(SLA, "950", NS, "Lt")],
        [taint(SLA, "800", NS)],
        SUCCESS,
        True,
        id="Pod with Lt toleration can be scheduled when feature gate is enabled and taint value"
        " is lower",
    ),
    pytest.param(
        [tol(SLA, "950", NS, "Lt")],
        [taint(SLA, "800", NS)],
        REJECT,
        False,
        id="Pod with Lt toleration cannot be scheduled when feature gate is disabled",
    ),
    pytest.param(
        [tol("dedicated", "user1", NS, "Equal"), tol(SLA, "750", NS, "Gt")],
        [taint("dedicated", "user1", NS)],
        SUCCESS,
        False,
        id="Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal"
        " is honored",
    ),
    pytest.param(
        [tol("dedicated", "user1", NS, "Equal"), tol(SLA, "750", NS, "Gt")],
        [taint("dedicated", "user1", NS), taint(SLA, "950", NS)],
        REJECT,
        False,
        id="Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate"
        " is disabled",
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taints", "want", "comparison"), [*FILTER_CASES, *GATE_CASES]
)
def test_filter(tolerations: list[Raw], taints: list[Raw], want: Status, comparison: bool) -> None:
    plugin = TaintToleration(comparison_operators=comparison)
    pod = make_pod(tolerations=tolerations)
    assert plugin.filter(state(), pod, node_info(make_node("nodeA", taints=taints))) == want


def test_the_registered_factory_leaves_the_alpha_gate_off() -> None:
    plugin = tainttoleration.new({}, FakeHandle())
    pod = make_pod(tolerations=[tol(SLA, "750", NS, "Gt")])
    node = node_info(make_node("nodeA", taints=[taint(SLA, "950", NS)]))
    assert plugin.filter(state(), pod, node) == REJECT
