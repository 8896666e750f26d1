"""PodTopologySpread (kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/podtopologyspread).

Upstream's table cases, ported by name: Filter with one constraint and with several (counts per
domain, missing labels, minDomains, node inclusion policies, terminating pods and namespaces),
PreFilter's Skip, AddPod/RemovePod, the ScheduleAnyway scores, default constraints and args.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from tests.unit.controllers.scheduler.plugins.affinity_support import (
    FakeHandle,
    MakeLabelSelector,
    MakeNode,
    MakePod,
    pod_info,
    snapshot,
)

from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    FilterPlugin,
    NodeScore,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from dra_operator.controllers.scheduler.plugins import podtopologyspread
from dra_operator.model import (
    FrozenMap,
    LabelSelector,
    Node,
    Pod,
    Selector,
    Taint,
    compile_selector,
)

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


# -- TestPodTopologySpreadScore ----------------------------------------------------------------

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


class _ServiceHandle(FakeHandle):
    """A Handle that knows one Service (selecting `foo: ""` unless told), as upstream's cases."""

    def __init__(self, snap: Any, service: dict[str, str] | None = None) -> None:
        super().__init__(snap)
        self.service = {"foo": ""} if service is None else service

    def default_spread_selector(self, pod: Pod) -> Selector:
        service = self.service
        if all(pod.metadata.labels.get(k) == v for k, v in service.items()):
            return compile_selector(LabelSelector(match_labels=FrozenMap(service)))
        return compile_selector(LabelSelector())


