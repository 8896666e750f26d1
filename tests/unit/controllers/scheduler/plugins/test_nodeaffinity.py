"""NodeAffinity, upstream's TestNodeAffinity and TestNodeAffinityPriority cases."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    Code,
    NodeScore,
    PreFilterResult,
    Status,
)
from dra_operator.controllers.scheduler.plugins import nodeaffinity
from dra_operator.controllers.scheduler.plugins._args import PluginArgsError

from .builders import FakeHandle, make_node, make_pod, node_info, state

Raw = dict[str, Any]
POD = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ("node(s) didn't match Pod's node affinity/selector",),
    "NodeAffinity",
)
ENFORCED = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ("node(s) didn't match scheduler-enforced node affinity",),
    "NodeAffinity",
)
CONFLICT = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod affinity terms conflict",), "NodeAffinity"
)


def req(key: str, op: str, *values: str) -> Raw:
    return {"key": key, "operator": op, "values": list(values)}


def name_in(*names: str) -> Raw:
    return req("metadata.name", "In", *names)


def term(exprs: list[Raw] | None = None, fields: list[Raw] | None = None) -> Raw:
    raw: Raw = {}
    if exprs is not None:
        raw["matchExpressions"] = exprs
    if fields is not None:
        raw["matchFields"] = fields
    return raw


def required(*terms: Raw) -> Raw:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def affinity(node_affinity: Raw) -> Raw:
    return {"affinity": {"nodeAffinity": node_affinity}}


def preferred(*weighted: tuple[int, Raw]) -> Raw:
    return {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w, "preference": t} for w, t in weighted
        ]
    }


# (pod spec, node labels, node name, args, PreFilter (result, status) or None to skip it, Filter)
FILTER_CASES = [
    pytest.param(
        {"nodeSelector": {"foo": "bar"}}, {}, "", {}, (None, SUCCESS), POD, id="missing labels"
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar"},
        "",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="same labels",
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        "",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="node labels are superset",
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar", "baz": "blah"}},
        {"foo": "bar"},
        "",
        {},
        (None, SUCCESS),
        POD,
        id="node labels are subset",
    ),
    pytest.param(
        affinity(required(term([req("foo", "In", "bar", "value2")]))),
        {"foo": "bar"},
        "",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="Pod with matchExpressions using In operator that matches the existing node",
    ),
    pytest.param(
        affinity(required(term([req("kernel-version", "Gt", "0204")]))),
        {"kernel-version": "0206"},
        "",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="Pod with matchExpressions using Gt operator that matches the existing node",
    ),
    pytest.param(
        affinity(required(term([req("mem-type", "NotIn", "DDR", "DDR2")]))),
        {"mem-type": "DDR3"},
        "",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="Pod with matchExpressions using NotIn operator that matches the existing node",
    ),
    pytest.param(
        affinity(required(term([req("GPU", "Exists")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="Pod with matchExpressions using Exists operator that matches the existing node",
    ),
    pytest.param(
        affinity(required(term([req("foo", "In", "value1", "value2")]))),
        {"foo": "bar"},
        "",
        {},
        (None, SUCCESS),
        POD,
        id="Pod with affinity that don't match node's labels won't schedule onto the node",
    ),
    pytest.param(
        affinity(required(term([]))),
        {"foo": "bar"},
        "",
        {},
        (None, SUCCESS),
        POD,
        id="Pod with empty MatchExpressions is not a valid value will match no objects and"
        " won't schedule onto the node",
    ),
    pytest.param(
        {},
        {"foo": "bar"},
        "",
        {},
        (None, SKIP),
        SUCCESS,
        id="Pod with no Affinity will schedule onto a node",
    ),
    pytest.param(
        affinity({}),
        {"foo": "bar"},
        "",
        {},
        (None, SKIP),
        SUCCESS,
        id="Pod with Affinity but nil NodeSelector will schedule onto a node",
    ),
    pytest.param(
        affinity(required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="Pod with multiple matchExpressions ANDed that matches the existing node",
    ),
    pytest.param(
        affinity(required(term([req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        {},
        (None, SUCCESS),
        POD,
        id="Pod with multiple matchExpressions ANDed that doesn't match the existing node",
    ),
    pytest.param(
        affinity(
            required(
                term([req("foo", "In", "bar", "value2")]),
                term([req("diffkey", "In", "wrong", "value2")]),
            )
        ),
        {"foo": "bar"},
        "",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and"
        " will schedule onto the node",
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}, **affinity(required(term([req("foo", "Exists")])))},
        {"foo": "bar"},
        "",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating)"
        " both are satisfied, will schedule onto the node",
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}, **affinity(required(term([req("foo", "Exists")])))},
        {"foo": "barrrrrr"},
        "",
        {},
        (None, SUCCESS),
        POD,
        id="Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing"
        " that we are deprecating) is not satisfied, won't schedule onto the node",
    ),
    pytest.param(
        affinity(required(term([req("foo", "NotIn", "invalid value: ___@#$%^")]))),
        {"foo": "bar"},
        "",
        {},
        (None, SUCCESS),
        POD,
        id="Pod with an invalid value in Affinity term won't be scheduled onto the node",
    ),
    pytest.param(
        affinity(required(term(fields=[name_in("node1")]))),
        {},
        "node1",
        {},
        (PreFilterResult(frozenset({"node1"})), SUCCESS),
        SUCCESS,
        id="Pod with matchFields using In operator that matches the existing node",
    ),
    pytest.param(
        affinity(required(term(fields=[name_in("node1")]))),
        {},
        "node2",
        {},
        (PreFilterResult(frozenset({"node1"})), SUCCESS),
        POD,
        id="Pod with matchFields using In operator that does not match the existing node",
    ),
    pytest.param(
        affinity(
            required(
                term(fields=[name_in("node1"), name_in("node2")]),
                term([req("foo", "In", "bar")]),
            )
        ),
        {"foo": "bar"},
        "node2",
        {},
        (None, SUCCESS),
        SUCCESS,
        id="Pod with two terms: matchFields does not match, but matchExpressions matches",
    ),
    pytest.param(
        affinity(required(term([req("foo", "In", "bar")], [name_in("node1")]))),
        {"foo": "bar"},
        "node2",
        {},
        (PreFilterResult(frozenset({"node1"})), SUCCESS),
        POD,
        id="Pod with one term: matchFields does not match, but matchExpressions matches",
    ),
    pytest.param(
        affinity(required(term([req("foo", "In", "bar")], [name_in("node1")]))),
        {"foo": "bar"},
        "node1",
        {},
        (PreFilterResult(frozenset({"node1"})), SUCCESS),
        SUCCESS,
        id="Pod with one term: both matchFields and matchExpressions match",
    ),
    pytest.param(
        affinity(
            required(term(fields=[name_in("node1")]), term([req("foo", "In", "not-match-to-bar")]))
        ),
        {"foo": "bar"},
        "node2",
        {},
        (None, SUCCESS),
        POD,
        id="Pod with two terms: both matchFields and matchExpressions do not match",
    ),
    pytest.param(
        affinity(required(term(fields=[name_in("node1")]), term(fields=[name_in("node2")]))),
        {},
        "node2",
        {},
        (PreFilterResult(frozenset({"node1", "node2"})), SUCCESS),
        SUCCESS,
        id="Pod with two terms of node.Name affinity",
    ),
    pytest.param(
        affinity(required(term(fields=[name_in("node1"), name_in("node2")]))),
        {"foo": "bar"},
        "node2",
        {},
        (None, CONFLICT),
        POD,
        id="Pod with two conflicting mach field requirements",
    ),
    pytest.param(
        affinity(required(term([req("zone", "In", "foo")]))),
        {"zone": "foo"},
        "node2",
        {"addedAffinity": required(term(fields=[name_in("node2")]))},
        (None, SUCCESS),
        SUCCESS,
        id="Matches added affinity and Pod's node affinity",
    ),
    pytest.param(
        affinity(required(term([req("zone", "In", "bar")]))),
        {"zone": "foo"},
        "node2",
        {"addedAffinity": required(term(fields=[name_in("node2")]))},
        (None, SUCCESS),
        POD,
        id="Matches added affinity but not Pod's node affinity",
    ),
    pytest.param(
        {},
        {"zone": "foo"},
        "node2",
        {"addedAffinity": required(term([req("zone", "In", "bar")]))},
        (None, SUCCESS),
        ENFORCED,
        id="Doesn't match added affinity",
    ),
    pytest.param(
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        "",
        {},
        None,
        SUCCESS,
        id="Matches node selector correctly even if PreFilter is not called",
    ),
    pytest.param(
        affinity(required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        {},
        None,
        SUCCESS,
        id="Matches node affinity correctly even if PreFilter is not called",
    ),
]


@pytest.mark.parametrize(
    ("spec", "labels", "node_name", "args", "want_pre_filter", "want"), FILTER_CASES
)
def test_filter(
    spec: Raw,
    labels: dict[str, str],
    node_name: str,
    args: Raw,
    want_pre_filter: tuple[PreFilterResult | None, Status] | None,
    want: Status,
) -> None:
    plugin = nodeaffinity.new(args, FakeHandle())
    pod = make_pod(**spec)
    cycle = state()
    if want_pre_filter is not None:
        assert plugin.pre_filter(cycle, pod, []) == want_pre_filter
    node = node_info(make_node(node_name, labels=labels))
    assert plugin.filter(cycle, pod, node) == want


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = preferred((2, term([req("foo", "In", "bar")])))
AFFINITY2 = preferred(
    (2, term([req("foo", "In", "bar")])),
    (4, term([req("key", "In", "value")])),
    (5, term([req("foo", "In", "bar"), req("key", "In", "value"), req("az", "In", "az1")])),
)

# (pod spec, nodes, args, run PreScore, its status, normalized scores)
SCORE_CASES = [
    pytest.param(
        {},
        {"node1": LABEL1, "node2": LABEL2, "node3": LABEL3},
        {},
        False,
        None,
        {"node1": 0, "node2": 0, "node3": 0},
        id="all nodes are same priority as NodeAffinity is nil",
    ),
    pytest.param(
        {},
        {"node1": LABEL1},
        {},
        True,
        SKIP,
        None,
        id="Skip is returned in PreScore when NodeAffinity is nil",
    ),
    pytest.param(
        affinity(preferred((2, term([req("invalid key", "In", "bar")])))),
        {"node1": LABEL1},
        {},
        True,
        Code.ERROR,
        None,
        id="PreScore returns error when an incoming Pod has a broken affinity",
    ),
    pytest.param(
        affinity(AFFINITY1),
        {"node1": LABEL4, "node2": LABEL2, "node3": LABEL3},
        {},
        True,
        SUCCESS,
        {"node1": 0, "node2": 0, "node3": 0},
        id="no node matches preferred scheduling requirements in NodeAffinity of pod so all"
        " nodes' priority is zero",
    ),
    pytest.param(
        affinity(AFFINITY1),
        {"node1": LABEL1, "node2": LABEL2, "node3": LABEL3},
        {},
        True,
        SUCCESS,
        {"node1": 100, "node2": 0, "node3": 0},
        id="only node1 matches the preferred scheduling requirements of pod",
    ),
    pytest.param(
        affinity(AFFINITY2),
        {"node1": LABEL1, "node5": LABEL5, "node2": LABEL2},
        {},
        True,
        SUCCESS,
        {"node1": 18, "node5": 100, "node2": 36},
        id="all nodes matches the preferred scheduling requirements of pod but with different"
        " priorities ",
    ),
    pytest.param(
        {},
        {"node1": LABEL1, "node2": LABEL2},
        {"addedAffinity": AFFINITY1},
        True,
        SUCCESS,
        {"node1": 100, "node2": 0},
        id="added affinity",
    ),
    pytest.param(
        affinity(AFFINITY1),
        {"node1": LABEL1, "node2": LABEL2, "node3": LABEL5},
        {"addedAffinity": preferred((3, term([req("key", "In", "value")])))},
        True,
        SUCCESS,
        {"node1": 40, "node2": 60, "node3": 100},
        id="added affinity and pod has default affinity",
    ),
    pytest.param(
        affinity(AFFINITY2),
        {"node1": LABEL1, "node5": LABEL5, "node2": LABEL2},
        {},
        False,
        None,
        {"node1": 18, "node5": 100, "node2": 36},
        id="calculate the priorities correctly even if PreScore is not called",
    ),
]


@pytest.mark.parametrize(
    ("spec", "nodes", "args", "run_pre_score", "want_pre_score", "expected"), SCORE_CASES
)
def test_score(
    spec: Raw,
    nodes: dict[str, dict[str, str]],
    args: Raw,
    run_pre_score: bool,
    want_pre_score: Status | Code | None,
    expected: dict[str, int] | None,
) -> None:
    plugin = nodeaffinity.new(args, FakeHandle())
    pod = make_pod(**spec)
    infos = [node_info(make_node(name, labels=labels)) for name, labels in nodes.items()]
    cycle = state()
    if run_pre_score:
        status = plugin.pre_score(cycle, pod, infos)
        if isinstance(want_pre_score, Code):
            assert status.code is want_pre_score
            assert "invalid node selector requirement" in status.reasons[0]
        else:
            assert status == want_pre_score
        if not status.ok:
            return
    scores = []
    for info in infos:
        score, status = plugin.score(cycle, pod, info)
        assert status == SUCCESS
        scores.append(NodeScore(info.name, score))
    assert plugin.normalize_score(cycle, pod, scores) == SUCCESS
    assert {s.name: s.score for s in scores} == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"addedAffinity": required(term([req("zone", "Bogus", "a")]))},
            "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".nodeSelectorTerms[0]: invalid node selector requirement",
            id="invalid added required term",
        ),
        pytest.param(
            {"addedAffinity": preferred((1, term([req("bad key", "In", "a")])))},
            "args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference:"
            " invalid node selector requirement",
            id="invalid added preferred term",
        ),
        pytest.param({"added": {}}, "args: unknown field(s) added", id="unknown field"),
    ],
)
def test_invalid_args_fail_the_factory(args: Raw, message: str) -> None:
    with pytest.raises(PluginArgsError, match="^" + re.escape(message)):
        nodeaffinity.new(args, FakeHandle())
