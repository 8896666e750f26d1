"""InterPodAffinity (kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/interpodaffinity).

Upstream's table cases, ported by name: required affinity and anti-affinity on one node and on
several, existing pods' anti-affinity (symmetry), namespace selectors, PreFilter's Skip and parse
errors, AddPod/RemovePod keeping the PreFilter counts true, and the preferred-term scores.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from tests.unit.controllers.scheduler.plugins.affinity_support import (
    PREFERRED,
    REQUIRED,
    FakeHandle,
    MakeLabelSelector,
    MakePod,
    make_node,
    pod_info,
    snapshot,
)

from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    Code,
    CycleState,
    FilterPlugin,
    NodeScore,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    Status,
    unresolvable,
    unschedulable,
)
from dra_operator.controllers.scheduler.plugins import IN_TREE, interpodaffinity, podtopologyspread
from dra_operator.controllers.scheduler.plugins.interpodaffinity import (
    ERR_AFFINITY,
    ERR_ANTI_AFFINITY,
    ERR_EXISTING_ANTI_AFFINITY,
)
from dra_operator.model import Node, Pod

HOSTNAME = "kubernetes.io/hostname"
NAMESPACES = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}
AFF = unresolvable(ERR_AFFINITY)
ANTI = unschedulable(ERR_ANTI_AFFINITY)
EXISTING = unschedulable(ERR_EXISTING_ANTI_AFFINITY)


def _plugin(
    pods: Sequence[Pod],
    nodes: Sequence[Node],
    namespaces: dict[str, dict[str, str]] | None = None,
    args: dict[str, object] | None = None,
) -> tuple[interpodaffinity.InterPodAffinity, FakeHandle]:
    handle = FakeHandle(snapshot(pods, nodes), NAMESPACES if namespaces is None else namespaces)
    return interpodaffinity.new(args or {}, handle), handle


def _term(
    selector: dict[str, Any] | None,
    topology_key: str = "",
    namespaces: list[str] | None = None,
    namespace_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": topology_key}
    if selector is not None:
        term["labelSelector"] = selector
    if namespaces is not None:
        term["namespaces"] = namespaces
    if namespace_selector is not None:
        term["namespaceSelector"] = namespace_selector
    return term


def _with_terms(
    namespace: str,
    labels: dict[str, str],
    affinity: list[dict[str, Any]] | None,
    anti_affinity: list[dict[str, Any]] | None,
) -> Pod:
    """Upstream's createPodWithAffinityTerms: both parts present, each maybe without terms."""
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    return (
        MakePod()
        .namespace(namespace)
        .labels(labels)
        .affinity_raw(
            {
                "podAffinity": {req: affinity} if affinity else {},
                "podAntiAffinity": {req: anti_affinity} if anti_affinity else {},
            }
        )
        .obj()
    )


def _in(key: str, *values: str) -> dict[str, Any]:
    return MakeLabelSelector().in_(key, values).obj()


def _run_filter(
    pod: Pod, pods: Sequence[Pod], nodes: Sequence[Node], namespaces: dict[str, dict[str, str]]
) -> tuple[Status, list[Status]]:
    plugin, handle = _plugin(pods, nodes, namespaces)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, handle.snapshot.node_infos)
    if pre.code is not Code.SUCCESS:
        return pre, []
    statuses = []
    for node in nodes:
        info = handle.snapshot.get(node.name)
        assert info is not None
        statuses.append(plugin.filter(state, pod, info))
    return pre, statuses


# -- TestRequiredAffinitySingleNode ------------------------------------------------------------

_POD_LABEL = {"service": "securityscan"}
_POD_LABEL2 = {"security": "S1"}
_NODE1 = make_node("node1", {"region": "r1", "zone": "z11"})
_EXISTING = MakePod().labels(_POD_LABEL).node("node1").obj()
_BAD_VALUE = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": '
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_TEAM1 = MakeLabelSelector().in_("team", ["team1"]).obj()
_SEC = _in("service", "securityscan", "value2")
_BOTH_OPS_OK = [
    _term(MakeLabelSelector().exists("service").not_exist("wrongkey").obj(), "region"),
    _term(
        MakeLabelSelector()
        .in_("service", ["securityscan"])
        .not_in("service", ["WrongValue"])
        .obj(),
        "region",
    ),
]
_BOTH_OPS_BAD = [
    _BOTH_OPS_OK[0],
    _term(
        MakeLabelSelector()
        .in_("service", ["securityscan2"])
        .not_in("service", ["WrongValue"])
        .obj(),
        "region",
    ),
]

