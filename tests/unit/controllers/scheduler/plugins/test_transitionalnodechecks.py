"""TransitionalNodeChecks: each kube-scheduler Filter plugin's reason, from raw nodes and pods."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler import default_framework
from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    build_snapshot,
    evaluate,
)
from dra_operator.controllers.scheduler.plugins.transitionalnodechecks import (
    NAME,
    delegate_to_dra,
)
from dra_operator.model import FrozenMap, Quantity, parse_node, parse_pod

from ..builders import node, pod

NOTHING_PLACED: tuple[str | None, ...] = ()  # the cpu requests of the pods already on the node


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
            ("3",),
            ["Insufficient cpu"],
            id="cpu-used-by-placed-pods",
        ),
        pytest.param(
            node("n", allocatable={"cpu": "4", "pods": "1"}),
            pod("p"),
            (None,),
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
    node_raw: dict[str, Any],
    pod_raw: dict[str, Any],
    placed: tuple[str | None, ...],
    expected: list[str],
) -> None:
    the_pod = parse_pod(pod_raw)
    on_node = [
        parse_pod(pod(f"placed-{i}", cpu=cpu, node_name="n")) for i, cpu in enumerate(placed)
    ]
    snapshot = build_snapshot([parse_node(node_raw)], on_node)
    verdict = evaluate(default_framework(), the_pod, snapshot).filter["n"]
    assert list(verdict.reasons) == expected
    if expected:
        assert verdict.plugin == NAME
        resolvable = all(r == "Too many pods" or r.startswith("Insufficient") for r in expected)
        assert verdict.code is (
            Code.UNSCHEDULABLE if resolvable else Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        )


def test_extended_resources_delegated_to_dra_are_not_checked_where_the_node_lacks_them() -> None:
    the_pod = parse_pod(
        _with(
            pod("p"),
            containers=[{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}],
        )
    )
    plain = parse_node(node("plain"))
    native = parse_node(node("native", allocatable={"cpu": "4", "example.com/gpu": "0"}))
    snapshot = build_snapshot([plain, native], [])
    state = CycleState()
    delegate_to_dra(state, FrozenMap({"example.com/gpu": Quantity(1)}))
    found = evaluate(default_framework(), the_pod, snapshot, state=state)
    assert found.filter["plain"].ok and found.filter["native"].ok
    without = evaluate(default_framework(), the_pod, snapshot)
    assert without.filter["plain"].reasons == ("Insufficient example.com/gpu",)
