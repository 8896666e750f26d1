"""Node-allocatable resources through DRA (KEP-5517, gate DRANodeAllocatableResources, alpha).

A device may stand for node-allocatable resources (`cpu`, `memory`, `hugepages-*`): its
`nodeAllocatableResources` map says, per resource, how much an allocation of it *is* that
resource (`mapping`) and what host overhead it costs (`overhead`). The scheduler records per
pod what its claims amount to (`pod.status.nodeAllocatableResourceClaimStatuses`), and from
then on those amounts are part of the pod's requests, as container requests are
(k8s.io/api v0.37.2 resource/v1 and core/v1; k8s.io/component-helpers v0.37.2 resource,
`addDRANodeAllocatableClaimResources`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dra_operator.model._frozen import FrozenMap
from dra_operator.model._quantity import Quantity


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeAllocatableMapping:
    """Either `capacity_key` with `capacity_multiplier` (amount = the consumed capacity of that
    key x multiplier) or `device_multiplier` (amount = devices x multiplier)."""

    capacity_key: str | None = None
    capacity_multiplier: Quantity | None = None
    device_multiplier: Quantity | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeAllocatableOverhead:
    """Per pod: `per_pod` + `per_container` x the containers that reference the claim."""

    per_pod: Quantity | None = None
    per_container: Quantity | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeAllocatableResource:
    """At least one of the two is set (API validation)."""

    mapping: NodeAllocatableMapping | None = None
    overhead: NodeAllocatableOverhead | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeAllocatableOverheadAmount:
    name: str
    per_pod: Quantity | None = None
    per_container: Quantity | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeAllocatableClaimStatus:
    """One `pod.status.nodeAllocatableResourceClaimStatuses[]` entry: what one claim amounts
    to for the pod (`mapping` and `overhead` sorted by name, as the scheduler writes them)."""

    resource_claim_name: str
    containers: tuple[str, ...] = ()
    mapping: tuple[tuple[str, Quantity], ...] = ()
    overhead: tuple[NodeAllocatableOverheadAmount, ...] = ()


def claim_requests(statuses: Iterable[NodeAllocatableClaimStatus]) -> FrozenMap[str, Quantity]:
    """What the pod's claims add to its requests: every mapped amount, and each overhead's
    `perPod` plus `perContainer` times the containers referencing the claim."""
    total: dict[str, Quantity] = {}
    zero = Quantity(0)
    for status in statuses:
        for name, amount in status.mapping:
            total[name] = total.get(name, zero) + amount
        for overhead in status.overhead:
            amount = zero
            if overhead.per_pod is not None:
                amount = amount + overhead.per_pod
            if overhead.per_container is not None and status.containers:
                amount = amount + overhead.per_container * len(status.containers)
            total[overhead.name] = total.get(overhead.name, zero) + amount
    return FrozenMap(total)