SCORE = [
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
        [],
        [("node-a", 100), ("node-b", 100)],
        False,
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
        ],
        [
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
        [("node-a", 100)],
        False,
        id="one constraint on node, only one node is candidate",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
        [],
        [("node-a", 100), ("node-b", 100)],
        False,
        id="one constraint on node, all nodes have the same number of matching pods",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-d1").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d2").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d3").node("node-d").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-c").label(HOSTNAME, "node-c").obj(),
            MakeNode().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        [],
        [("node-a", 20), ("node-b", 60), ("node-c", 100), ("node-d", 0)],
        False,
        id="one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", None, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-d1").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d2").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d3").node("node-d").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-c").label(HOSTNAME, "node-c").obj(),
            MakeNode().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        [],
        [("node-a", 100), ("node-b", 100), ("node-c", 100), ("node-d", 100)],
        False,
        id="one constraint on node, null selector",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-d1").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d2").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d3").node("node-d").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-c").label(HOSTNAME, "node-c").obj(),
            MakeNode().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        [],
        [("node-a", 33), ("node-b", 66), ("node-c", 100), ("node-d", 16)],
        False,
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(3, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a3").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a4").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b3").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
            MakePod().name("p-c2").node("node-c").label("foo", "").obj(),
            MakePod().name("p-d1").node("node-d").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-c").label(HOSTNAME, "node-c").obj(),
            MakeNode().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        [],
        [("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)],
        False,
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    pytest.param(
        MakePod().name("p").label("foo", "").obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a3").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a4").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b3").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
            MakePod().name("p-c2").node("node-c").label("foo", "").obj(),
            MakePod().name("p-d1").node("node-d").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-c").label(HOSTNAME, "node-c").obj(),
            MakeNode().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        [],
        [("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)],
        True,
        id="system defaulting, nodes don't have zone, pods match service",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a3").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a4").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-x").label(HOSTNAME, "node-x").obj(),
        ],
        [
            MakeNode().name("node-y").label(HOSTNAME, "node-y").obj(),
        ],
        [("node-a", 33), ("node-b", 83), ("node-x", 100)],
        False,
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a3").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a4").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("n", "node-b").obj(),
            MakeNode().name("node-x").label(HOSTNAME, "node-x").obj(),
        ],
        [
            MakeNode().name("node-y").label(HOSTNAME, "node-y").obj(),
        ],
        [("node-a", 16), ("node-b", 0), ("node-x", 100)],
        False,
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match "
        "topology key",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a3").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a4").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        [
            MakeNode().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj(),
        ],
        [("node-a", 75), ("node-b", 75), ("node-x", 100)],
        False,
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-x2").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        [
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj(),
        ],
        [("node-a", 100), ("node-x", 63)],
        False,
        id="two Constraints on zone and node, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, "zone", "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").obj(),
            MakeNode().name("node-x").label("zone", "zone2").obj(),
        ],
        [
            MakeNode().name("node-b").label("zone", "zone1").obj(),
            MakeNode().name("node-y").label("zone", "zone2").obj(),
        ],
        [("node-a", 85), ("node-x", 100)],
        False,
        id="two Constraints on zone, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj(),
        ],
        [],
        [("node-a", 60), ("node-b", 20), ("node-x", 100), ("node-y", 60)],
        False,
        id="two Constraints on zone and node, with different labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-b1").node("node-b").label("bar", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").label("bar", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj(),
        ],
        [],
        [("node-a", 100), ("node-b", 60), ("node-x", 40), ("node-y", 0)],
        False,
        id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 "
        "pods",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        [
            MakeNode().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj(),
        ],
        [("node-a", 50), ("node-b", 25), ("node-x", 100)],
        False,
        id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes "
        "are candidates",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
        [],
        [("node-a", 100), ("node-b", 33)],
        False,
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("foo", "").terminating().obj(),
            MakePod().name("p-b").node("node-b").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
        [],
        [("node-a", 100), ("node-b", 0)],
        False,
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "node",
            "ScheduleAnyway",
            FOO,
            10,
            None,
            None,
            None,
        )
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
            MakeNode().name("node-c").label("node", "node-c").obj(),
        ],
        [],
        [("node-a", 75), ("node-b", 75), ("node-c", 100)],
        False,
        id="minDomains has no effect when ScheduleAnyway",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-c").label("node", "node-c").obj(),
        ],
        [],
        [("node-a", 0), ("node-b", 33), ("node-c", 100)],
        False,
        id="NodeAffinityPolicy honoed with labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, "Ignore", None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-c").label("node", "node-c").obj(),
        ],
        [],
        [("node-a", 66), ("node-b", 100), ("node-c", 100)],
        False,
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-c").label("node", "node-c").obj(),
        ],
        [],
        [("node-a", 0), ("node-b", 33), ("node-c", 100)],
        False,
        id="NodeAffinityPolicy honoed with nodeAffinity",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, "Ignore", None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-c").label("node", "node-c").obj(),
        ],
        [],
        [("node-a", 66), ("node-b", 100), ("node-c", 100)],
        False,
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, None, "Honor", None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
            MakeNode().name("node-c").label("node", "node-c").taints(TAINTS).obj(),
        ],
        [],
        [("node-a", 0), ("node-b", 33), ("node-c", 100)],
        False,
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
            MakeNode().name("node-c").label("node", "node-c").taints(TAINTS).obj(),
        ],
        [],
        [("node-a", 66), ("node-b", 100), ("node-c", 100)],
        False,
        id="NodeTaintsPolicy ignored",
    ),
    # "matchLabelKeys ignored when feature gate disabled" is not ported: the gate
    # (MatchLabelKeysInPodTopologySpread) is on in v1.37 and cannot be turned off here.
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(
            1, "zone", "ScheduleAnyway", MakeLabelSelector().obj(), None, None, None, ["foo"]
        )
        .spread_constraint(
            1, HOSTNAME, "ScheduleAnyway", MakeLabelSelector().obj(), None, None, None, ["bar"]
        )
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-c").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-c").label("bar", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-c").label("zone", "zone2").label(HOSTNAME, "node-c").obj(),
            MakeNode().name("node-d").label("zone", "zone2").label(HOSTNAME, "node-d").obj(),
        ],
        [],
        [("node-a", 60), ("node-b", 20), ("node-c", 60), ("node-d", 100)],
        False,
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .label("baz", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", BAR, None, None, None, ["baz"])
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod()
            .name("p-b1")
            .node("node-b")
            .label("foo", "")
            .label("bar", "")
            .label("baz", "")
            .obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
            MakePod().name("p-c2").node("node-c").label("bar", "").obj(),
            MakePod().name("p-d3").node("node-c").label("bar", "").label("baz", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-c").label("zone", "zone2").label(HOSTNAME, "node-c").obj(),
            MakeNode().name("node-d").label("zone", "zone2").label(HOSTNAME, "node-d").obj(),
        ],
        [],
        [("node-a", 60), ("node-b", 20), ("node-c", 60), ("node-d", 100)],
        False,
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
]


def _run_scores(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    failed: list[Node],
    with_service: bool,
    args: dict[str, object],
) -> list[tuple[str, int]]:
    snap = snapshot(pods, [*nodes, *failed])
    handle = _ServiceHandle(snap) if with_service else FakeHandle(snap)
    plugin = podtopologyspread.new(args, handle)
    state = CycleState()
    filtered = [info for info in snap if info.name in {n.name for n in nodes}]
    status = plugin.pre_score(state, pod, filtered)
    assert status.ok, status
    scores = []
    for node in nodes:
        info = snap.get(node.name)
        assert info is not None
        score, s = plugin.score(state, pod, info)
        assert s.ok
        scores.append(NodeScore(node.name, score))
    assert plugin.normalize_score(state, pod, scores).ok
    return [(n.name, n.score) for n in scores]


@pytest.mark.parametrize(("pod", "pods", "nodes", "failed", "want", "with_service"), SCORE)
def test_pod_topology_spread_score(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    failed: list[Node],
    want: list[tuple[str, int]],
    with_service: bool,
) -> None:
    args = {"defaultingType": "System"}
    assert _run_scores(pod, pods, nodes, failed, with_service, args) == want


