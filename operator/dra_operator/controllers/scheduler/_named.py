"""1.30's structured parameters in a scheduling cycle: named resources (resource.k8s.io/v1alpha2).

A v1alpha2 claim of a ResourceClass with `structuredParameters: true` is the scheduler's to
allocate, as in 1.30's kube-scheduler (classic-dra.md §6): PreFilter finds the class's and the
claim's parameter objects (upstream's texts when one is missing), Filter allocates on each node
with `allocator.NamedAllocator` against the instances in use there, read from the ledger
(allocated claims and our in-flight ones, so no instance is handed out twice), and the first
node in name order where every claim fits is chosen: 1.30 scores nothing for these claims, so
the scheduling policy has nothing to weigh. The allocation is written in 1.30's shape
(`NamedWrite`), with the `dra.k8s.io/delete-protection` finalizer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dra_operator.allocator import (
    NamedAllocationError,
    NamedAllocator,
    NamedClaim,
    claim_parameters,
    class_parameters,
)
from dra_operator.cluster import DeviceLedger, ObjectKey, Store
from dra_operator.model import DeviceClass, Node, ResourceClaim, v1alpha2

__all__ = ["NamedInventory", "NamedWrite", "named_claims", "place_named"]


@dataclass(frozen=True, slots=True)
class NamedInventory:
    """1.30's ResourceSlices and parameter objects, as the server serves them."""

    slices: Store[v1alpha2.ResourceSlice]
    class_parameters: Store[v1alpha2.ResourceClassParameters]
    claim_parameters: Store[v1alpha2.ResourceClaimParameters]

    def slices_by_node(self) -> dict[str, list[v1alpha2.ResourceSlice]]:
        """Slices per node, in name order (one pass per decision, not one per node)."""
        found: dict[str, list[v1alpha2.ResourceSlice]] = {}
        for entry in sorted(self.slices, key=lambda e: e.key.name):
            found.setdefault(entry.obj.node_name, []).append(entry.obj)
        return found


@dataclass(frozen=True, slots=True, kw_only=True)
class NamedWrite:
    """What 1.30 writes for an allocation: `status.driverName` and `status.allocation`."""

    driver_name: str
    allocation: v1alpha2.AllocationResult


def named_claims(
    claims: Sequence[ResourceClaim],
    stored: Store[ResourceClaim],
    classes: Store[DeviceClass],
    inventory: NamedInventory,
) -> list[NamedClaim] | str:
    """The claims with their class and parameters (PreFilter), or why they cannot be had."""
    found = []
    class_params = [entry.obj for entry in inventory.class_parameters]
    claim_params = [entry.obj for entry in inventory.claim_parameters]
    for claim in claims:
        claim_entry = stored.get(ObjectKey(claim.metadata.namespace, claim.metadata.name))
        class_entry = classes.get(ObjectKey("", claim.resource_class_name))
        if claim_entry is None or class_entry is None:
            return f"resource class {claim.resource_class_name} does not exist"
        raw_claim = v1alpha2.parse_resource_claim(claim_entry.raw)
        resource_class = v1alpha2.parse_resource_class(class_entry.raw)
        try:
            named = NamedClaim(
                claim=raw_claim,
                resource_class=resource_class,
                class_parameters=class_parameters(resource_class, class_params),
                claim_parameters=claim_parameters(raw_claim, resource_class, claim_params),
            )
        except NamedAllocationError as exc:
            return str(exc)
        found.append(named)
    return found


def place_named(
    candidates: Sequence[Node],
    claims: Sequence[NamedClaim],
    node_filter: Callable[[Node], list[str]],
    ledger: DeviceLedger,
    inventory: NamedInventory,
    allocator: NamedAllocator,
) -> tuple[str, list[NamedWrite]] | list[list[str]]:
    """The first node (in `candidates`' order) where every claim fits, with the writes for
    them; else every node's reasons, for the FitError."""
    drivers = {
        request.driver_name
        for named in claims
        for request in named.claim_parameters.driver_requests
    }
    slices = inventory.slices_by_node()
    rejected = []
    for node in candidates:
        problems = node_filter(node)
        if problems:
            rejected.append(problems)
            continue
        taken = {
            (node.name, device.driver, device.device)
            for driver in drivers
            for device in ledger.in_use_in_pool(driver, node.name)
        }
        try:
            results = allocator.allocate(
                claims,
                node=node.name,
                node_labels=node.labels,
                slices=slices.get(node.name, ()),
                taken=taken,
            )
        except NamedAllocationError as exc:
            rejected.append([str(exc)])
            continue
        writes = [NamedWrite(driver_name=d, allocation=a) for d, a in results]
        return node.name, writes
    return rejected
