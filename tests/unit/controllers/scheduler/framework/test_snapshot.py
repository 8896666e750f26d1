"""NodeInfos from nodes and pods: requests in framework units, which pods count."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import (
    CPU,
    MEMORY,
    build_snapshot,
    pod_info,
)
from dra_operator.model import Pod, parse_node, parse_pod

MiB = 1024 * 1024


def make_node(name: str, cpu: str = "4", pods: str = "110") -> Any:
    return parse_node(
        {
            "metadata": {"name": name},
            "status": {
                "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods, "x.com/gpu": "2"}
            },
        }
    )


def make_pod(
    name: str,
    node: str = "",
    *,
    containers: list[dict[str, str]] | None = None,
    phase: str = "",
    uid: str = "",
    labels: dict[str, str] | None = None,
) -> Pod:
    spec: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "resources": {"requests": requests}}
            if requests
            else {"name": f"c{i}"}
            for i, requests in enumerate(containers if containers is not None else [{"cpu": "1"}])
        ]
    }
    if node:
        spec["nodeName"] = node
    return parse_pod(
        {
            "metadata": {
                "name": name,
                "namespace": "ns",
                "uid": uid or f"uid-{name}",
                "labels": labels or {},
            },
            "spec": spec,
            "status": {"phase": phase} if phase else {},
        }
    )


@pytest.mark.parametrize(
    ("containers", "requests", "non_zero"),
    [
        pytest.param([{}], {}, {CPU: 100, MEMORY: 200 * MiB}, id="nothing requested"),
        pytest.param(
            [{"cpu": "250m"}, {"memory": "1Gi"}],
            {CPU: 250, MEMORY: 1024 * MiB},
            {CPU: 350, MEMORY: 1224 * MiB},
            id="defaults per container",
        ),
        pytest.param(
            [{"cpu": "1500m", "memory": "1.5", "x.com/gpu": "1", "unknown": "3"}],
            {CPU: 1500, MEMORY: 2, "x.com/gpu": 1},
            {CPU: 1500, MEMORY: 2},
            id="units: millicores, whole units rounded up, untracked names dropped",
        ),
    ],
)
def test_pod_info_requests(
    containers: list[dict[str, str]], requests: dict[str, int], non_zero: dict[str, int]
) -> None:
    info = pod_info(make_pod("p", containers=containers))
    assert dict(info.requests) == requests
    assert dict(info.non_zero_requests) == non_zero


def test_a_snapshot_counts_bound_running_pods_on_known_nodes_only() -> None:
    snapshot = build_snapshot(
        [make_node("b"), make_node("a", cpu="2")],
        [
            make_pod("p1", "a"),
            make_pod("p2", "a", containers=[{"cpu": "500m"}]),
            make_pod("done", "a", phase="Succeeded"),
            make_pod("failed", "b", phase="Failed"),
            make_pod("pending"),
            make_pod("elsewhere", "gone"),
        ],
    )
    assert [n.name for n in snapshot] == ["a", "b"]
    a, b = snapshot.node_infos
    assert dict(a.allocatable) == {CPU: 2000, MEMORY: 8 * 1024 * MiB, "pods": 110, "x.com/gpu": 2}
    assert [p.key for p in a.pods] == ["ns/p1", "ns/p2"]
    assert a.requested == {CPU: 1500}
    assert a.non_zero_requested == {CPU: 1500, MEMORY: 400 * MiB}
    assert b.pods == [] and b.requested == {}


def test_pod_info_of_a_pod_with_an_init_container_defaults_each_container() -> None:
    pod = parse_pod(
        {
            "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
            "spec": {
                "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            },
        }
    )
    info = pod_info(pod)
    assert dict(info.requests) == {CPU: 2000}
    assert dict(info.non_zero_requests) == {CPU: 2000, MEMORY: 200 * MiB}