def test_the_plugin_serves_its_extension_points() -> None:
    plugin, _ = _plugin([], [])
    assert plugin.name == "PodTopologySpread" == podtopologyspread.NAME
    for point in (PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
        assert isinstance(plugin, point)
    assert plugin.pre_filter_extensions() is plugin and plugin.score_extensions() is plugin


# -- TestPreFilterStateAddPod, TestPreFilterStateRemovePod -------------------------------------


def _sorted_paths(paths: Any) -> list[list[tuple[str, int]]]:
    """Upstream's comparer: values paired with equal counts are compared in name order."""
    result = []
    for p in paths:
        pairs = list(zip(p.values, p.nums, strict=True))
        if pairs[0][1] == pairs[1][1] and pairs[0][0] > pairs[1][0]:
            pairs[0], pairs[1] = (pairs[1][0], pairs[0][1]), (pairs[0][0], pairs[1][1])
        result.append(pairs)
    return result


def _want_paths(paths: list[list[tuple[str, int]]]) -> list[list[tuple[str, int]]]:
    result = []
    for (v0, n0), (v1, n1) in paths:
        if n0 == n1 and v0 > v1:
            v0, v1 = v1, v0
        result.append([(v0, n0), (v1, n1)])
    return result


def _state_after(
    preemptor: Pod,
    other: Pod,
    existing: list[Pod],
    node_idx: int,
    nodes: list[Node],
    delta: int,
) -> Any:
    plugin, handle = _plugin(existing, nodes)
    state = CycleState()
    _, pre = plugin.pre_filter(state, preemptor, handle.snapshot.node_infos)
    assert pre.ok
    info = handle.snapshot.get(nodes[node_idx].name)
    assert info is not None
    update = plugin.add_pod if delta > 0 else plugin.remove_pod
    assert update(state, preemptor, pod_info(other), info).ok
    return state.read("PreFilterPodTopologySpread")


ADD_POD = [
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
        -1,
        [],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
        ],
        [[("node-b", 0), ("node-a", 1)]],
        [{"node-a": 1, "node-b": 0}],
        False,
        id="node a and b both impact current min match",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
        -1,
        [
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
        ],
        [[("node-a", 1), ("node-b", 1)]],
        [{"node-a": 1, "node-b": 1}],
        False,
        id="only node a impacts current min match",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
        -1,
        [
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
        ],
        [[("node-a", 0), ("node-b", 1)]],
        [{"node-a": 0, "node-b": 1}],
        False,
        id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
        -1,
        [
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
        ],
        1,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
        ],
        [[("node-a", 0), ("node-b", 2)]],
        [{"node-a": 0, "node-b": 2}],
        False,
        id="add pod on non-critical node won't trigger re-calculation",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
        -1,
        [],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        [[("zone2", 0), ("zone1", 1)], [("node-x", 0), ("node-a", 1)]],
        [{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}],
        False,
        id="node a and x both impact topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
        -1,
        [
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        [[("zone1", 1), ("zone2", 1)], [("node-a", 1), ("node-x", 1)]],
        [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
        False,
        id="only node a impacts topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
        -1,
        [
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        [[("zone2", 1), ("zone1", 3)], [("node-a", 1), ("node-x", 1)]],
        [{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}],
        False,
        id="node a impacts topologyKeyToMinPodsMap on node, node x impacts "
        "topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
        -1,
        [
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-x2").node("node-x").label("bar", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        [[("zone2", 1), ("zone1", 2)], [("node-a", 0), ("node-b", 1)]],
        [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}],
        False,
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on"
        " zone",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
        -1,
        [
            MakePod().name("p-b1").node("node-b").label("bar", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-x2").node("node-x").label("bar", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        [[("zone1", 1), ("zone2", 1)], [("node-a", 1), ("node-b", 1)]],
        [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
        False,
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on"
        " both zone and node",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("foo", ["bar"])
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
        -1,
        [
            MakePod().name("p-a2").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        0,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        [[("zone2", 1), ("", 2147483647)]],
        [{"zone2": 1}],
        False,
        id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy "
        "disabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("foo", ["bar"])
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
        -1,
        [
            MakePod().name("p-a2").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        0,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        [[("zone2", 1), ("", 2147483647)]],
        [{"zone2": 1}],
        True,
        id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        -1,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        1,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        [[("zone1", 1), ("zone2", 2)]],
        [{"zone1": 1, "zone2": 2}],
        False,
        id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        -1,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        1,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        [[("zone1", 1), ("zone2", 2)]],
        [{"zone1": 1, "zone2": 2}],
        True,
        id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-b1").node("node-b").label("zone", "zone2").obj(),
        -1,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        1,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        [[("zone1", 1), ("zone2", 1)]],
        [{"zone1": 1, "zone2": 1}],
        True,
        id="add a label selector not matched pod when with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        -1,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        1,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .taints(TAINTS)
            .obj(),
            MakeNode().name("node-b").label("zone", "zone2").label("node", "node-b").obj(),
        ],
        [[("zone1", 1), ("zone2", 2)]],
        [{"zone2": 2, "zone1": 1}],
        False,
        id="add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        -1,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        1,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .taints(TAINTS)
            .obj(),
            MakeNode().name("node-b").label("zone", "zone2").label("node", "node-b").obj(),
        ],
        [[("zone1", 1), ("zone2", 2)]],
        [{"zone2": 2, "zone1": 1}],
        True,
        id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "added", "_idx", "existing", "node_idx", "nodes", "paths", "counts", "_policy"),
    ADD_POD,
)
def test_pre_filter_state_add_pod(
    preemptor: Pod,
    added: Pod,
    _idx: int,
    existing: list[Pod],
    node_idx: int,
    nodes: list[Node],
    paths: list[list[tuple[str, int]]],
    counts: list[dict[str, int]],
    _policy: bool,
) -> None:
    s = _state_after(preemptor, added, existing, node_idx, nodes, 1)
    assert s.counts == counts
    assert _sorted_paths(s.paths) == _want_paths(paths)


REMOVE_POD = [
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        None,
        0,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        [[("zone1", 1), ("zone2", 1)]],
        [{"zone1": 1, "zone2": 1}],
        False,
        id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        None,
        0,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 1), ("zone2", 2)]],
        [{"zone1": 1, "zone2": 2}],
        False,
        id="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        None,
        0,
        [
            MakePod().name("p-a0").node("node-a").label("bar", "").obj(),
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 2), ("zone2", 2)]],
        [{"zone1": 2, "zone2": 2}],
        False,
        id="delete an irrelevant pod won't help",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a0").node("node-a").label("bar", "").obj(),
        -1,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        0,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 2), ("zone2", 2)]],
        [{"zone1": 2, "zone2": 2}],
        False,
        id="delete a non-existing pod won't help",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        None,
        3,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-x2").node("node-x").label("foo", "").obj(),
        ],
        2,
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        [[("zone2", 1), ("zone1", 3)], [("node-b", 1), ("node-x", 1)]],
        [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}],
        False,
        id="two spreadConstraints",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("foo", ["bar"])
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
        -1,
        [
            MakePod().name("p-a2").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        0,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        [[("zone2", 1), ("", 2147483647)]],
        [{"zone2": 1}],
        False,
        id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy "
        "disabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("foo", ["bar"])
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
        -1,
        [
            MakePod().name("p-a2").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        0,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        [[("zone2", 1), ("", 2147483647)]],
        [{"zone2": 1}],
        True,
        id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy "
        "enabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        -1,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        1,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        [[("zone2", 0), ("zone1", 1)]],
        [{"zone2": 0, "zone1": 1}],
        False,
        id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy "
        "disabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        MakePod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        -1,
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        1,
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        [[("zone2", 0), ("zone1", 1)]],
        [{"zone2": 0, "zone1": 1}],
        True,
        id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy "
        "enabled",
    ),
]


