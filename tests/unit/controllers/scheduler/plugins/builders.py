"""Pods, nodes and NodeInfos for the plugin tests, built from raw JSON as the API serves them.

`node_info` sums the pods' requests, ports and pod count the way kube-scheduler's NodeInfo
does, so a test states a node's state as upstream's tests do: the node and the pods on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dra_operator.controllers.scheduler.framework import (
    PODS,
    CycleState,
    NodeInfo,
    PodInfo,
    Snapshot,
    host_ports,
    node_image_states,
    non_zero_requests,
    pod_requests,
    to_units,
)
from dra_operator.model import Node, Pod, parse_node, parse_pod

Raw = dict[str, Any]


def container(
    name: str = "c",
    *,
    requests: Mapping[str, str] | None = None,
    image: str = "",
    ports: Sequence[Raw] = (),
) -> Raw:
    raw: Raw = {"name": name}
    if requests:
        raw["resources"] = {"requests": dict(requests)}
    if image:
        raw["image"] = image
    if ports:
        raw["ports"] = list(ports)
    return raw


def make_pod(
    name: str = "p",
    *,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    containers: Sequence[Raw] | None = None,
    **spec: Any,
) -> Pod:
    """A pod; `spec` takes the camelCase PodSpec fields (`nodeName`, `tolerations`, ...)."""
    raw_spec: Raw = {"containers": list(containers) if containers is not None else [container()]}
    raw_spec.update(spec)
    meta: Raw = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    return parse_pod({"metadata": meta, "spec": raw_spec})


def make_node(
    name: str = "node",
    *,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Raw] = (),
    allocatable: Mapping[str, str] | None = None,
    unschedulable: bool = False,
    images: Sequence[Raw] = (),
) -> Node:
    spec: Raw = {"taints": list(taints)} if taints else {}
    if unschedulable:
        spec["unschedulable"] = True
    status: Raw = {"allocatable": dict(allocatable or {})}
    if images:
        status["images"] = list(images)
    meta: Raw = {"name": name, "labels": dict(labels or {})}
    return parse_node({"metadata": meta, "spec": spec, "status": status})


def pod_info(pod: Pod) -> PodInfo:
    return PodInfo(pod=pod, requests=pod_requests(pod), non_zero_requests=non_zero_requests(pod))


def node_info(node: Node, pods: Iterable[Pod] = (), *, nodes: Iterable[Node] = ()) -> NodeInfo:
    """NodeInfo of `node` with `pods` on it; `nodes` (with `node`) count image spread."""
    allocatable = to_units(node.allocatable)
    if PODS in node.allocatable:
        allocatable[PODS] = node.allocatable[PODS].int_value()
    states = node_image_states([node, *(n for n in nodes if n.name != node.name)])
    info = NodeInfo(node=node, allocatable=allocatable, images=states.get(node.name, {}))
    for pod in pods:
        pi = pod_info(pod)
        info.pods.append(pi)
        for name, amount in pi.requests.items():
            info.requested[name] = info.requested.get(name, 0) + amount
        for name, amount in pi.non_zero_requests.items():
            info.non_zero_requested[name] = info.non_zero_requested.get(name, 0) + amount
        info.used_ports.update(host_ports(pod))
    return info


class FakeHandle:
    """A Handle over a fixed snapshot."""

    def __init__(self, infos: Sequence[NodeInfo] = ()) -> None:
        self._snapshot = Snapshot(infos)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot


def state() -> CycleState:
    return CycleState()
