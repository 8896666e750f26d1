"""NodeInfo's bookkeeping of a pod beyond its requests, and the images snapshots carry.

As upstream's `NodeInfo.AddPod`/`RemovePod` (kube-scheduler v1.37.2, pkg/scheduler/framework
types.go): host ports, PVC reference counts and the two affinity lists follow the pods.
"""

from __future__ import annotations

from typing import Any

from dra_operator.controllers.scheduler.framework import (
    HostPort,
    ImageState,
    NodeInfoCache,
    build_snapshot,
    node_info,
    pod_info,
)
from dra_operator.model import parse_node, parse_pod

_TERM = {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "a"}}}


def _pod(name: str, spec: dict[str, Any]) -> Any:
    spec = {"containers": [{"name": "c"}], "nodeName": "n", **spec}
    meta = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    return parse_pod({"metadata": meta, "spec": spec})


def _node(name: str, images: list[dict[str, Any]] | None = None) -> Any:
    status = {"allocatable": {"pods": "10"}, "images": images or []}
    return parse_node({"metadata": {"name": name}, "status": status})


def test_adding_and_removing_pods_follows_ports_claims_and_affinity() -> None:
    ports = _pod(
        "ports",
        {
            "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}],
            "initContainers": [
                {
                    "name": "s",
                    "restartPolicy": "Always",
                    "ports": [{"hostPort": 9, "protocol": "UDP"}],
                }
            ],
            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    )
    also = _pod(
        "also", {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]}
    )
    affine = _pod(
        "affine",
        {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}}},
    )
    anti = _pod(
        "anti",
        {
            "affinity": {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}
            }
        },
    )
    info = node_info(_node("n"))
    for pod in (ports, also, affine, anti):
        info.add_pod(pod_info(pod))
    assert info.used_ports == {HostPort("0.0.0.0", "TCP", 8080), HostPort("0.0.0.0", "UDP", 9)}
    assert info.pvc_ref_counts == {"ns/data": 2}
    assert [p.pod.metadata.name for p in info.pods_with_affinity] == ["affine", "anti"]
    assert [p.pod.metadata.name for p in info.pods_with_required_anti_affinity] == ["anti"]

    info.remove_pod("uid-ports")
    info.remove_pod("uid-anti")
    assert info.used_ports == set()
    assert info.pvc_ref_counts == {"ns/data": 1}
    assert [p.pod.metadata.name for p in info.pods_with_affinity] == ["affine"]
    assert info.pods_with_required_anti_affinity == []


def test_snapshots_and_the_cache_count_the_nodes_having_each_image() -> None:
    image = {"names": ["registry/app"], "sizeBytes": 100}
    a, b = _node("a", [image]), _node("b", [image, {"names": ["other:1"], "sizeBytes": 5}])
    snapshot = build_snapshot([a, b], [])
    state = ImageState(100, 2)
    images = {info.name: dict(info.images) for info in snapshot}
    assert images == {
        "a": {"registry/app:latest": state},
        "b": {"registry/app:latest": state, "other:1": ImageState(5, 1)},
    }

    cache = NodeInfoCache()
    cache.node_changed(a)
    cache.node_changed(b)
    assert {info.name: dict(info.images) for info in cache.snapshot()} == images
    cache.node_deleted("b")
    alone = cache.snapshot().get("a")
    assert alone is not None and alone.images == {"registry/app:latest": ImageState(100, 1)}