@pytest.mark.parametrize(
    (
        "preemptor",
        "deleted",
        "deleted_idx",
        "existing",
        "node_idx",
        "nodes",
        "paths",
        "counts",
        "_policy",
    ),
    REMOVE_POD,
)
def test_pre_filter_state_remove_pod(
    preemptor: Pod,
    deleted: Pod | None,
    deleted_idx: int,
    existing: list[Pod],
    node_idx: int,
    nodes: list[Node],
    paths: list[list[tuple[str, int]]],
    counts: list[dict[str, int]],
    _policy: bool,
) -> None:
    if 0 <= deleted_idx < len(existing):
        deleted = existing[deleted_idx]
    assert deleted is not None
    s = _state_after(preemptor, deleted, existing, node_idx, nodes, -1)
    assert s.counts == counts
    assert _sorted_paths(s.paths) == _want_paths(paths)


# -- default constraints and args --------------------------------------------------------------

_ZONED = [
    MakeNode().name("a").label("zone", "z1").label(HOSTNAME, "a").obj(),
    MakeNode().name("b").label("zone", "z2").label(HOSTNAME, "b").obj(),
]


def test_system_defaults_need_a_workload_selector() -> None:
    """Without Services/controllers known to the Handle, no default constraint applies."""
    plugin, handle = _plugin([], _ZONED, {})
    pod = MakePod().label("foo", "").obj()
    assert plugin.pre_filter(CycleState(), pod, handle.snapshot.node_infos)[1].code is Code.SKIP
    assert plugin.pre_score(CycleState(), pod, list(handle.snapshot)).code is Code.SKIP


