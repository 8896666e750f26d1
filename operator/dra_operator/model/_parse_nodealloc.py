"""Parsers of the node-allocatable DRA fields (`model._nodealloc`): a device's
`nodeAllocatableResources` and a pod's `status.nodeAllocatableResourceClaimStatuses`."""

from __future__ import annotations

from dra_operator.model._frozen import FrozenMap
from dra_operator.model._nodealloc import (
    NodeAllocatableClaimStatus,
    NodeAllocatableMapping,
    NodeAllocatableOverhead,
    NodeAllocatableOverheadAmount,
    NodeAllocatableResource,
)
from dra_operator.model._parse_common import (
    Raw,
    as_object,
    list_of,
    map_of,
    opt_object,
    opt_quantity,
    opt_str,
    req_str,
    str_list,
)
from dra_operator.model._quantity import Quantity


def _resource(value: object, path: str) -> NodeAllocatableResource:
    raw = as_object(value, path)
    mapping = opt_object(raw, "mapping", path)
    overhead = opt_object(raw, "overhead", path)
    return NodeAllocatableResource(
        mapping=None
        if mapping is None
        else NodeAllocatableMapping(
            capacity_key=opt_str(mapping, "capacityKey", f"{path}.mapping"),
            capacity_multiplier=opt_quantity(mapping, "capacityMultiplier", f"{path}.mapping"),
            device_multiplier=opt_quantity(mapping, "deviceMultiplier", f"{path}.mapping"),
        ),
        overhead=None
        if overhead is None
        else NodeAllocatableOverhead(
            per_pod=opt_quantity(overhead, "perPod", f"{path}.overhead"),
            per_container=opt_quantity(overhead, "perContainer", f"{path}.overhead"),
        ),
    )


def node_allocatable_resources(raw: Raw, path: str) -> FrozenMap[str, NodeAllocatableResource]:
    """A device's `nodeAllocatableResources` (resource name -> mapping and overhead)."""
    return map_of(raw, "nodeAllocatableResources", path, _resource)


def _mapped(value: object, path: str) -> tuple[str, Quantity]:
    raw = as_object(value, path)
    quantity = opt_quantity(raw, "quantity", path)
    return req_str(raw, "name", path), quantity if quantity is not None else Quantity(0)


def _overhead(value: object, path: str) -> NodeAllocatableOverheadAmount:
    raw = as_object(value, path)
    return NodeAllocatableOverheadAmount(
        name=req_str(raw, "name", path),
        per_pod=opt_quantity(raw, "perPod", path),
        per_container=opt_quantity(raw, "perContainer", path),
    )


def node_allocatable_claim_status(value: object, path: str) -> NodeAllocatableClaimStatus:
    raw = as_object(value, path)
    return NodeAllocatableClaimStatus(
        resource_claim_name=req_str(raw, "resourceClaimName", path),
        containers=str_list(raw, "containers", path),
        mapping=list_of(raw, "mapping", path, _mapped),
        overhead=list_of(raw, "overhead", path, _overhead),
    )
