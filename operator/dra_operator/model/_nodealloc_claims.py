"""What a pod's allocated claims amount to in node-allocatable resources, and who may share
them (kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/dynamicresources,
`nodeallocatabledynamicresources.go`).

* Devices are looked up among the slices relevant to the node (its own, all-nodes, matching
  node selector, per-device selection where the device must match the node), by driver, pool
  and device.
* Per claim, `mapping` amounts are summed per resource: consumed capacity of `capacityKey` x
  `capacityMultiplier`, or `deviceMultiplier` per device; `overhead` perPod and perContainer
  are summed. A claim with any amount gets a status naming the containers that reference it
  (init containers first), `mapping` and `overhead` sorted by name; statuses sorted by claim.
* A claim whose allocation holds a device with a `mapping` must not be used by another pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dra_operator.model._nodeaffinity import node_matches
from dra_operator.model._nodealloc import (
    NodeAllocatableClaimStatus,
    NodeAllocatableOverheadAmount,
)
from dra_operator.model._pod import Node, Pod
from dra_operator.model._quantity import Quantity
from dra_operator.model._types import Device, ResourceClaim, ResourceSlice

_ONE = Quantity(1)


def _slice_serves(resource_slice: ResourceSlice, node: Node | None) -> bool:
    if node is None:
        return True
    s = resource_slice
    if s.node_name is not None and s.node_name == node.name:
        return True
    if s.all_nodes:
        return True
    if s.node_selector is not None:
        return node_matches(node.name, node.labels, s.node_selector)
    return bool(s.per_device_node_selection)


def _device_matches(device: Device, node: Node | None) -> bool:
    if node is None:
        return True
    if device.node_name is not None and device.node_name == node.name:
        return True
    if device.all_nodes:
        return True
    return device.node_selector is not None and node_matches(
        node.name, node.labels, device.node_selector
    )


def find_device(
    slices: Iterable[ResourceSlice], driver: str, pool: str, name: str, node: Node | None
) -> Device:
    """The allocated device among the node's slices; ValueError with upstream's text."""
    for resource_slice in slices:
        if not _slice_serves(resource_slice, node):
            continue
        if resource_slice.driver != driver or resource_slice.pool.name != pool:
            continue
        for device in resource_slice.devices:
            if device.name == name:
                if resource_slice.per_device_node_selection and not _device_matches(device, node):
                    raise ValueError(f"device {name} does not match node")
                return device
    raise ValueError(f"device {name} not found in pool {pool} for driver {driver}")


def node_allocatable_statuses(
    pod: Pod,
    claims: Mapping[str, ResourceClaim],
    slices: Iterable[ResourceSlice],
    node: Node | None,
) -> tuple[NodeAllocatableClaimStatus, ...]:
    """`buildNodeAllocatableDRAInfo`: `claims` maps the pod's claim entry names to their
    allocated claims. Raises ValueError with upstream's texts."""
    listed = list(slices)
    by_claim: dict[str, NodeAllocatableClaimStatus] = {}
    for claim in claims.values():
        allocation = claim.status.allocation
        if allocation is None:
            continue
        meta = claim.metadata
        mapped: dict[str, Quantity] = {}
        overhead: dict[str, tuple[Quantity | None, Quantity | None]] = {}
        for result in allocation.devices.results:
            try:
                device = find_device(listed, result.driver, result.pool, result.device, node)
            except ValueError as exc:
                raise ValueError(
                    f"claim {meta.namespace}/{meta.name}, device {result.device}, "
                    f"driver {result.driver}: {exc}"
                ) from None
            for resource, entry in device.node_allocatable_resources.items():
                mapping = entry.mapping
                if mapping is not None and mapping.capacity_key:
                    key = mapping.capacity_key
                    if not result.consumed_capacity:
                        raise ValueError(
                            f"claim {meta.namespace}/{meta.name}, device {result.device}: "
                            f"ConsumedCapacity is nil, but Capacity key '{key}' is set in "
                            f"NodeAllocatableResources for resource {resource}"
                        )
                    consumed = result.consumed_capacity.get(key)
                    if consumed is not None:
                        factor = mapping.capacity_multiplier or _ONE
                        amount = Quantity(consumed.value * factor.value, consumed.format)
                        mapped[resource] = mapped.get(resource, Quantity(0)) + amount
                elif mapping is not None and mapping.device_multiplier is not None:
                    mapped[resource] = mapped.get(resource, Quantity(0)) + mapping.device_multiplier
                extra = entry.overhead
                if extra is not None and (extra.per_pod or extra.per_container) is not None:
                    per_pod, per_container = overhead.get(resource, (None, None))
                    overhead[resource] = (
                        _plus(per_pod, extra.per_pod),
                        _plus(per_container, extra.per_container),
                    )
        if mapped or overhead:
            by_claim[meta.uid] = NodeAllocatableClaimStatus(
                resource_claim_name=meta.name,
                mapping=tuple(sorted(mapped.items())),
                overhead=tuple(
                    NodeAllocatableOverheadAmount(name=n, per_pod=p, per_container=c)
                    for n, (p, c) in sorted(overhead.items())
                ),
            )
    uids = {entry: claim.metadata.uid for entry, claim in claims.items()}
    containers: dict[str, list[str]] = {}
    for container in (*pod.spec.init_containers, *pod.spec.containers):
        for ref in container.claims:
            uid = uids.get(ref.name)
            if uid is not None and uid in by_claim:
                containers.setdefault(uid, []).append(container.name)
    statuses = [
        NodeAllocatableClaimStatus(
            resource_claim_name=s.resource_claim_name,
            containers=tuple(containers.get(uid, ())),
            mapping=s.mapping,
            overhead=s.overhead,
        )
        for uid, s in by_claim.items()
    ]
    return tuple(sorted(statuses, key=lambda s: s.resource_claim_name))


def _plus(total: Quantity | None, more: Quantity | None) -> Quantity | None:
    if more is None:
        return total
    return more if total is None else total + more


def has_mapped_device(claim: ResourceClaim, slices: Iterable[ResourceSlice]) -> bool:
    """Whether the claim's allocation holds a device with a node-allocatable `mapping`."""
    allocation = claim.status.allocation
    if allocation is None:
        return False
    listed = list(slices)
    for result in allocation.devices.results:
        try:
            device = find_device(listed, result.driver, result.pool, result.device, None)
        except ValueError:
            continue
        if any(e.mapping is not None for e in device.node_allocatable_resources.values()):
            return True
    return False


def mapped_claim_conflict(pod: Pod, claim: ResourceClaim, has_mapped: bool) -> str | None:
    """`validateNodeAllocatableDRAClaimSharing` without PodGroups' pending allocations: a claim
    with a mapped device reserved for others is not for this pod (UnschedulableAndUnresolvable)."""
    if not has_mapped or not claim.status.reserved_for:
        return None
    group = pod.spec.pod_group_name
    for ref in claim.status.reserved_for:
        if ref.uid == pod.metadata.uid:
            return None
        if (
            group is not None
            and ref.api_group == "scheduling.k8s.io"
            and ref.resource == "podgroups"
            and ref.name == group
        ):
            return None
    return (
        f"node allocatable resource claim {claim.metadata.name} has a mapped device and "
        "cannot be shared across pods"
    )