def test_listed_default_constraints_filter_pods_of_a_workload() -> None:
    args: dict[str, object] = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        ],
    }
    existing = [MakePod().node("a").label("foo", "").obj()]
    snap = snapshot(existing, _ZONED)
    plugin = podtopologyspread.new(args, _ServiceHandle(snap))
    pod = MakePod().label("foo", "").obj()
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap.node_infos)[1].ok
    a, b = snap.get("a"), snap.get("b")
    assert a is not None and b is not None
    assert plugin.filter(state, pod, a).code is Code.UNSCHEDULABLE
    assert plugin.filter(state, pod, b).ok
    # A pod with constraints of its own ignores the defaults.
    own = MakePod().label("foo", "").spread_constraint(5, "zone", "DoNotSchedule", FOO).obj()
    state = CycleState()
    assert plugin.pre_filter(state, own, snap.node_infos)[1].ok
    assert plugin.filter(state, own, a).ok
    # A pod no Service selects gets none.
    other = MakePod().label("bar", "").obj()
    assert plugin.pre_filter(CycleState(), other, snap.node_infos)[1].code is Code.SKIP


def test_an_invalid_selector_is_an_error() -> None:
    bad = MakeLabelSelector().in_("foo", []).obj()
    pod = MakePod().spread_constraint(1, "zone", "DoNotSchedule", bad).obj()
    plugin, handle = _plugin([], _ZONED)
    status = plugin.pre_filter(CycleState(), pod, handle.snapshot.node_infos)[1]
    assert status.code is Code.ERROR


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "ScheduleAnyway"}
                ]
            },
            "must be empty",
            id="System with constraints",
        ),
        pytest.param({"defaultingType": "Other"}, "Unsupported value", id="unknown defaulting"),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            "greater than zero",
            id="maxSkew 0",
        ),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "z",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {},
                    }
                ],
            },
            "must not define a selector",
            id="selector in a default constraint",
        ),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            "Duplicate value",
            id="duplicate constraint",
        ),
        pytest.param({"defaultingType": "List", "x": 1}, "unknown field", id="unknown field"),
    ],
)
def test_invalid_args_are_refused(args: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        podtopologyspread.new(args, FakeHandle(snapshot([], [])))


@pytest.mark.parametrize("seed", range(40))
def test_add_and_remove_pod_counts_agree_with_a_fresh_pre_filter(seed: int) -> None:
    """The domain counts after AddPod/RemovePod are those PreFilter computes from scratch.

    (The critical paths may differ, as upstream's do: an update only lets a domain in.)
    """
    rng = random.Random(seed)
    nodes = []
    for i in range(5):
        node = MakeNode().name(f"n{i}").label(HOSTNAME, f"n{i}")
        if rng.random() < 0.8:
            node.label("zone", rng.choice(["z1", "z2", "z3"]))
        if rng.random() < 0.3:
            node.taints(TAINTS)
        nodes.append(node.obj())
    pods = []
    for i in range(10):
        pod = MakePod().name(f"p{i}").node(rng.choice(nodes).name)
        pod.namespace(rng.choice(["", "other"]))
        if rng.random() < 0.7:
            pod.label("foo", "")
        pods.append(pod.obj())
    incoming = (
        MakePod()
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, rng.choice([None, 4]))
        .spread_constraint(
            2, HOSTNAME, "DoNotSchedule", FOO, None, None, rng.choice([None, "Honor"])
        )
        .obj()
    )
    victim = pods[rng.randrange(len(pods))]

    def counts_of(existing: list[Pod]) -> tuple[Any, Any, Any]:
        plugin, handle = _plugin(existing, nodes)
        state = CycleState()
        assert plugin.pre_filter(state, incoming, handle.snapshot.node_infos)[1].ok
        return plugin, state, handle

    plugin, state, handle = counts_of(pods)
    node = handle.snapshot.get(victim.spec.node_name)
    assert node is not None
    assert plugin.remove_pod(state, incoming, pod_info(victim), node).ok
    _, fresh, _ = counts_of([p for p in pods if p is not victim])
    key = "PreFilterPodTopologySpread"
    nonzero = [{k: v for k, v in c.items() if v} for c in state.read(key).counts]
    assert nonzero == [{k: v for k, v in c.items() if v} for c in fresh.read(key).counts]
    assert plugin.add_pod(state, incoming, pod_info(victim), node).ok
    _, full, _ = counts_of(pods)
    assert state.read(key).counts == full.read(key).counts


# -- TestPreFilterState ------------------------------------------------------------------------

