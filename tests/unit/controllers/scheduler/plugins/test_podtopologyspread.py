"""PodTopologySpread (kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/podtopologyspread).

Upstream's table cases, ported by name: Filter with one constraint and with several (counts per
domain, missing labels, minDomains, node inclusion policies, terminating pods and namespaces),
PreFilter's Skip, AddPod/RemovePod, the ScheduleAnyway scores, default constraints and args.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.unit.controllers.scheduler.plugins.affinity_support import (
    FakeHandle,
    MakeLabelSelector,
    MakeNode,
    MakePod,
    snapshot,
)

from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
)
from dra_operator.controllers.scheduler.plugins import podtopologyspread
from dra_operator.model import Node, Pod, Taint

FOO = MakeLabelSelector().exists("foo").obj()
BAR = MakeLabelSelector().exists("bar").obj()
TAINTS = [Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")]
LIST = {"defaultingType": "List"}


def _plugin(
    pods: list[Pod], nodes: list[Node], args: dict[str, object] | None = None, handle: Any = None
) -> tuple[podtopologyspread.PodTopologySpread, Any]:
    h = handle or FakeHandle(snapshot(pods, nodes))
    return podtopologyspread.new(LIST if args is None else args, h), h


def _filter_codes(pod: Pod, nodes: list[Node], pods: list[Pod]) -> dict[str, Code]:
    plugin, handle = _plugin(pods, nodes)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, handle.snapshot.node_infos)
    assert pre.ok
    result = {}
    for node in nodes:
        info = handle.snapshot.get(node.name)
        assert info is not None
        result[node.name] = plugin.filter(state, pod, info).code
    return result


# -- TestSingleConstraint ----------------------------------------------------------------------

SINGLE_CONSTRAINT = [
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="no existing pods",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="no existing pods, incoming pod doesn't match itself",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").namespace("ns2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", None, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="existing pods do not match null selector",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zon", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "rack", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        [],
        {
            "node-a": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node-x": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        },
        id="pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("bar", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("node", ["node-a", "node-y"])
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
        ],
        [
            MakePod().name("p-a").node("node-a").label("foo", "").terminating().obj(),
            MakePod().name("p-b").node("node-b").label("foo", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.UNSCHEDULABLE,
        },
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("node", ["node-b"])
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "node",
            "DoNotSchedule",
            FOO,
            4,
            None,
            None,
            None,
        )
        .obj(),
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
            MakeNode().name("node-c").label("node", "node-c").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-c": Code.SUCCESS,
        },
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < "
        "minDomains, then the third node fits",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "node",
            "DoNotSchedule",
            FOO,
            2,
            None,
            None,
            None,
        )
        .obj(),
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
            MakeNode().name("node-c").label("node", "node-c").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-c": Code.SUCCESS,
        },
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > "
        "minDomains, then the all nodes fit",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "zone",
            "DoNotSchedule",
            FOO,
            3,
            None,
            None,
            None,
        )
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains,"
        " then the third and fourth nodes fit",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "zone",
            "DoNotSchedule",
            FOO,
            1,
            None,
            None,
            None,
        )
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains,"
        " then the all nodes fit",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-x").label("node", "node-x").label("foo", "").obj(),
            MakeNode().name("node-y").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, "Ignore", None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-x").label("node", "node-x").label("foo", "").obj(),
            MakeNode().name("node-y").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-x").label("node", "node-x").label("foo", "").obj(),
            MakeNode().name("node-y").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, "Ignore", None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-x").label("node", "node-x").label("foo", "").obj(),
            MakeNode().name("node-y").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, "Honor", None)
        .obj(),
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-x").label("node", "node-x").label("foo", "").obj(),
            MakeNode().name("node-y").label("node", "node-y").taints(TAINTS).obj(),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-x").label("node", "node-x").label("foo", "").obj(),
            MakeNode().name("node-y").label("node", "node-y").taints(TAINTS).obj(),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="NodeTaintsPolicy ignored",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "pods", "want"), SINGLE_CONSTRAINT)
def test_single_constraint(
    pod: Pod, nodes: list[Node], pods: list[Pod], want: dict[str, Code]
) -> None:
    assert _filter_codes(pod, nodes, pods) == want


# -- TestMultipleConstraints -------------------------------------------------------------------

MULTIPLE_CONSTRAINTS = [
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("bar", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("bar", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("bar", "").obj(),
        ],
        {
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' "
        "constraint",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1,"
        " 1/0/0/1]",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, "Ignore", None, None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
            MakeNode()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, "Honor", None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
            MakeNode()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            MakeNode()
            .name("node-y")
            .label("zone", "zone2")
            .label("node", "node-y")
            .taints(TAINTS)
            .obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            MakeNode()
            .name("node-y")
            .label("zone", "zone2")
            .label("node", "node-y")
            .label("foo", "")
            .taints(TAINTS)
            .obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, "Honor", None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, "Ignore", None, None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            MakeNode()
            .name("node-y")
            .label("zone", "zone2")
            .label("node", "node-y")
            .label("foo", "")
            .taints(TAINTS)
            .obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", BAR, None, None, None, None)
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        id="two Constraints on zone, spreads = [3/3, 2/1]",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", BAR, None, None, None, None)
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        {
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
        id="two Constraints on zone, spreads = [3/4, 2/1]",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "pods", "want"), MULTIPLE_CONSTRAINTS)
def test_multiple_constraints(
    pod: Pod, nodes: list[Node], pods: list[Pod], want: dict[str, Code]
) -> None:
    assert _filter_codes(pod, nodes, pods) == want


def test_filter_reasons_are_upstreams_texts() -> None:
    pod = MakePod().label("foo", "").spread_constraint(1, "zone", "DoNotSchedule", FOO).obj()
    nodes = [
        MakeNode().name("a").label("zone", "z1").obj(),
        MakeNode().name("b").label("zone", "z2").obj(),
        MakeNode().name("c").obj(),
    ]
    plugin, handle = _plugin([MakePod().node("a").label("foo", "").obj()], nodes)
    state = CycleState()
    plugin.pre_filter(state, pod, handle.snapshot.node_infos)
    a, c = handle.snapshot.get("a"), handle.snapshot.get("c")
    assert a is not None and c is not None
    assert plugin.filter(state, pod, a).reasons == (
        "node(s) didn't match pod topology spread constraints",
    )
    assert plugin.filter(state, pod, c).reasons == (
        "node(s) didn't match pod topology spread constraints (missing required label)",
    )


def test_filter_without_pre_filter_is_an_error() -> None:
    """TestPreFilterDisabled."""
    plugin, handle = _plugin([], [MakeNode().name("n").obj()])
    assert plugin.filter(CycleState(), MakePod().obj(), handle.snapshot.node_infos[0]).code is (
        Code.ERROR
    )
