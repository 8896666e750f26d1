"""Node filtering: each kube-scheduler Filter plugin's reason, from raw nodes and pods."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler import NodeRequests, node_problems
from dra_operator.model import FrozenMap, Quantity, parse_node, parse_pod

from .builders import node, pod

NOTHING_PLACED = NodeRequests(FrozenMap(), 0)


def _affinity(key: str, *values: str) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
                ]
            }
        }
    }


def _with(raw: dict[str, Any], **spec: Any) -> dict[str, Any]:
    raw["spec"].update(spec)
    return raw


@pytest.mark.parametrize(
    ("node_raw", "pod_raw", "placed", "expected"),
    [
        pytest.param(node("n"), pod("p"), NOTHING_PLACED, [], id="fits"),
        pytest.param(
            node("n", ready=False),
            pod("p"),
            NOTHING_PLACED,
            ["node(s) were not ready"],
            id="not-ready",
        ),
        pytest.param(
            node("n", unschedulable=True),
            pod("p"),
            NOTHING_PLACED,
            ["node(s) were unschedulable"],
            id="unschedulable",
        ),
        pytest.param(
            node("n", unschedulable=True),
            pod(
                "p",
                tolerations=[
                    {
                        "key": "node.kubernetes.io/unschedulable",
                        "operator": "Exists",
                        "effect": "NoSchedule",
                    }
                ],
            ),
            NOTHING_PLACED,
            [],
            id="unschedulable-tolerated",
        ),
        pytest.param(
            node("n", taints=[("gpu", "yes", "NoSchedule")]),
            pod("p"),
            NOTHING_PLACED,
            ["node(s) had untolerated taint(s)"],
            id="taint-noschedule",
        ),
        pytest.param(
            node("n", taints=[("gpu", "yes", "NoExecute")]),
            pod("p", tolerations=[{"key": "gpu", "operator": "Equal", "value": "yes"}]),
            NOTHING_PLACED,
            [],
            id="taint-tolerated",
        ),
        pytest.param(
            node("n", taints=[("gpu", "yes", "PreferNoSchedule")]),
            pod("p"),
            NOTHING_PLACED,
            [],
            id="taint-prefer-is-no-filter",
        ),
        pytest.param(
            node("n", labels={"zone": "a"}),
            pod("p", node_selector={"zone": "b"}),
            NOTHING_PLACED,
            ["node(s) didn't match Pod's node affinity/selector"],
            id="node-selector",
        ),
        pytest.param(
            node("n", labels={"zone": "a"}),
            pod("p", node_selector={"zone": "a"}),
            NOTHING_PLACED,
            [],
            id="node-selector-matches",
        ),
        pytest.param(
            node("n", labels={"zone": "a"}),
            _with(pod("p"), affinity=_affinity("zone", "b")),
            NOTHING_PLACED,
            ["node(s) didn't match Pod's node affinity/selector"],
            id="required-affinity",
        ),
        pytest.param(
            node("n"),
            pod("p", cpu="5"),
            NOTHING_PLACED,
            ["Insufficient cpu"],
            id="cpu",
        ),
        pytest.param(
            node("n"),
            pod("p", cpu="2"),
            NodeRequests(FrozenMap({"cpu": Quantity.parse("3")}), 1),
            ["Insufficient cpu"],
            id="cpu-used-by-placed-pods",
        ),
        pytest.param(
            node("n", allocatable={"cpu": "4", "pods": "1"}),
            pod("p"),
            NodeRequests(FrozenMap(), 1),
            ["Too many pods"],
            id="pods",
        ),
        pytest.param(
            node("n"),
            _with(
                pod("p"),
                containers=[{"name": "c", "resources": {"requests": {"example.com/fpga": "1"}}}],
            ),
            NOTHING_PLACED,
            ["Insufficient example.com/fpga"],
            id="extended-resource-missing",
        ),
        pytest.param(
            node("n", ready=False, taints=[("a", "", "NoSchedule")]),
            pod("p", cpu="9"),
            NOTHING_PLACED,
            ["node(s) were not ready", "node(s) had untolerated taint(s)", "Insufficient cpu"],
            id="every-reason-counts",
        ),
    ],
)
def test_node_problems(
    node_raw: dict[str, Any], pod_raw: dict[str, Any], placed: NodeRequests, expected: list[str]
) -> None:
    the_pod = parse_pod(pod_raw)
    got = node_problems(parse_node(node_raw), the_pod, the_pod.effective_requests, placed)
    assert got == expected