PRE_FILTER_STATE = [
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            5,
            "zone",
            "DoNotSchedule",
            MakeLabelSelector().label("foo", "bar").obj(),
            None,
            None,
            None,
            None,
        )
        .obj(),
        [],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 0), ("zone2", 0)]],
        [{"zone1": 0, "zone2": 0}],
        id="clean cluster with one spreadConstraint",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 2), ("zone1", 3)]],
        [{"zone1": 3, "zone2": 2}],
        id="normal case with one spreadConstraint",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", None, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 0), ("zone1", 0)]],
        [{"zone1": 0, "zone2": 0}],
        id="normal case with null label selector",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
            MakeNode().name("node-o").label("zone", "zone3").label("node", "node-o").obj(),
            MakeNode().name("node-p").label("zone", "zone3").label("node", "node-p").obj(),
        ],
        [[("zone3", 0), ("zone2", 2)]],
        [{"zone1": 3, "zone2": 2, "zone3": 0}],
        id="normal case with one spreadConstraint, on a 3-zone cluster",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").namespace("ns1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").namespace("ns2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 1), ("zone1", 2)]],
        [{"zone1": 2, "zone2": 1}],
        id="namespace mismatch doesn't count",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 3), ("zone2", 4)], [("node-x", 0), ("node-b", 1)]],
        [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        id="normal case with two spreadConstraints",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 3), ("zone2", 4)], [("node-b", 1), ("node-a", 2)]],
        [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        id="soft spreadConstraints should be bypassed",
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
            MakePod().name("p-a").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b").node("node-b").label("bar", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 0), ("zone1", 1)], [("node-a", 0), ("node-y", 0)]],
        [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
        id="different labelSelectors - simple version",
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
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").label("bar", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 3), ("zone2", 4)], [("node-b", 0), ("node-a", 1)]],
        [{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}],
        id="different labelSelectors - complex pods",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("node", ["node-x"])
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 3), ("zone2", 4)], [("node-b", 1), ("node-a", 2)]],
        [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        id="two spreadConstraints, and with podAffinity",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 3), ("zone2", 4)], [("node-x", 0), ("node-b", 1)]],
        [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        id="TpKeyToDomainsNum is calculated when MinDomains is enabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("bar", "").obj(),
            MakePod().name("p-b").node("node-b").label("bar", "").obj(),
            MakePod().name("p-c").node("node-b").label("bar", "").obj(),
            MakePod().name("p-d").node("node-c").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        [[("node-a", 1), ("node-b", 2)]],
        [{"node-a": 1, "node-b": 2}],
        id="feature gate disabled with NodeAffinityPolicy",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("bar", "").obj(),
            MakePod().name("p-b").node("node-b").label("bar", "").obj(),
            MakePod().name("p-c").node("node-b").label("bar", "").obj(),
            MakePod().name("p-d").node("node-c").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        [[("node-a", 1), ("node-b", 2)]],
        [{"node-a": 1, "node-b": 2}],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, "Ignore", None, None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("bar", "").obj(),
            MakePod().name("p-b").node("node-b").label("bar", "").obj(),
            MakePod().name("p-c").node("node-b").label("bar", "").obj(),
            MakePod().name("p-d").node("node-c").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        [[("node-c", 0), ("node-a", 1)]],
        [{"node-a": 1, "node-b": 2, "node-c": 0}],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("bar", "").obj(),
            MakePod().name("p-c").node("node-b").label("bar", "").obj(),
            MakePod().name("p-d").node("node-b").label("bar", "").obj(),
            MakePod().name("p-e").node("node-c").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        [[("node-a", 1), ("node-b", 2)]],
        [{"node-a": 1, "node-b": 2}],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, "Ignore", None, None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("bar", "").obj(),
            MakePod().name("p-b").node("node-b").label("bar", "").obj(),
            MakePod().name("p-c").node("node-b").label("bar", "").obj(),
            MakePod().name("p-d").node("node-c").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").label("foo", "").obj(),
            MakeNode().name("node-b").label("node", "node-b").label("foo", "").obj(),
            MakeNode().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        [[("node-c", 0), ("node-a", 1)]],
        [{"node-a": 1, "node-b": 2, "node-c": 0}],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("bar", "").obj(),
            MakePod().name("p-b").node("node-b").label("bar", "").obj(),
            MakePod().name("p-c").node("node-b").label("bar", "").obj(),
            MakePod().name("p-d").node("node-c").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
            MakeNode().name("node-c").label("node", "node-c").taints(TAINTS).label("bar", "").obj(),
        ],
        [[("node-c", 0), ("node-a", 1)]],
        [{"node-a": 1, "node-b": 2, "node-c": 0}],
        id="feature gate disabled with NodeTaintsPolicy",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("bar", "").obj(),
            MakePod().name("p-b").node("node-b").label("bar", "").obj(),
            MakePod().name("p-c").node("node-b").label("bar", "").obj(),
            MakePod().name("p-d").node("node-c").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
            MakeNode().name("node-c").label("node", "node-c").taints(TAINTS).label("bar", "").obj(),
        ],
        [[("node-c", 0), ("node-a", 1)]],
        [{"node-a": 1, "node-b": 2, "node-c": 0}],
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, "Honor", None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("bar", "").obj(),
            MakePod().name("p-b").node("node-b").label("bar", "").obj(),
            MakePod().name("p-c").node("node-b").label("bar", "").obj(),
            MakePod().name("p-d").node("node-c").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
            MakeNode().name("node-c").label("node", "node-c").taints(TAINTS).label("bar", "").obj(),
        ],
        [[("node-a", 1), ("node-b", 2)]],
        [{"node-a": 1, "node-b": 2}],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable")
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, "Honor", None)
        .obj(),
        [
            MakePod().name("p-a").node("node-a").label("bar", "").obj(),
            MakePod().name("p-b").node("node-b").label("bar", "").obj(),
            MakePod().name("p-c").node("node-b").label("bar", "").obj(),
            MakePod().name("p-d").node("node-c").obj(),
        ],
        [
            MakeNode().name("node-a").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("node", "node-b").obj(),
            MakeNode().name("node-c").label("node", "node-c").taints(TAINTS).label("bar", "").obj(),
        ],
        [[("node-c", 0), ("node-a", 1)]],
        [{"node-a": 1, "node-b": 2, "node-c": 0}],
        id="NodeTaintsPolicy honored with tolerated taints",
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
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
        ],
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
        ],
        [[("zone1", 0), ("zone2", 1)], [("node-a", 0), ("node-x", 1)]],
        [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
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
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
        ],
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
            .taints(TAINTS)
            .obj(),
            MakeNode()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
        ],
        [[("zone1", 0), ("zone2", 1)], [("node-a", 0), ("node-x", 1)]],
        [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
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
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .taints(TAINTS)
            .obj(),
            MakeNode()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone1", 0), ("zone2", 1)], [("node-b", 0), ("node-x", 1)]],
        [{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}],
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, "Ignore", None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, "Honor", None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-x2").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .taints(TAINTS)
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
            .label("foo", "")
            .obj(),
        ],
        [[("zone1", 2), ("zone2", 3)], [("node-y", 1), ("node-x", 2)]],
        [{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}],
        id="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
    ),
    # "matchLabelKeys ignored when feature gate disabled" is not ported: the gate is on in v1.37.
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "a")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, ["bar"])
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").label("bar", "a").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").label("bar", "a").obj(),
            MakePod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 1), ("zone1", 1)]],
        [{"zone1": 1, "zone2": 1}],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "a")
        .spread_constraint(
            1, "zone", "DoNotSchedule", MakeLabelSelector().obj(), None, None, None, ["foo"]
        )
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "a").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "a").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "a").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "a").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "a").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 2), ("zone1", 3)]],
        [{"zone1": 3, "zone2": 2}],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", None, None, None, None, ["bar"])
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "a").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "a").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "a").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "a").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "a").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 0), ("zone1", 0)]],
        [{"zone1": 0, "zone2": 0}],
        id="key in matchLabelKeys is ignored when LabelSelector is None when feature gate enabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", None, None, None, None, ["bar"])
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "a").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "a").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "a").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "a").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "a").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 0), ("zone1", 0)]],
        [{"zone1": 0, "zone2": 0}],
        id="no pod is matched when LabelSelector is None when feature gate disabled",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, ["bar"])
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "a").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "a").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "a").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "a").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "a").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 2), ("zone1", 3)]],
        [{"zone1": 3, "zone2": 2}],
        id="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "zone", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        [
            MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            MakeNode().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        [[("zone2", 1), ("zone1", 2)], [("zone1", 1), ("zone2", 3)]],
        [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}],
        id="two spreadConstraints with the same topologyKey",
    ),
]