SINGLE_NODE = [
    pytest.param(
        MakePod().obj(),
        [],
        SKIP,
        SUCCESS,
        id="A pod that has no required pod affinity scheduling rules can schedule onto a node "
        "with no existing pods",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        [_EXISTING],
        SUCCESS,
        SUCCESS,
        id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using "
        "In operator that matches the existing pod",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL2)
        .pod_affinity_not_in("service", "region", ["securityscan3", "value3"], REQUIRED)
        .obj(),
        [_EXISTING],
        SUCCESS,
        SUCCESS,
        id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity "
        "using not in operator in labelSelector that matches the existing pod",
    ),
    pytest.param(
        _with_terms("", _POD_LABEL2, [_term(_SEC, namespaces=["DiffNameSpace"])], None),
        [MakePod().namespace("ns").label("service", "securityscan").node("node1").obj()],
        SUCCESS,
        AFF,
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL)
        .pod_affinity_in("service", "", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        [_EXISTING],
        SUCCESS,
        AFF,
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the "
        "existing pod",
    ),
    pytest.param(
        _with_terms("", _POD_LABEL2, _BOTH_OPS_OK, None),
        [_EXISTING],
        SUCCESS,
        SUCCESS,
        id="satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution ",
    ),
    pytest.param(
        _with_terms("", _POD_LABEL2, _BOTH_OPS_BAD, None),
        [_EXISTING],
        SUCCESS,
        AFF,
        id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
        "schedule onto the node because one of the matchExpression item don't match.",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        [_EXISTING],
        SUCCESS,
        SUCCESS,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        [
            MakePod()
            .node("node1")
            .labels(_POD_LABEL)
            .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
            .obj()
        ],
        SUCCESS,
        SUCCESS,
        id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the "
        "existing pod",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
        .obj(),
        [_EXISTING],
        SUCCESS,
        ANTI,
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing "
        "pod",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        [
            MakePod()
            .labels(_POD_LABEL)
            .node("node1")
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
            .obj()
        ],
        SUCCESS,
        EXISTING,
        id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity "
        "symmetry with the existing pod",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL)
        .pod_affinity_not_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        [MakePod().label("service", "securityscan").node("node2").obj()],
        SUCCESS,
        AFF,
        id="pod matches its own Label in PodAffinity and that matches the existing pod Labels",
    ),
    pytest.param(
        MakePod().labels(_POD_LABEL).obj(),
        [
            MakePod()
            .node("node1")
            .labels(_POD_LABEL)
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
            .obj()
        ],
        SUCCESS,
        EXISTING,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no "
        "AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        MakePod().labels(_POD_LABEL).obj(),
        [
            MakePod()
            .node("node1")
            .labels(_POD_LABEL)
            .pod_anti_affinity_not_in("service", "zone", ["securityscan", "value2"], REQUIRED)
            .obj()
        ],
        SKIP,
        SUCCESS,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no "
        "AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL)
        .pod_anti_affinity_exists("service", "region", REQUIRED)
        .pod_anti_affinity_exists("security", "region", REQUIRED)
        .obj(),
        [
            MakePod()
            .node("node1")
            .labels(_POD_LABEL2)
            .pod_anti_affinity_exists("security", "zone", REQUIRED)
            .obj()
        ],
        SUCCESS,
        ANTI,
        id="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity "
        "symmetry with incoming pod",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL)
        .pod_anti_affinity_exists("service", "zone", REQUIRED)
        .pod_anti_affinity_exists("security", "zone", REQUIRED)
        .obj(),
        [
            MakePod()
            .node("node1")
            .labels(_POD_LABEL2)
            .pod_anti_affinity_exists("security", "zone", REQUIRED)
            .obj()
        ],
        SUCCESS,
        ANTI,
        id="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match "
        "each other on AffinityTerms",
    ),
    pytest.param(
        MakePod().labels(_POD_LABEL2).pod_anti_affinity_exists("security", "zone", REQUIRED).obj(),
        [
            MakePod()
            .node("node1")
            .labels(_POD_LABEL)
            .pod_anti_affinity_exists("service", "zone", REQUIRED)
            .pod_anti_affinity_exists("security", "zone", REQUIRED)
            .obj()
        ],
        SUCCESS,
        EXISTING,
        id="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match "
        "each other on AffinityTerms",
    ),
    pytest.param(
        MakePod()
        .labels({"abc": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", REQUIRED)
        .pod_anti_affinity_exists("def", "zone", REQUIRED)
        .obj(),
        [
            MakePod()
            .node("node1")
            .labels({"def": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone", REQUIRED)
            .pod_anti_affinity_exists("def", "zone", REQUIRED)
            .obj()
        ],
        SUCCESS,
        ANTI,
        id="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match "
        "each other on AffinityTerms",
    ),
    pytest.param(
        MakePod()
        .labels({"def": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", REQUIRED)
        .pod_anti_affinity_exists("def", "zone", REQUIRED)
        .obj(),
        [
            MakePod()
            .node("node1")
            .labels({"abc": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone", REQUIRED)
            .pod_anti_affinity_exists("def", "zone", REQUIRED)
            .obj()
        ],
        SUCCESS,
        ANTI,
        id="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match "
        "each other on AffinityTerms",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL)
        .pod_affinity_in("service", "region", ["{{.bad-value.}}"], REQUIRED)
        .pod_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        [],
        unresolvable(_BAD_VALUE),
        None,
        id="PodAffinity fails PreFilter with an invalid affinity label syntax",
    ),
    pytest.param(
        MakePod()
        .labels(_POD_LABEL)
        .pod_affinity_in("service", "region", ["foo"], REQUIRED)
        .pod_affinity_in("service", "node", ["{{.bad-value.}}"], REQUIRED)
        .obj(),
        [],
        unresolvable(_BAD_VALUE),
        None,
        id="PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
    ),
    pytest.param(
        _with_terms("", _POD_LABEL2, [_term(_SEC, "region", namespace_selector=_TEAM1)], None),
        [MakePod().node("node1").namespace("subteam1.team1").labels(_POD_LABEL).obj()],
        SUCCESS,
        SUCCESS,
        id="affinity with NamespaceSelector",
    ),
    pytest.param(
        _with_terms("", _POD_LABEL2, [_term(_SEC, "region", namespace_selector=_TEAM1)], None),
        [MakePod().node("node1").namespace("subteam1.team2").labels(_POD_LABEL).obj()],
        SUCCESS,
        AFF,
        id="affinity with non-matching NamespaceSelector",
    ),
    pytest.param(
        _with_terms(
            "subteam1.team1", _POD_LABEL2, None, [_term(_SEC, "zone", namespace_selector=_TEAM1)]
        ),
        [MakePod().node("node1").namespace("subteam2.team1").labels(_POD_LABEL).obj()],
        SUCCESS,
        ANTI,
        id="anti-affinity with matching NamespaceSelector",
    ),
    pytest.param(
        _with_terms(
            "subteam1.team1", _POD_LABEL2, None, [_term(_SEC, "zone", namespace_selector={})]
        ),
        [MakePod().node("node1").namespace("subteam2.team1").labels(_POD_LABEL).obj()],
        SUCCESS,
        ANTI,
        id="anti-affinity with matching all NamespaceSelector",
    ),
    pytest.param(
        _with_terms(
            "subteam1.team1", _POD_LABEL2, None, [_term(_SEC, "zone", namespace_selector=_TEAM1)]
        ),
        [MakePod().node("node1").namespace("subteam1.team2").labels(_POD_LABEL).obj()],
        SUCCESS,
        SUCCESS,
        id="anti-affinity with non-matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize(("pod", "pods", "want_pre_filter", "want_filter"), SINGLE_NODE)
def test_required_affinity_single_node(
    pod: Pod, pods: list[Pod], want_pre_filter: Status, want_filter: Status | None
) -> None:
    pre, statuses = _run_filter(pod, pods, [_NODE1], NAMESPACES)
    assert (pre.code, pre.reasons) == (want_pre_filter.code, want_pre_filter.reasons)
    if pre.code is Code.SUCCESS:
        assert want_filter is not None
        assert [(s.code, s.reasons) for s in statuses] == [(want_filter.code, want_filter.reasons)]


# -- TestRequiredAffinityMultipleNodes ---------------------------------------------------------

_CHINA = {"region": "China"}
_CHINA_AZ1 = {"region": "China", "az": "az1"}
_INDIA = {"region": "India"}


def _n(name: str, **labels: str) -> Node:
    return make_node(name, labels)


def _r1(name: str, zone: str) -> Node:
    return make_node(name, {"region": "r1", "zone": zone, "hostname": name})


MULTIPLE_NODES = [
    pytest.param(
        MakePod().pod_affinity_in("foo", "region", ["bar"], REQUIRED).obj(),
        [MakePod().name("p1").node("node1").labels({"foo": "bar"}).obj()],
        [make_node("node1", _CHINA), make_node("node2", _CHINA_AZ1), make_node("node3", _INDIA)],
        SUCCESS,
        [SUCCESS, SUCCESS, AFF],
        id="A pod can be scheduled onto all the nodes that have the same topology key & label "
        "value with one of them has an existing pod that matches the affinity rules",
    ),
    pytest.param(
        MakePod()
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        [MakePod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [_n("nodeA", zone="az1", hostname="h1"), _n("nodeB", zone="az2", hostname="h2")],
        SUCCESS,
        [SUCCESS, SUCCESS],
        id="The affinity rule is to schedule all of the pods of this collection to the same zone. "
        "The first pod of the collection should not be blocked from being scheduled onto any "
        "node, even there's no existing pod that matches the rule anywhere.",
    ),
    pytest.param(
        MakePod()
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        [MakePod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [_n("nodeA", zoneLabel="az1", hostname="h1"), _n("nodeB", zoneLabel="az2", hostname="h2")],
        SUCCESS,
        [AFF, AFF],
        id="The first pod of the collection can only be scheduled on nodes labelled with the "
        "requested topology keys",
    ),
    pytest.param(
        MakePod().pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
        [MakePod().node("nodeA").labels({"foo": "abc"}).obj()],
        [_n("nodeA", region="r1", hostname="nodeA"), _n("nodeB", region="r1", hostname="nodeB")],
        SUCCESS,
        [ANTI, ANTI],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
    ),
    pytest.param(
        MakePod()
        .pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        [MakePod().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
        [_r1("nodeA", "z1"), _r1("nodeB", "z2")],
        SUCCESS,
        [ANTI, ANTI],
        id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity "
        "rule matches a pod.",
    ),
    pytest.param(
        MakePod().pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
        [MakePod().node("nodeA").labels({"foo": "abc"}).obj()],
        [make_node("nodeA", _CHINA), make_node("nodeB", _CHINA_AZ1), make_node("nodeC", _INDIA)],
        SUCCESS,
        [ANTI, ANTI, SUCCESS],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB "
        "but can be scheduled onto nodeC",
    ),
    pytest.param(
        MakePod()
        .namespace("NS1")
        .labels({"foo": "123"})
        .pod_anti_affinity_in("foo", "region", ["bar"], REQUIRED)
        .obj(),
        [
            MakePod().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
            MakePod()
            .node("nodeC")
            .namespace("NS2")
            .pod_anti_affinity_in("foo", "region", ["123"], REQUIRED)
            .obj(),
        ],
        [make_node("nodeA", _CHINA), make_node("nodeB", _CHINA_AZ1), make_node("nodeC", _INDIA)],
        SUCCESS,
        [ANTI, ANTI, SUCCESS],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but "
        "can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity "
        "rule but in different namespace)",
    ),
    pytest.param(
        MakePod().label("foo", "").obj(),
        [
            MakePod()
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
            .obj()
        ],
        [_r1("nodeA", "z1"), _r1("nodeB", "z1")],
        SKIP,
        [SUCCESS, SUCCESS],
        id="Test existing pod's anti-affinity: if an existing pod has a term with invalid "
        "topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the "
        "term is also checked",
    ),
    pytest.param(
        MakePod()
        .node("nodeA")
        .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
        .obj(),
        [MakePod().node("nodeA").labels({"foo": ""}).obj()],
        [_r1("nodeA", "z1"), _r1("nodeB", "z1")],
        SUCCESS,
        [SUCCESS, SUCCESS],
        id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if "
        "topologyKey matches",
    ),
    pytest.param(
        MakePod().label("foo", "").label("bar", "").obj(),
        [
            MakePod().node("nodeA").pod_anti_affinity_exists("foo", "zone", REQUIRED).obj(),
            MakePod().node("nodeA").pod_anti_affinity_exists("bar", "region", REQUIRED).obj(),
        ],
        [_r1("nodeA", "z1"), _r1("nodeB", "z2")],
        SUCCESS,
        [EXISTING, EXISTING],
        id="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it "
        "violates each existingPod's terms on all nodes",
    ),
    pytest.param(
        MakePod()
        .pod_anti_affinity_exists("foo", "zone", REQUIRED)
        .pod_anti_affinity_exists("bar", "region", REQUIRED)
        .obj(),
        [
            MakePod().node("nodeA").labels({"foo": ""}).obj(),
            MakePod().node("nodeB").labels({"bar": ""}).obj(),
        ],
        [_r1("nodeA", "z1"), _r1("nodeB", "z2")],
        SUCCESS,
        [ANTI, ANTI],
        id="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at "
        "least violates one anti-affinity rule of existingPod",
    ),
    pytest.param(
        MakePod().label("foo", "").label("bar", "").obj(),
        [
            MakePod()
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
            .pod_anti_affinity_exists("bar", "zone", REQUIRED)
            .obj()
        ],
        [_r1("nodeA", "z1"), _r1("nodeB", "z2")],
        SUCCESS,
        [EXISTING, SUCCESS],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both "
        "match, it's counted as a single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        MakePod()
        .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [MakePod().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        [_r1("nodeA", "z1"), _r1("nodeB", "z2")],
        SUCCESS,
        [ANTI, SUCCESS],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both "
        "match, it's counted as a single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        MakePod().label("foo", "").label("bar", "").obj(),
        [
            MakePod()
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "region", REQUIRED)
            .pod_anti_affinity_exists("bar", "zone", REQUIRED)
            .obj()
        ],
        [_r1("nodeA", "z1"), _r1("nodeB", "z2")],
        SUCCESS,
        [EXISTING, EXISTING],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both "
        "match, it's counted as a single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        MakePod()
        .pod_anti_affinity_exists("foo", "region", REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [MakePod().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        [_r1("nodeA", "z1"), _r1("nodeB", "z2")],
        SUCCESS,
        [ANTI, ANTI],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both "
        "match, it's counted as a single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        MakePod().label("foo", "").label("bar", "").obj(),
        [
            MakePod()
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "zone", REQUIRED)
            .pod_anti_affinity_exists("labelA", "zone", REQUIRED)
            .obj(),
            MakePod()
            .node("nodeB")
            .pod_anti_affinity_exists("bar", "zone", REQUIRED)
            .pod_anti_affinity_exists("labelB", "zone", REQUIRED)
            .obj(),
        ],
        [_r1("nodeA", "z1"), _r1("nodeB", "z2"), _r1("nodeC", "z3")],
        SUCCESS,
        [EXISTING, EXISTING, SUCCESS],
        id="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one "
        "anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
    ),
    pytest.param(
        MakePod()
        .pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [MakePod().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
        [_r1("nodeA", "z1"), _r1("nodeB", "z1")],
        SUCCESS,
        [SUCCESS, SUCCESS],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then "
        "check if all topologyKeys match",
    ),
    pytest.param(
        MakePod()
        .pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [
            MakePod().node("nodeA").name("pod1").labels({"foo": ""}).obj(),
            MakePod().node("nodeB").name("pod2").labels({"bar": ""}).obj(),
        ],
        [_r1("nodeA", "z1"), _r1("nodeB", "z2")],
        SUCCESS,
        [AFF, AFF],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then "
        "check if all topologyKeys match, and the match logic should be satisfied on the same pod",
    ),
    pytest.param(
        MakePod().pod_affinity_exists("foo", HOSTNAME, REQUIRED).obj(),
        [MakePod().name("pod1").labels({"foo": ""}).node("nodeA").obj()],
        [make_node("nodeA", {HOSTNAME: "nodeA"}), make_node("nodeB", {HOSTNAME: "nodeB"})],
        SUCCESS,
        [SUCCESS, AFF],
        id="Test incoming pod's host-scoped affinity (fast path)",
    ),
    pytest.param(
        MakePod().pod_anti_affinity_exists("foo", HOSTNAME, REQUIRED).obj(),
        [MakePod().name("pod1").labels({"foo": ""}).node("nodeA").obj()],
        [make_node("nodeA", {HOSTNAME: "nodeA"}), make_node("nodeB", {HOSTNAME: "nodeB"})],
        SUCCESS,
        [ANTI, SUCCESS],
        id="Test incoming pod's host-scoped anti-affinity (fast path)",
    ),
]


@pytest.mark.parametrize(("pod", "pods", "nodes", "want_pre_filter", "want"), MULTIPLE_NODES)
def test_required_affinity_multiple_nodes(
    pod: Pod, pods: list[Pod], nodes: list[Node], want_pre_filter: Status, want: list[Status]
) -> None:
    pre, statuses = _run_filter(pod, pods, nodes, {"NS1": {}})
    assert pre.code is want_pre_filter.code
    if pre.code is Code.SUCCESS:
        assert [(s.code, s.reasons) for s in statuses] == [(w.code, w.reasons) for w in want]


def test_filter_without_pre_filter_is_an_error() -> None:
    """TestPreFilterDisabled: Filter reads state PreFilter never wrote."""
    plugin, _ = _plugin([], [])
    status = plugin.filter(
        CycleState(), MakePod().obj(), snapshot([], [make_node("n")]).node_infos[0]
    )
    assert status.code is Code.ERROR


# -- TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight -----------

_PREF = "preferredDuringSchedulingIgnoredDuringExecution"
_REQ = "requiredDuringSchedulingIgnoredDuringExecution"
_S1 = {"security": "S1"}
_S2 = {"security": "S2"}
_CHINA_N = {"region": "China"}
_INDIA_N = {"region": "India"}
_AZ1 = {"az": "az1"}
_AZ2 = {"az": "az2"}


def _weighted(weight: int, selector: dict[str, Any], tk: str, **extra: Any) -> dict[str, Any]:
    return {
        "weight": weight,
        "podAffinityTerm": {"labelSelector": selector, "topologyKey": tk, **extra},
    }


_STAY_S1_REGION = {"podAffinity": {_PREF: [_weighted(5, _in("security", "S1"), "region")]}}
_STAY_S2_REGION = {"podAffinity": {_PREF: [_weighted(6, _in("security", "S2"), "region")]}}
_AFFINITY3 = {
    "podAffinity": {
        _PREF: [
            _weighted(
                8,
                MakeLabelSelector().not_in("security", ["S1"]).in_("security", ["S2"]).obj(),
                "region",
            ),
            _weighted(
                2, MakeLabelSelector().exists("security").not_exist("wrongkey").obj(), "region"
            ),
        ]
    }
}
_HARD = {
    "podAffinity": {
        _REQ: [
            _term(_in("security", "S1", "value2"), "region"),
            _term(MakeLabelSelector().exists("security").not_exist("wrongkey").obj(), "region"),
        ]
    }
}
_AWAY_S1_AZ = {"podAntiAffinity": {_PREF: [_weighted(5, _in("security", "S1"), "az")]}}
_AWAY_S2_AZ = {"podAntiAffinity": {_PREF: [_weighted(5, _in("security", "S2"), "az")]}}
_STAY_S1_AWAY_S2 = {
    "podAffinity": {_PREF: [_weighted(8, _in("security", "S1"), "region")]},
    "podAntiAffinity": {_PREF: [_weighted(5, _in("security", "S2"), "az")]},
}
_NS_SEL = {"namespaces": ["subteam2.team2"], "namespaceSelector": _TEAM1}
_AFF_NS = {"podAffinity": {_PREF: [_weighted(5, _in("security", "S1"), "region", **_NS_SEL)]}}
_ANTI_NS = {"podAntiAffinity": {_PREF: [_weighted(5, _in("security", "S1"), "region", **_NS_SEL)]}}
_NOT_TEAM1 = {"namespaceSelector": MakeLabelSelector().not_in("team", ["team1"]).obj()}
_AFF_NEG = {"podAffinity": {_PREF: [_weighted(5, _in("security", "S1"), "region", **_NOT_TEAM1)]}}
_ANTI_NEG = {
    "podAntiAffinity": {_PREF: [_weighted(5, _in("security", "S1"), "region", **_NOT_TEAM1)]}
}
_BAD_AFF = {"podAffinity": {_PREF: [_weighted(8, _in("security", "{{.bad-value.}}"), "region")]}}
_BAD_ANTI = {"podAntiAffinity": {_PREF: [_weighted(5, _in("security", "{{.bad-value.}}"), "az")]}}


def _p(
    node: str = "",
    labels: dict[str, str] | None = None,
    affinity: dict[str, Any] | None = None,
    ns: str = "",
) -> Pod:
    pod = MakePod().node(node).namespace(ns).labels(labels or {})
    return (pod.affinity_raw(affinity) if affinity else pod).obj()


def _nodes(*specs: tuple[str, dict[str, str]]) -> list[Node]:
    return [make_node(name, labels) for name, labels in specs]


def _three(third: dict[str, str] = _AZ1) -> list[Node]:
    return _nodes(("node1", _CHINA_N), ("node2", _INDIA_N), ("node3", third))


def _two() -> list[Node]:
    return _nodes(("node1", _CHINA_N), ("node2", _INDIA_N))


M = 100

PREFERRED_AFFINITY = [
    pytest.param(
        _p(labels=_S1),
        [],
        _three(),
        None,
        Code.SKIP,
        False,
        id="all nodes are same priority as Affinity is nil",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_STAY_S1_REGION),
        [_p("node1", _S1), _p("node2", _S2), _p("node3", _S1)],
        _three(),
        [M, 0, 0],
        Code.SUCCESS,
        False,
        id="Affinity: pod that matches topology key & pods in nodes will get high score comparing "
        "to otherswhich doesn't match either pods in nodes or in topology key",
    ),
    pytest.param(
        _p(affinity=_STAY_S1_REGION),
        [_p("node1", _S1)],
        _nodes(
            ("node1", _CHINA_N), ("node2", {"region": "China", "az": "az1"}), ("node3", _INDIA_N)
        ),
        [M, M, 0],
        Code.SUCCESS,
        False,
        id="All the nodes that have the same topology key & label value with one of them has an "
        "existing pod that match the affinity rules, have the same score",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_STAY_S2_REGION),
        [
            _p("node1", _S2),
            _p("node1", _S2),
            _p("node2", _S2),
            _p("node3", _S2),
            _p("node4", _S2),
            _p("node5", _S2),
        ],
        _nodes(
            ("node1", _CHINA_N),
            ("node2", _INDIA_N),
            ("node3", _CHINA_N),
            ("node4", _CHINA_N),
            ("node5", _INDIA_N),
        ),
        [M, 0, M, M, 0],
        Code.SUCCESS,
        False,
        id="Affinity: nodes in one region has more matching pods comparing to other region, so the "
        "region which has more matches will get high score",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_AFFINITY3),
        [_p("node1", _S1), _p("node2", _S2), _p("node3", _S1)],
        _three(),
        [20, M, 0],
        Code.SUCCESS,
        False,
        id="Affinity: different Label operators and values for pod affinity scheduling preference, "
        "including some match failures ",
    ),
    pytest.param(
        _p(labels=_S2),
        [_p("node1", _S1, _STAY_S1_REGION), _p("node2", _S2, _STAY_S2_REGION)],
        _three(),
        [0, M, 0],
        Code.SUCCESS,
        False,
        id="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution "
        "in pod affinity symmetry",
    ),
    pytest.param(
        _p(labels=_S1, ns="subteam1.team1"),
        [_p("node1", _S1, _AFF_NS), _p("node2", _S2, _STAY_S2_REGION)],
        _three(),
        [M, 0, 0],
        Code.SUCCESS,
        False,
        id="Affinity symmetry with namespace selector",
    ),
    pytest.param(
        _p(labels=_S1, ns="subteam1.team1"),
        [_p("node1", _S1, _ANTI_NS), _p("node2", _S2, _STAY_S2_REGION)],
        _three(),
        [0, M, M],
        Code.SUCCESS,
        False,
        id="AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        _p(labels=_S1),
        [_p("node1", _S1, _HARD), _p("node2", _S2, _HARD)],
        _three(),
        [M, M, 0],
        Code.SUCCESS,
        False,
        id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
        "affinity symmetry",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_AWAY_S1_AZ),
        [_p("node1", _S1), _p("node2", _S2)],
        _nodes(("node1", _AZ1), ("node2", _CHINA_N)),
        [0, M],
        Code.SUCCESS,
        False,
        id="Anti Affinity: pod that does not match existing pods in node will get high score ",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_AWAY_S1_AZ),
        [_p("node1", _S1), _p("node2", _S1)],
        _nodes(("node1", _AZ1), ("node2", _CHINA_N)),
        [0, M],
        Code.SUCCESS,
        False,
        id="Anti Affinity: pod that does not match topology key & match the pods in nodes will get "
        "higher score comparing to others ",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_AWAY_S1_AZ),
        [_p("node1", _S1), _p("node1", _S1), _p("node2", _S2)],
        _nodes(("node1", _AZ1), ("node2", _INDIA_N)),
        [0, M],
        Code.SUCCESS,
        False,
        id="Anti Affinity: one node has more matching pods comparing to other node, so the node "
        "which has more unmatches will get high score",
    ),
    pytest.param(
        _p(labels=_S2),
        [_p("node1", _S1, _AWAY_S2_AZ), _p("node2", _S2, _AWAY_S1_AZ)],
        _nodes(("node1", _AZ1), ("node2", _AZ2)),
        [0, M],
        Code.SUCCESS,
        False,
        id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will "
        "get high score",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_STAY_S1_AWAY_S2),
        [_p("node1", _S1), _p("node2", _S1)],
        _nodes(("node1", _CHINA_N), ("node2", _AZ1)),
        [M, 0],
        Code.SUCCESS,
        False,
        id="Affinity and Anti Affinity: considered only "
        "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_STAY_S1_AWAY_S2),
        [
            _p("node1", _S1),
            _p("node1", _S1),
            _p("node2", _S1),
            _p("node3", _S1),
            _p("node3", _S1),
            _p("node4", _S1),
            _p("node5", _S1),
        ],
        _nodes(
            ("node1", {"region": "China", "az": "az1"}),
            ("node2", _INDIA_N),
            ("node3", _CHINA_N),
            ("node4", _CHINA_N),
            ("node5", _INDIA_N),
        ),
        [M, 0, M, M, 0],
        Code.SUCCESS,
        False,
        id="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to "
        "schedule and existing pods have the same labels",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_STAY_S1_AWAY_S2),
        [
            _p("node1", _S1),
            _p("node2", _S2),
            _p("node3", affinity=_STAY_S1_AWAY_S2),
            _p("node4", affinity=_AWAY_S1_AZ),
        ],
        _nodes(("node1", _CHINA_N), ("node2", _AZ1), ("node3", _INDIA_N), ("node4", _AZ2)),
        [M, 0, M, 0],
        Code.SUCCESS,
        False,
        id="Affinity and Anti Affinity and symmetry: considered only "
        "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & "
        "symmetry",
    ),
    pytest.param(
        _p(labels=_S1),
        [_p("node1", _S1), _p("node2", affinity=_STAY_S1_AWAY_S2)],
        _nodes(("node1", _CHINA_N), ("node2", _CHINA_N)),
        [0, 0],
        Code.SUCCESS,
        False,
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_BAD_AFF),
        [_p("node1", _S1), _p("node2", _S2)],
        _two(),
        None,
        Code.ERROR,
        False,
        id="invalid Affinity fails PreScore",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_BAD_ANTI),
        [_p("node1", _S1), _p("node2", _S2)],
        _two(),
        None,
        Code.ERROR,
        False,
        id="invalid AntiAffinity fails PreScore",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_ANTI_NS, ns="subteam1.team1"),
        [
            _p("node1", _S1, ns="subteam1.team1"),
            _p("node1", _S1, ns="subteam1.team1"),
            _p("node1", _S1, ns="subteam1.team2"),
            _p("node2", _S1, ns="subteam2.team1"),
        ],
        _two(),
        [0, M],
        Code.SUCCESS,
        False,
        id="Affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_ANTI_NS, ns="subteam1.team1"),
        [
            _p("node1", _S1, ns="subteam1.team1"),
            _p("node1", _S1, ns="subteam1.team1"),
            _p("node1", _S1, ns="subteam2.team2"),
            _p("node2", _S1, ns="subteam2.team1"),
        ],
        _two(),
        [0, M],
        Code.SUCCESS,
        False,
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_AFF_NEG, ns="subteam1.team1"),
        [
            _p("node1", _S1, ns="subteam1.team1"),
            _p("node1", _S1, ns="subteam1.team1"),
            _p("node2", _S1, ns="subteam1.team2"),
        ],
        _two(),
        [0, M],
        Code.SUCCESS,
        False,
        id="Affinity with pods correctly enforcing negative NamespaceSelector",
    ),
    pytest.param(
        _p(labels=_S1, affinity=_ANTI_NEG, ns="subteam1.team1"),
        [
            _p("node1", _S1, ns="subteam1.team1"),
            _p("node1", _S1, ns="subteam1.team1"),
            _p("node2", _S1, ns="subteam1.team2"),
        ],
        _two(),
        [M, 0],
        Code.SUCCESS,
        False,
        id="AntiAffinity with pods correctly enforcing negative NamespaceSelector",
    ),
    pytest.param(
        _p(labels=_S2),
        [_p("node1", _S1, _STAY_S1_AWAY_S2), _p("node2", _S2, _STAY_S2_REGION)],
        _two(),
        None,
        Code.SKIP,
        True,
        id="Ignore preferred terms of existing pods",
    ),
    pytest.param(
        _p(labels=_S2),
        [_p("node1", _S1, _STAY_S1_AWAY_S2), _p("node2", _S2, _STAY_S2_REGION)],
        _two(),
        [0, M],
        Code.SUCCESS,
        False,
        id="Do not ignore preferred terms of existing pods",
    ),
    pytest.param(_p(labels=_S2), [], [], None, Code.SKIP, False, id="No nodes to score"),
]


def _scores(
    pod: Pod, pods: list[Pod], nodes: list[Node], args: dict[str, object]
) -> tuple[Status, list[int]]:
    plugin, handle = _plugin(pods, nodes, args=args)
    state = CycleState()
    infos = list(handle.snapshot.node_infos)
    status = plugin.pre_score(state, pod, infos)
    if status.code is not Code.SUCCESS:
        return status, []
    scores = []
    for info in infos:
        score, s = plugin.score(state, pod, info)
        assert s.ok
        scores.append(NodeScore(info.name, score))
    assert plugin.normalize_score(state, pod, scores).ok
    return status, [s.score for s in scores]


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "want", "want_code", "ignore_existing"), PREFERRED_AFFINITY
)
def test_preferred_affinity(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    want: list[int] | None,
    want_code: Code,
    ignore_existing: bool,
) -> None:
    args: dict[str, object] = {
        "hardPodAffinityWeight": 1,
        "ignorePreferredTermsOfExistingPods": ignore_existing,
    }
    status, got = _scores(pod, pods, nodes, args)
    assert status.code is want_code
    if want is not None:
        assert got == want


