"""Classic DRA (KEP-3063) in a scheduling cycle: the PodSchedulingContext protocol, pure.

A claim with `spec.controller` (1.31), or of a ResourceClass that is not `structuredParameters`
(v1alpha2, 1.27–1.30), is allocated by that classic driver, not by us. For a pod
with such claims still unallocated the scheduler filters nodes as usual plus, per claim, the
device classes' `suitableNodes` and the driver's `unsuitableNodes`; then, as 1.31's
`DynamicResources` does between PreScore and PreBind (classic-dra.md §3.8–3.11), it proposes
the nodes that passed (`potentialNodes`, at most 128, sorted), selects one once every driver
has answered (or the pod has one such claim), publishes that in the context named like the pod
and stops with `waiting for resource driver`. The driver allocates for the selected node; the
claim's update queues the pod, which then binds like any pod with allocated claims, and the
context is deleted (PostBind). PostFilter: when no node fits and an allocated classic claim is
what excludes nodes, the claim is handed back to its driver (`deallocationRequested`).
docs/classic.md says what differs from upstream.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dra_operator.cluster import ObjectKey
from dra_operator.model import (
    DeviceClass,
    Node,
    Pod,
    PodSchedulingContext,
    ResourceClaim,
    node_matches,
)

__all__ = [
    "DEALLOCATION_DONE",
    "PROVIDE_INFORMATION",
    "UNSUITABLE",
    "WAITING_FOR_DRIVER",
    "WAITING_TO_ALLOCATE",
    "ClassicWrite",
    "PendingClaim",
    "PublishContext",
    "RequestDeallocation",
    "class_problem",
    "classic_problems",
    "context_problem",
    "deallocation_candidate",
    "next_step",
    "v1alpha2_problem",
    "waiting_texts",
]

WAITING_FOR_DRIVER = "waiting for resource driver"
WAITING_TO_ALLOCATE = "waiting for resource driver to allocate resource"  # 1.27-1.29
PROVIDE_INFORMATION = "waiting for resource driver to provide information"
UNSUITABLE = "resourceclaim cannot be allocated for the node (unsuitable)"
EXCLUDED_BY_CLASS = "excluded by device class node filter"
EXCLUDED_BY_RESOURCE_CLASS = "excluded by resource class node filter"  # 1.27-1.30
UNALLOCATED_IMMEDIATE = "unallocated immediate resourceclaim"
DEALLOCATION_DONE = "deallocation of ResourceClaim completed"
MAX_NODES = 128  # `PodSchedulingNodeListMaxSize`: longest potentialNodes and unsuitableNodes


def waiting_texts(minor: int) -> tuple[str, str]:
    """What a pod waiting for its classic driver is told on that release: (the driver is to
    allocate, the driver is to answer the context), classic-dra.md §3.1.

    1.27–1.29 stopped in Reserve, whose rejection 1.27 reports as a plugin error and 1.28+ as a
    one-node fit error; 1.30+ publish in PreBind, whose rejection is the bare reason. We publish
    at one point on every release, so only the texts follow the release.
    """
    if minor <= 27:
        wrap = 'running Reserve plugin "DynamicResources": {}'
    else:
        wrap = "0/1 nodes are available: 1 {}."
    allocate = wrap.format(WAITING_TO_ALLOCATE) if minor <= 29 else WAITING_FOR_DRIVER
    return allocate, wrap.format(PROVIDE_INFORMATION)


@dataclass(frozen=True, slots=True)
class PendingClaim:
    """An unallocated classic claim and the pod claim name its driver answers under."""

    pod_claim: str
    claim: ResourceClaim


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishContext:
    """Create or update the pod's PodSchedulingContext with these `spec` fields."""

    pod: ObjectKey
    pod_uid: str
    selected_node: str
    potential_nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestDeallocation:
    """PostFilter: clear the context's `selectedNode` if set, then in one status update empty
    `reservedFor` and set `deallocationRequested` (the API allows exactly that order)."""

    pod: ObjectKey
    claim: ObjectKey
    resource_version: str
    clear_selected_node: bool


ClassicWrite = PublishContext | RequestDeallocation


def class_problem(
    pending: Iterable[PendingClaim], classes: Mapping[str, DeviceClass]
) -> str | None:
    """PreFilter: every request's class must exist (1.31's text)."""
    for item in pending:
        for request in item.claim.spec.requests:
            name = request.exactly.device_class_name if request.exactly is not None else ""
            if not name:
                return f"request {request.name}: unsupported request type"
            if name not in classes:
                return f"request {request.name}: device class {name} does not exist"
    return None