@pytest.mark.parametrize(("pod", "pods", "nodes", "paths", "counts"), PRE_FILTER_STATE)
def test_pre_filter_state(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    paths: list[list[tuple[str, int]]],
    counts: list[dict[str, int]],
) -> None:
    plugin, handle = _plugin(pods, nodes)
    state = CycleState()
    assert plugin.pre_filter(state, pod, handle.snapshot.node_infos)[1].ok
    s = state.read("PreFilterPodTopologySpread")
    assert s.counts == counts
    assert _sorted_paths(s.paths) == _want_paths(paths)


def _c(max_skew: int, key: str, mode: str) -> dict[str, object]:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": mode}


@pytest.mark.parametrize(
    ("pod", "defaults", "service", "want_keys"),
    [
        pytest.param(
            MakePod().name("p").label("foo", "bar").label("baz", "kar").obj(),
            [
                _c(3, "node", "DoNotSchedule"),
                _c(2, "node", "ScheduleAnyway"),
                _c(5, "rack", "DoNotSchedule"),
            ],
            {"foo": "bar"},
            [("node", 3), ("rack", 5)],
            id="default constraints and a service",
        ),
        pytest.param(
            MakePod().name("p").label("foo", "bar").obj(),
            [_c(3, "node", "DoNotSchedule")],
            {"baz": "kep"},
            None,
            id="default constraints and a service that doesn't match",
        ),
        pytest.param(
            MakePod()
            .name("p")
            .label("foo", "bar")
            .label("baz", "tar")
            .spread_constraint(
                1, "zone", "DoNotSchedule", MakeLabelSelector().label("baz", "tar").obj()
            )
            .spread_constraint(
                2, "planet", "ScheduleAnyway", MakeLabelSelector().label("fot", "rok").obj()
            )
            .obj(),
            [_c(2, "node", "DoNotSchedule")],
            {"foo": "bar"},
            [("zone", 1)],
            id="default constraints and a service, but pod has constraints",
        ),
        pytest.param(
            MakePod().name("p").label("foo", "bar").obj(),
            [_c(2, "node", "ScheduleAnyway")],
            {"foo": "bar"},
            None,
            id="default soft constraints and a service",
        ),
        pytest.param(
            MakePod().name("p").label("foo", "").obj(),
            [],
            {"foo": "bar"},
            None,
            id="skip if not specified",
        ),
    ],
)
def test_pre_filter_state_default_constraints(
    pod: Pod,
    defaults: list[dict[str, object]],
    service: dict[str, str],
    want_keys: list[tuple[str, int]] | None,
) -> None:
    """TestPreFilterState's cases with a Service: which constraints PreFilter keeps."""
    snap = snapshot(
        [], [MakeNode().name("node-a").label("zone", "zone1").label("node", "node-a").obj()]
    )
    args = {"defaultingType": "List", "defaultConstraints": defaults}
    plugin = podtopologyspread.new(args, _ServiceHandle(snap, service))
    state = CycleState()
    status = plugin.pre_filter(state, pod, snap.node_infos)[1]
    if want_keys is None:
        assert status.code is Code.SKIP
        return
    s = state.read("PreFilterPodTopologySpread")
    assert [(c.topology_key, c.max_skew) for c in s.constraints] == want_keys


