"""Fake Ready Nodes: what a kubelet would register, for a control plane that has none.

The demo and the tests place pods on these; nothing runs on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra_operator.kube import NODES, Client

__all__ = ["create_ready_node", "node_manifest"]


def node_manifest(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    capacity: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A Node object as a kubelet would register it (without the kubelet)."""
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110", **(capacity or {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                **(labels or {}),
            },
        },
        "status": {"capacity": resources, "allocatable": resources},
    }


async def create_ready_node(
    api: Client,
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    capacity: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Create `name` and make it look Ready and schedulable; returns the node as stored."""
    manifest = node_manifest(name, labels=labels, capacity=capacity)
    await api.create(NODES, manifest)
    # TaintNodesByCondition admission adds node.kubernetes.io/not-ready on create; with no node
    # lifecycle controller to lift it, we lift it (as upstream's DRA integration tests do).
    await api.patch(NODES, name, {"spec": {"taints": []}})
    ready = {
        "type": "Ready",
        "status": "True",
        "reason": "KubeletReady",
        "message": "fake node: no kubelet runs here",
    }
    status = {**manifest["status"], "conditions": [ready]}
    return await api.patch(NODES, name, {"status": status}, subresource="status")