def v1alpha2_problem(claim: ResourceClaim, resource_class: DeviceClass | None) -> str | None:
    """PreFilter for an unallocated v1alpha2 claim (1.30's texts): its ResourceClass exists;
    an `Immediate` claim is allocated without a pod (by its driver; 1.30's scheduler never
    allocates a structured one), so the pod waits for that (the claim's update queues it)."""
    if resource_class is None:
        return f"resource class {claim.resource_class_name} does not exist"
    if claim.immediate:
        return UNALLOCATED_IMMEDIATE
    return None


def context_problem(pod: Pod, context: PodSchedulingContext | None) -> str | None:
    """PreFilter: a context named like the pod must be controlled by it."""
    if context is None:
        return None
    meta = pod.metadata
    if any(o.controller and o.uid == meta.uid for o in context.metadata.owner_references):
        return None
    return (
        f"PodSchedulingContext object with UID {context.metadata.uid} is not owned by "
        f"Pod {meta.namespace}/{meta.name}"
    )


def classic_problems(
    node: Node,
    pending: Sequence[PendingClaim],
    classes: Mapping[str, DeviceClass],
    context: PodSchedulingContext | None,
) -> list[str]:
    """Filter for one node: the classes' `suitableNodes` (the claim's ResourceClass on
    1.27–1.30, every request's DeviceClass on 1.31), then the driver's `unsuitableNodes`."""
    for item in pending:
        resource_class = classes.get(item.claim.resource_class_name)
        selector = resource_class.suitable_nodes if resource_class is not None else None
        if selector is not None and not node_matches(node.name, node.labels, selector):
            return [EXCLUDED_BY_RESOURCE_CLASS]
        for request in item.claim.spec.requests:
            device_class = classes.get(request.exactly.device_class_name if request.exactly else "")
            selector = device_class.suitable_nodes if device_class is not None else None
            if selector is not None and not node_matches(node.name, node.labels, selector):
                return [EXCLUDED_BY_CLASS]
        unsuitable = context.unsuitable(item.pod_claim) if context is not None else None
        if unsuitable is not None and node.name in unsuitable:
            return [UNSUITABLE]
    return []


def next_step(
    pod: Pod,
    pending: Sequence[PendingClaim],
    passing: Sequence[str],
    chosen: str,
    context: PodSchedulingContext | None,
) -> PublishContext | None:
    """PreScore + Reserve + PreBind for the classic claims: what to publish, if anything.

    `passing` are the names of the nodes that passed Filter (sorted), `chosen` the one our
    policy picked among them. None: the context already says all of it, so the pod waits for
    the drivers (`PROVIDE_INFORMATION`).
    """
    known = context.potential_nodes if context is not None else ()
    potential = known
    if len(passing) > 1:
        proposed = tuple(passing[:MAX_NODES])  # upstream: 128 at random, then sorted
        if not set(proposed) <= set(known):
            potential = proposed
    elif chosen not in known:
        potential = (chosen,)
    selected = context.selected_node if context is not None else ""
    answered = sum(
        1
        for item in pending
        if context is not None and context.unsuitable(item.pod_claim) is not None
    )
    if (len(pending) == 1 or answered == len(pending)) and selected != chosen:
        selected = chosen
    if context is not None and potential == known and selected == context.selected_node:
        return None
    return PublishContext(
        pod=ObjectKey(pod.metadata.namespace, pod.metadata.name),
        pod_uid=pod.metadata.uid,
        selected_node=selected,
        potential_nodes=potential,
    )


def deallocation_candidate(
    pod: Pod,
    allocated: Iterable[ResourceClaim],
    nodes: Sequence[Node],
    context: PodSchedulingContext | None,
) -> RequestDeallocation | None:
    """PostFilter: the first allocated classic claim that excludes a node and that no other
    pod uses (upstream picks at random among them; we take pod order). An `Immediate` claim
    (1.27-1.30) is not one: its driver would allocate it again without the pod."""
    uid = pod.metadata.uid
    for claim in allocated:
        allocation = claim.status.allocation
        if allocation is None or not allocation.controller or allocation.node_selector is None:
            continue
        if claim.immediate:
            continue  # 1.27-1.30: only WaitForFirstConsumer claims are handed back
        selector = allocation.node_selector
        if all(node_matches(n.name, n.labels, selector) for n in nodes):
            continue
        if any(ref.uid != uid for ref in claim.status.reserved_for):
            continue
        meta = claim.metadata
        return RequestDeallocation(
            pod=ObjectKey(pod.metadata.namespace, pod.metadata.name),
            claim=ObjectKey(meta.namespace, meta.name),
            resource_version=meta.resource_version,
            clear_selected_node=context is not None and bool(context.selected_node),
        )
    return None