# -- TestPreScoreStateEmptyNodes, TestPreScoreSkip ---------------------------------------------

PRE_SCORE_STATE = [
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        [["zone1", "zone2"], []],
        [2, 3],
        [],
        id="normal case",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", None, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        [["zone1", "zone2"]],
        [2],
        [],
        id="null selector",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, HOSTNAME, "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            MakeNode().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            MakeNode().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            MakeNode().name("node-x").label(HOSTNAME, "node-x").obj(),
        ],
        [["zone1"], []],
        [1, 2],
        ["node-x"],
        id="node-x doesn't have label zone",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        [["zone1", "zone2"]],
        [2],
        [],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", "ScheduleAnyway", BAR, None, "Ignore", None, None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        [["zone1", "zone2"]],
        [2],
        [],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "zone", "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        [["zone1", "zone2"]],
        [2],
        [],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "zone", "ScheduleAnyway", BAR, None, "Ignore", None, None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            MakeNode().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        [["zone1", "zone2"]],
        [2],
        [],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", BAR, None, None, "Honor", None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            MakeNode()
            .name("node-x")
            .label("zone", "zone2")
            .label(HOSTNAME, "node-x")
            .taints(TAINTS)
            .obj(),
        ],
        [["zone1", "zone2"]],
        [2],
        [],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            MakeNode()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            MakeNode()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            MakeNode()
            .name("node-x")
            .label("zone", "zone2")
            .label(HOSTNAME, "node-x")
            .taints(TAINTS)
            .obj(),
        ],
        [["zone1", "zone2"]],
        [2],
        [],
        id="NodeTaintsPolicy ignored",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "domains", "sizes", "ignored"), PRE_SCORE_STATE)
def test_pre_score_state_empty_nodes(
    pod: Pod, nodes: list[Node], domains: list[list[str]], sizes: list[int], ignored: list[str]
) -> None:
    plugin, handle = _plugin([], nodes)
    state = CycleState()
    assert plugin.pre_score(state, pod, list(handle.snapshot)).ok
    s = state.read("PreScorePodTopologySpread")
    assert [sorted(c) for c in s.counts] == domains
    assert all(v == 0 for c in s.counts for v in c.values())
    assert s.weights == tuple(math.log(n + 2) for n in sizes)
    assert sorted(s.ignored) == ignored


def test_pre_score_skip() -> None:
    """TestPreScoreSkip: "the pod doesn't have soft topology spread Constraints"."""
    nodes = [MakeNode().name(n).label(HOSTNAME, n).obj() for n in ("node-a", "node-b")]
    plugin, handle = _plugin([], nodes)
    pod = MakePod().name("p").namespace("default").obj()
    assert plugin.pre_score(CycleState(), pod, list(handle.snapshot)).code is Code.SKIP


def test_max_skew_one_spreads_three_replicas_one_per_node() -> None:
    """The issue's second row: maxSkew 1, DoNotSchedule, three nodes: 1-1-1, not 2-1-0."""
    nodes = [MakeNode().name(n).label(HOSTNAME, n).obj() for n in ("a", "b", "c")]
    placed: list[Pod] = []
    for i in range(3):
        replica = (
            MakePod()
            .name(f"r{i}")
            .label("app", "web")
            .spread_constraint(
                1, HOSTNAME, "DoNotSchedule", MakeLabelSelector().label("app", "web").obj()
            )
        )
        plugin, handle = _plugin(placed, nodes)
        state = CycleState()
        assert plugin.pre_filter(state, replica.obj(), handle.snapshot.node_infos)[1].ok
        fits = [n.name for n in handle.snapshot if plugin.filter(state, replica.obj(), n).ok]
        placed.append(replica.node(fits[0]).obj())
    assert sorted(p.spec.node_name for p in placed) == ["a", "b", "c"]
