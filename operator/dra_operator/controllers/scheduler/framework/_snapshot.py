"""NodeInfos built from nodes and pods: a one-off `Snapshot`, and the `PodInfo` of one pod.

`build_snapshot` is for callers that hold plain lists (the differential test, `explain` on a
dump); the live scheduler keeps its NodeInfos incrementally (`NodeInfoCache`) instead of
building them again for every pod.

Only pods that are bound (`spec.nodeName`) and not terminal count on a node: kube-scheduler's
cache leaves Succeeded and Failed pods out. Pods naming a node the snapshot does not have are
ignored, as upstream keeps them on a placeholder NodeInfo that no cycle lists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from dra_operator.controllers.scheduler.framework._images import node_image_states
from dra_operator.controllers.scheduler.framework._nodeinfo import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    PODS,
    NodeInfo,
    PodInfo,
    Snapshot,
)
from dra_operator.controllers.scheduler.framework._requests import to_units
from dra_operator.model import Container, FrozenMap, Node, Pod, Quantity, effective_requests

_TERMINAL = ("Succeeded", "Failed")
_DEFAULT_CPU = Quantity.parse(f"{DEFAULT_MILLI_CPU_REQUEST}m")
_DEFAULT_MEMORY = Quantity(DEFAULT_MEMORY_REQUEST)
_ZERO = Quantity(0)


def counts_on_node(pod: Pod) -> bool:
    """Whether `pod` occupies room on its node: bound and not finished."""
    return bool(pod.spec.node_name) and pod.status.phase not in _TERMINAL


def pod_info(pod: Pod) -> PodInfo:
    """The pod with its requests (`resource.PodRequests`) and its non-zero requests (the same,
    with 100m cpu and 200 MiB memory for each container that names neither), in units."""
    requests = to_units(pod.effective_requests)
    spec = pod.spec
    if spec.init_containers or spec.resource_requests:
        defaulted = dataclasses.replace(
            spec,
            containers=tuple(_non_zero(c) for c in spec.containers),
            init_containers=tuple(_non_zero(c) for c in spec.init_containers),
        )
        non_zero = to_units(effective_requests(defaulted))
        cpu, memory = non_zero.get(CPU, 0), non_zero.get(MEMORY, 0)
    else:  # the sum of the containers, each defaulted, plus the overhead: no need to replace
        cpu = sum(_milli(c.requests.get(CPU), _DEFAULT_CPU) for c in spec.containers)
        total = spec.overhead.get(MEMORY, _ZERO)
        for c in spec.containers:
            total = total + c.requests.get(MEMORY, _DEFAULT_MEMORY)
        cpu += _milli(spec.overhead.get(CPU), _ZERO)
        memory = total.int_value()
    return PodInfo(pod=pod, requests=requests, non_zero_requests={CPU: cpu, MEMORY: memory})


def _milli(quantity: Quantity | None, default: Quantity) -> int:
    return (quantity if quantity is not None else default).milli_value()


def _non_zero(container: Container) -> Container:
    requests = container.requests
    if CPU in requests and MEMORY in requests:
        return container
    filled = dict(requests)
    filled.setdefault(CPU, _DEFAULT_CPU)
    filled.setdefault(MEMORY, _DEFAULT_MEMORY)
    return dataclasses.replace(container, requests=FrozenMap(filled))


def node_info(node: Node) -> NodeInfo:
    """A NodeInfo without pods: the node's allocatable in units, with its pod capacity."""
    allocatable = to_units(node.allocatable)
    pods = node.allocatable.get(PODS)
    if pods is not None:
        allocatable[PODS] = pods.int_value()
    return NodeInfo(node=node, allocatable=allocatable)


def build_snapshot(nodes: Iterable[Node], pods: Iterable[Pod]) -> Snapshot:
    """Every node with the pods bound to it; see the module docstring."""
    nodes = list(nodes)
    images = node_image_states(nodes)
    infos = {node.name: node_info(node) for node in nodes}
    for name, info in infos.items():
        info.images = images.get(name, {})
    for pod in pods:
        target = infos.get(pod.spec.node_name) if counts_on_node(pod) else None
        if target is not None:
            target.add_pod(pod_info(pod))
    return Snapshot(list(infos.values()))
