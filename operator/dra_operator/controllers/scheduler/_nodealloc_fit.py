"""Node-allocatable resources through DRA in the scheduler (DRANodeAllocatableResources, alpha):
a device that stands for cpu, memory or hugepages counts against the node's allocatable.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/dynamicresources
(`nodeallocatabledynamicresources.go`):

* Filter, per node, after the claims are allocated there: when a claim of the pod (allocated
  before, or just now) holds a device with `nodeAllocatableResources`, the pod's requests plus
  what its claims amount to (`node_allocatable_statuses`) must fit the node's allocatable minus
  what is requested there: cpu, memory, ephemeral-storage and hugepages, "Insufficient <name>".
* A claim whose allocation holds a device with a `mapping` is never shared by several pods:
  "node allocatable resource claim <name> has a mapped device and cannot be shared across pods".
* PreBind writes the amounts to `pod.status.nodeAllocatableResourceClaimStatuses` (which every
  later NodeResourcesFit counts in the pod's requests).

The check is armed only while some slice publishes such a device (the API server drops the field
while the gate is off), so clusters without them keep reused verdicts.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dra_operator.cluster import ObjectKey, Store
from dra_operator.controllers.scheduler.framework import NodeInfoCache, to_units
from dra_operator.model import (
    AllocationResult,
    Node,
    NodeAllocatableClaimStatus,
    Pod,
    ResourceClaim,
    ResourceSlice,
    UnresolvedClaim,
    effective_requests,
    has_mapped_device,
    mapped_claim_conflict,
    node_allocatable_claim_requests,
    node_allocatable_statuses,
    resolve_claim,
)

_CHECKED = ("cpu", "memory", "ephemeral-storage")
_seen: weakref.WeakKeyDictionary[Store[ResourceSlice], tuple[int, bool]] = (
    weakref.WeakKeyDictionary()
)  # per slice store: (revision, whether any device maps node-allocatable resources)


def _publishes(slices: Store[ResourceSlice]) -> bool:
    """Whether any slice has a device with `nodeAllocatableResources` (cached per revision)."""
    cached = _seen.get(slices)
    if cached is not None and cached[0] == slices.revision:
        return cached[1]
    found = any(d.node_allocatable_resources for e in slices for d in e.obj.devices)
    _seen[slices] = (slices.revision, found)
    return found


@dataclass(frozen=True, slots=True)
class NodeAllocatableFit:
    """The check for one pod's decision; built by `node_allocatable_fit`."""

    pod: Pod
    claims: Mapping[str, ResourceClaim]  # the pod's claim entry names -> claims as cached
    slices: tuple[ResourceSlice, ...]
    node_infos: NodeInfoCache

    def sharing_problem(self) -> str | None:
        """A claim of the pod that holds a mapped device and is reserved for another pod."""
        for claim in self.claims.values():
            if claim.status.allocation is None:
                continue
            conflict = mapped_claim_conflict(self.pod, claim, has_mapped_device(claim, self.slices))
            if conflict is not None:
                return conflict
        return None

    def statuses(
        self, node: Node, allocated: Mapping[str, AllocationResult]
    ) -> tuple[NodeAllocatableClaimStatus, ...]:
        """What the pod's claims amount to on `node`, `allocated` (claim UID -> allocation)
        being this decision's allocations. Raises ValueError with upstream's texts."""
        claims = {
            entry: replace(claim, status=replace(claim.status, allocation=allocation))
            if (allocation := allocated.get(claim.metadata.uid)) is not None
            else claim
            for entry, claim in self.claims.items()
        }
        return node_allocatable_statuses(self.pod, claims, self.slices, node)

    def problems(self, node: Node, allocated: Mapping[str, AllocationResult]) -> list[str]:
        """Filter's reasons on `node`: the pod with its claims' amounts does not fit there."""
        try:
            found = self.statuses(node, allocated)
        except ValueError as exc:
            return [str(exc)]
        if not found:
            return []
        info = self.node_infos.get(node.name)
        if info is None:
            return []
        claimed = node_allocatable_claim_requests(found)
        demand = to_units(effective_requests(self.pod.spec, claimed=claimed))
        reasons = []
        for name in (*_CHECKED, *sorted(n for n in demand if n.startswith("hugepages-"))):
            want = demand.get(name, 0)
            if want > 0 and want > info.allocatable.get(name, 0) - info.requested.get(name, 0):
                reasons.append(f"Insufficient {name}")
        return reasons


def node_allocatable_fit(
    pod: Pod,
    claims: Store[ResourceClaim],
    slices: Store[ResourceSlice],
    node_infos: NodeInfoCache,
) -> NodeAllocatableFit | None:
    """The check for `pod`, or None while no slice publishes node-allocatable devices."""
    if not _publishes(slices):
        return None
    entries: dict[str, ResourceClaim] = {}
    for entry in pod.spec.resource_claims:
        resolved = resolve_claim(pod, entry)
        if isinstance(resolved, UnresolvedClaim) or resolved.name is None:
            continue
        cached = claims.get(ObjectKey(pod.metadata.namespace, resolved.name))
        if cached is not None:
            entries[entry.name] = cached.obj
    return NodeAllocatableFit(pod, entries, tuple(e.obj for e in slices), node_infos)


def allocated_by_uid(
    claims: Sequence[ResourceClaim], results: Sequence[AllocationResult]
) -> dict[str, AllocationResult]:
    """This decision's allocations by claim UID (results in the order of the claims)."""
    return {c.metadata.uid: r for c, r in zip(claims, results, strict=False)}


def status_patch(statuses: Sequence[NodeAllocatableClaimStatus]) -> dict[str, Any]:
    """PreBind's `pods/status` patch (strategic merge; list-map key `resourceClaimName`)."""
    rendered = []
    for status in statuses:
        entry: dict[str, Any] = {"resourceClaimName": status.resource_claim_name}
        if status.containers:
            entry["containers"] = list(status.containers)
        if status.mapping:
            entry["mapping"] = [{"name": n, "quantity": str(q)} for n, q in status.mapping]
        if status.overhead:
            entry["overhead"] = [
                {
                    "name": o.name,
                    **({"perPod": str(o.per_pod)} if o.per_pod is not None else {}),
                    **({"perContainer": str(o.per_container)} if o.per_container else {}),
                }
                for o in status.overhead
            ]
        rendered.append(entry)
    return {"status": {"nodeAllocatableResourceClaimStatuses": rendered}}