_SERVICE_S1 = {"service": "S1"}
_HARD_NS = {
    "podAffinity": {
        _REQ: [
            _term(
                _in("service", "S1"),
                "region",
                namespaces=["", "subteam2.team2"],
                namespace_selector=_TEAM1,
            )
        ]
    }
}


@pytest.mark.parametrize(
    ("namespace", "weight", "want"),
    [
        pytest.param("", 1, [M, M, 0], id="with default weight"),
        pytest.param("", 0, None, id="with zero weight"),
        pytest.param("subteam1.team2", 1, None, id="with no matching namespace"),
        pytest.param("subteam1.team1", 1, [M, M, 0], id="with matching NamespaceSelector"),
        pytest.param("subteam2.team2", 1, [M, M, 0], id="with matching Namespaces"),
    ],
)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    namespace: str, weight: int, want: list[int] | None
) -> None:
    pods = [_p("node1", affinity=_HARD_NS), _p("node2", affinity=_HARD_NS)]
    pod = _p(labels=_SERVICE_S1, ns=namespace)
    status, got = _scores(pod, pods, _three(), {"hardPodAffinityWeight": weight})
    assert status.code is (Code.SKIP if want is None else Code.SUCCESS)
    if want is not None:
        assert got == want


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"hardPodAffinityWeight": 101}, "not in valid range"),
        ({"hardPodAffinityWeight": -1}, "not in valid range"),
        ({"hardPodAffinityWeight": "1"}, "expected an integer"),
        ({"ignorePreferredTermsOfExistingPods": 1}, "expected a boolean"),
        ({"weight": 1}, "unknown field"),
    ],
)
def test_invalid_args_are_refused(args: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        interpodaffinity.new(args, FakeHandle(snapshot([], [])))


# -- TestPreFilterStateAddRemovePod ------------------------------------------------------------

_FOO_BAR_REGION = _term(_in("foo", "bar"), "region")
_ANTI_FOO_BAR = {"podAntiAffinity": {_REQ: [_FOO_BAR_REGION]}}
_COMPLEX_TERMS = [
    _term(_in("foo", "bar", "buzz"), "region"),
    _term(MakeLabelSelector().not_in("service", ["bar", "security", "test"]).obj(), "zone"),
]
_ANTI_COMPLEX = {"podAntiAffinity": {_REQ: _COMPLEX_TERMS}}
_AFF_COMPLEX = {"podAffinity": {_REQ: _COMPLEX_TERMS}}
_FOO = {"foo": "bar"}
_L1, _L2, _L3 = (
    {"region": "r1", "zone": "z11"},
    {"region": "r1", "zone": "z12"},
    {"region": "r2", "zone": "z21"},
)


def _named(name: str, node: str, labels: dict[str, str] | None, affinity: Any = None) -> Pod:
    pod = MakePod().name(name).node(node).labels(labels or {})
    return (pod.affinity_raw(affinity) if affinity else pod).obj()


_ABC = _nodes(("nodeA", _L1), ("nodeB", _L2), ("nodeC", _L3))

ADD_REMOVE = [
    pytest.param(
        _named("pending", "", _FOO, _ANTI_FOO_BAR),
        [_named("p1", "nodeA", _FOO), _named("p2", "nodeC", None, _ANTI_FOO_BAR)],
        _named("addedPod", "nodeB", _FOO, _ANTI_FOO_BAR),
        _ABC,
        {("region", "r1"): 2},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a "
        "pod",
    ),
    pytest.param(
        _named("pending", "", _FOO, _ANTI_COMPLEX),
        [_named("p1", "nodeA", _FOO), _named("p2", "nodeC", None, _ANTI_FOO_BAR)],
        _named("addedPod", "nodeA", _FOO, _ANTI_COMPLEX),
        _ABC,
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a "
        "pod",
    ),
    pytest.param(
        _named("pending", "", _FOO, _AFF_COMPLEX),
        [
            _named("p1", "nodeA", _FOO),
            _named("p2", "nodeC", None, {**_ANTI_FOO_BAR, **_AFF_COMPLEX}),
        ],
        _named("addedPod", "nodeA", _FOO, _ANTI_COMPLEX),
        _ABC,
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
        id="preFilterState matching pod affinity and anti-affinity are updated correctly after "
        "adding and removing a pod",
    ),
    pytest.param(
        _named("pending", "", _FOO, _ANTI_FOO_BAR),
        [_named("p1", "nodeA", _FOO)],
        _named(
            "addedPod",
            "nodeA",
            _FOO,
            {"podAntiAffinity": {_REQ: [_FOO_BAR_REGION, _term(_in("foo", "bar"), HOSTNAME)]}},
        ),
        _nodes(
            ("nodeA", {"region": "r1", "zone": "z11", HOSTNAME: "nodeA"}),
            ("nodeB", {"region": "r1", "zone": "z12", HOSTNAME: "nodeB"}),
        ),
        {("region", "r1"): 2},
        {},
        id="preFilterState anti-affinity terms with both hostname and non-hostname are updated "
        "correctly after adding and removing a pod",
    ),
]


def _pre_filter_state(
    pending: Pod, pods: list[Pod], nodes: list[Node]
) -> tuple[interpodaffinity.InterPodAffinity, CycleState, Any, FakeHandle]:
    plugin, handle = _plugin(pods, nodes)
    state = CycleState()
    _, status = plugin.pre_filter(state, pending, handle.snapshot.node_infos)
    assert status.ok
    return plugin, state, state.read("PreFilterInterPodAffinity"), handle


def _counts(s: Any) -> tuple[dict[Any, int], dict[Any, int], dict[Any, int]]:
    return s.existing_anti, s.affinity, s.anti_affinity


@pytest.mark.parametrize(
    ("pending", "existing", "added", "nodes", "want_anti", "want_affinity"), ADD_REMOVE
)
def test_pre_filter_state_add_remove_pod(
    pending: Pod,
    existing: list[Pod],
    added: Pod,
    nodes: list[Node],
    want_anti: dict[tuple[str, str], int],
    want_affinity: dict[tuple[str, str], int],
) -> None:
    _, _, all_pods, _ = _pre_filter_state(pending, [*existing, added], nodes)
    plugin, state, s, handle = _pre_filter_state(pending, existing, nodes)
    original = s.clone()
    info = handle.snapshot.get(added.spec.node_name)
    assert info is not None
    assert plugin.add_pod(state, pending, pod_info(added), info).ok
    assert s.anti_affinity == want_anti and s.affinity == want_affinity
    assert _counts(s) == _counts(all_pods)
    assert plugin.remove_pod(state, pending, pod_info(added), info).ok
    assert _counts(s) == _counts(original)
    # Removing from the state that counted the pod gives the state that never did.
    plugin2, state2, s2, handle2 = _pre_filter_state(pending, [*existing, added], nodes)
    info2 = handle2.snapshot.get(added.spec.node_name)
    assert info2 is not None
    assert plugin2.remove_pod(state2, pending, pod_info(added), info2).ok
    assert _counts(s2) == _counts(original)


def test_pre_filter_state_clone_copies_the_counts() -> None:
    """TestPreFilterStateClone: a clone is equal, and independent of its source."""
    pending = _named("pending", "", _FOO, _ANTI_FOO_BAR)
    _, _, s, _ = _pre_filter_state(pending, [_named("p1", "nodeA", _FOO)], _ABC)
    clone = s.clone()
    assert clone is not s and _counts(clone) == _counts(s)
    clone.anti_affinity[("region", "r9")] = 1
    assert ("region", "r9") not in s.anti_affinity


def test_a_clone_keeps_preemption_simulation_out_of_the_cycle() -> None:
    """Removing a victim from a cloned CycleState leaves the original's verdicts alone."""
    pending = MakePod().pod_anti_affinity_in("foo", "region", ["bar"], REQUIRED).obj()
    victim = _named("p1", "nodeA", _FOO)
    plugin, state, _, handle = _pre_filter_state(pending, [victim], _ABC)
    node_a = handle.snapshot.get("nodeA")
    assert node_a is not None
    simulated = state.clone()
    assert plugin.remove_pod(simulated, pending, node_a.pods[0], node_a).ok
    assert plugin.filter(simulated, pending, node_a).ok
    assert plugin.filter(state, pending, node_a).reasons == (ERR_ANTI_AFFINITY,)


def test_the_plugin_serves_its_extension_points() -> None:
    plugin, _ = _plugin([], [])
    assert plugin.name == "InterPodAffinity" == interpodaffinity.NAME
    for point in (PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
        assert isinstance(plugin, point)
    assert plugin.pre_filter_extensions() is plugin and plugin.score_extensions() is plugin


# -- AddPod/RemovePod against a fresh PreFilter, on random clusters ----------------------------


def _random_pod(rng: Any, name: str, node: str) -> Pod:
    pod = MakePod().name(name).node(node).namespace(rng.choice(["", "subteam1.team1"]))
    for key in ("app", "tier"):
        if rng.random() < 0.6:
            pod.label(key, rng.choice(["a", "b"]))
    for _ in range(rng.randrange(3)):
        key, tk = rng.choice(["app", "tier"]), rng.choice(["zone", "region", HOSTNAME])
        values = [rng.choice(["a", "b"])]
        if rng.random() < 0.5:
            pod.pod_affinity_in(key, tk, values, rng.choice([REQUIRED, PREFERRED]))
        else:
            pod.pod_anti_affinity_in(key, tk, values, rng.choice([REQUIRED, PREFERRED]))
    return pod.obj()


def _random_nodes(rng: Any) -> list[Node]:
    nodes = []
    for i in range(5):
        labels = {HOSTNAME: f"n{i}"}
        if rng.random() < 0.8:
            labels["zone"] = rng.choice(["z1", "z2"])
        if rng.random() < 0.8:
            labels["region"] = "r1"
        nodes.append(make_node(f"n{i}", labels))
    return nodes


@pytest.mark.parametrize("seed", range(40))
def test_add_and_remove_pod_agree_with_a_fresh_pre_filter(seed: int) -> None:
    rng = random.Random(seed)
    nodes = _random_nodes(rng)
    pods = [_random_pod(rng, f"p{i}", rng.choice(nodes).name) for i in range(8)]
    incoming = _random_pod(rng, "incoming", "")
    victim = pods[rng.randrange(len(pods))]
    others = [p for p in pods if p is not victim]

    def state_of(existing: list[Pod]) -> tuple[Code, Any, Any, FakeHandle]:
        plugin, handle = _plugin(existing, nodes)
        state = CycleState()
        _, status = plugin.pre_filter(state, incoming, handle.snapshot.node_infos)
        return status.code, plugin, state, handle

    code_all, plugin, state, handle = state_of(pods)
    code_without, _, state_without, _ = state_of(others)
    if Code.SKIP in (code_all, code_without):
        return  # nothing to count on one side; Filter does not run
    node = handle.snapshot.get(victim.spec.node_name)
    assert node is not None
    assert plugin.remove_pod(state, incoming, pod_info(victim), node).ok
    s, fresh = (
        state.read("PreFilterInterPodAffinity"),
        state_without.read("PreFilterInterPodAffinity"),
    )
    assert _counts(s) == _counts(fresh)
    assert plugin.add_pod(state, incoming, pod_info(victim), node).ok
    _, _, state_all, _ = state_of(pods)
    assert _counts(s) == _counts(state_all.read("PreFilterInterPodAffinity"))


# -- TestGetTPMapMatchingIncomingAffinityAntiAffinity, TestMultipleAffinityTermsRequire... ------


def _normal(*labels: str) -> Pod:
    pod = MakePod().name("normal").node("nodeA")
    for label in labels:
        pod.label(label, "")
    return pod.obj()


def _incoming(name: str, affinity: Sequence[str], anti: Sequence[str]) -> Pod:
    pod = MakePod().name(name)
    for key in affinity:
        pod.pod_affinity_exists(key, HOSTNAME, REQUIRED)
    for key in anti:
        pod.pod_anti_affinity_exists(key, HOSTNAME, REQUIRED)
    return pod.obj()


_NODE_A = [make_node("nodeA", {HOSTNAME: "nodeA"})]
_A1 = {(HOSTNAME, "nodeA"): 1}


@pytest.mark.parametrize(
    ("existing", "pod", "want_affinity", "want_anti"),
    [
        pytest.param([], _incoming("aaa-normal", [], []), {}, {}, id="nil test"),
        pytest.param(
            [_normal("aaa")],
            _incoming("aaa-normal", [], []),
            {},
            {},
            id="incoming pod without affinity/anti-affinity causes a no-op",
        ),
        pytest.param(
            [_normal("bbb")],
            _incoming("aaa-anti", ["aaa"], ["aaa"]),
            {},
            {},
            id="no pod has label that violates incoming pod's affinity and anti-affinity",
        ),
        pytest.param(
            [_normal("aaa")],
            _incoming("affi-antiaffi", ["aaa"], ["aaa"]),
            _A1,
            _A1,
            id="existing pod matches incoming pod's affinity and anti-affinity - single term case",
        ),
        pytest.param(
            [_normal("aaa", "bbb")],
            _incoming("affi-antiaffi", ["aaa", "bbb"], ["aaa"]),
            {(HOSTNAME, "nodeA"): 2},
            _A1,
            id="existing pod matches incoming pod's affinity and anti-affinity - multiple terms "
            "case",
        ),
        pytest.param(
            [_normal("aaa")],
            _incoming("affi-antiaffi", ["aaa", "bbb"], ["aaa", "bbb"]),
            {},
            _A1,
            id="existing pod not match incoming pod's affinity but matches anti-affinity",
        ),
        pytest.param(
            [_normal("aaa", "bbb")],
            _incoming("anaffi-antiaffiti", ["aaa", "ccc"], ["aaa", "ccc"]),
            {},
            _A1,
            id="incoming pod's anti-affinity has more than one term - existing pod violates "
            "partial term - case 1",
        ),
        pytest.param(
            [_normal("bbb")],
            _incoming("affi-antiaffi", ["aaa", "bbb"], ["aaa", "bbb"]),
            {},
            _A1,
            id="incoming pod's anti-affinity has more than one term - existing pod violates "
            "partial term - case 2",
        ),
    ],
)
def test_get_tp_map_matching_incoming_affinity_anti_affinity(
    existing: list[Pod],
    pod: Pod,
    want_affinity: dict[tuple[str, str], int],
    want_anti: dict[tuple[str, str], int],
) -> None:
    plugin, handle = _plugin(existing, _NODE_A)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, handle.snapshot.node_infos)
    if status.code is Code.SKIP:
        assert want_affinity == want_anti == {}
        return
    s = state.read("PreFilterInterPodAffinity")
    assert (s.affinity, s.anti_affinity) == (want_affinity, want_anti)


def test_multiple_affinity_terms_require_single_matching_pod() -> None:
    """TestMultipleAffinityTermsRequireSingleMatchingPod: one pod must match every term."""
    incoming = (
        MakePod()
        .name("pod-1")
        .namespace("default")
        .pod_affinity_in("foo", HOSTNAME, ["bar"], REQUIRED)
        .pod_affinity_in("baz", HOSTNAME, ["qux"], REQUIRED)
    )
    pod_a = MakePod().name("podA").namespace("default").label("foo", "bar").node("node-1").obj()
    pod_b = MakePod().name("podB").namespace("default").label("baz", "qux").node("node-1").obj()
    pod_c = (
        MakePod()
        .name("podC")
        .namespace("default")
        .label("foo", "bar")
        .label("baz", "qux")
        .node("node-3")
        .obj()
    )
    nodes = [make_node(f"node-{i}", {HOSTNAME: f"node-{i}"}) for i in (1, 2, 3)]
    pre, statuses = _run_filter(incoming.obj(), [pod_a, pod_b, pod_c], nodes, {"default": {}})
    assert pre.ok and [s.ok for s in statuses] == [False, False, True]
    # The first pod of the group, with no pod matching both terms yet, may go anywhere.
    own = incoming.label("foo", "bar").label("baz", "qux").obj()
    pre, statuses = _run_filter(own, [pod_a, pod_b], nodes, {"default": {}})
    assert pre.ok and statuses[0].ok


def _place(pods: list[Pod], nodes: list[Node], replica: Pod) -> str | None:
    """Filter every node, take the first that passes (as a cycle would without scores)."""
    plugin, handle = _plugin(pods, nodes)
    state = CycleState()
    _, pre = plugin.pre_filter(state, replica, handle.snapshot.node_infos)
    for info in handle.snapshot:
        if pre.code is Code.SKIP or plugin.filter(state, replica, info).ok:
            return info.name
    return None


def test_replicas_with_required_anti_affinity_on_hostname_go_to_different_nodes() -> None:
    """The issue's first row: two replicas, two nodes, one each; a third finds no room."""
    nodes = [make_node(n, {HOSTNAME: n}) for n in ("a", "b")]
    placed: list[Pod] = []
    for i in range(3):
        replica = (
            MakePod()
            .name(f"r{i}")
            .namespace("train")
            .label("app", "trainer")
            .pod_anti_affinity_in("app", HOSTNAME, ["trainer"], REQUIRED)
        )
        node = _place(placed, nodes, replica.obj())
        if node is not None:
            placed.append(replica.node(node).obj())
    assert [p.spec.node_name for p in placed] == ["a", "b"]


def test_both_affinity_plugins_are_registered_in_tree() -> None:
    handle = FakeHandle(snapshot([], []))
    assert IN_TREE["InterPodAffinity"]({}, handle).name == "InterPodAffinity"
    assert IN_TREE["PodTopologySpread"]({}, handle).name == "PodTopologySpread"
    assert IN_TREE["PodTopologySpread"] is podtopologyspread.new
