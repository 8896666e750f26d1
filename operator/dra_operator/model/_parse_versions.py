"""The parsers the caches call with the served version, v1alpha2 (1.27–1.30) included.

v1alpha2 has its own types (`model.v1alpha2`); what the controllers need of its classes,
claims and templates is translated here into the v1-shaped model, so that they read one shape
(architecture rule 2). A ResourceClass becomes a DeviceClass carrying `driver_name`,
`structured_parameters` and `suitable_nodes`; a claim names its class in
`resource_class_name` (no device requests), `allocationMode: Immediate` becomes `immediate`, and
an allocation becomes `{node_selector: availableOnNodes, controller: status.driverName,
shareable}` — `controller` only when a driver made it (no handle carries 1.30's
`structuredData`), as 1.31's `allocation.controller` says. 1.30's named instances become
device results `{driver, pool: structuredData.nodeName, device: instance}` (`named_devices`),
so the ledger counts them like any device and no instance is handed out twice. Writes go back in
the server's own shape: they are built from the raw objects read (reservedFor,
deallocationRequested), and the fake classic driver writes v1alpha2 allocations itself.
"""

from __future__ import annotations

from dra_operator.model import _parse_claim
from dra_operator.model._parse_common import Raw
from dra_operator.model._types import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceClaim,
    DeviceClass,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceClaimStatus,
    ResourceClaimTemplate,
)
from dra_operator.model.v1alpha2 import _parse as v1alpha2
from dra_operator.model.v1alpha2 import _types as t

__all__ = [
    "named_devices",
    "parse_device_class",
    "parse_resource_claim",
    "parse_resource_claim_template",
]

V1ALPHA2 = t.VERSION


def parse_device_class(raw: Raw, version: str = "v1") -> DeviceClass:
    """A DeviceClass, or a v1alpha2 ResourceClass seen as one."""
    if version != V1ALPHA2:
        return _parse_claim.parse_device_class(raw, version)
    resource_class = v1alpha2.parse_resource_class(raw)
    return DeviceClass(
        metadata=resource_class.metadata,
        suitable_nodes=resource_class.suitable_nodes,
        driver_name=resource_class.driver_name,
        structured_parameters=bool(resource_class.structured_parameters),
    )


NAMED_REQUEST = "namedResources"
"""The request name of a translated named-resources result (v1alpha2 requests have none)."""


def named_devices(allocation: t.AllocationResult) -> DeviceAllocationResult:
    """The instances of 1.30's `structuredData` handles as device results (pool: the node)."""
    results = []
    for handle in allocation.resource_handles:
        data = handle.structured_data
        for result in data.results if data is not None else ():
            if data is not None and result.named_resources is not None:
                results.append(
                    DeviceRequestAllocationResult(
                        request=NAMED_REQUEST,
                        driver=handle.driver_name,
                        pool=data.node_name,
                        device=result.named_resources.name,
                    )
                )
    return DeviceAllocationResult(results=tuple(results))


def _status(status: t.ResourceClaimStatus) -> ResourceClaimStatus:
    allocation = status.allocation
    if allocation is None:
        translated = None
    else:
        by_driver = not any(h.structured_data is not None for h in allocation.resource_handles)
        translated = AllocationResult(
            devices=named_devices(allocation),
            node_selector=allocation.available_on_nodes,
            controller=status.driver_name if by_driver else "",
            shareable=allocation.shareable,
        )
    return ResourceClaimStatus(
        allocation=translated,
        reserved_for=status.reserved_for,
        deallocation_requested=status.deallocation_requested,
    )


def parse_resource_claim(
    raw: Raw, version: str = "v1", *, spec: DeviceClaim | None = None
) -> ResourceClaim:
    """A ResourceClaim (`spec`: see `_parse_claim.parse_resource_claim`)."""
    if version != V1ALPHA2:
        return _parse_claim.parse_resource_claim(raw, version, spec=spec)
    claim = v1alpha2.parse_resource_claim(raw)
    return ResourceClaim(
        metadata=claim.metadata,
        status=_status(claim.status),
        resource_class_name=claim.spec.resource_class_name,
        immediate=claim.spec.allocation_mode == t.IMMEDIATE,
    )


def parse_resource_claim_template(raw: Raw, version: str = "v1") -> ResourceClaimTemplate:
    """A ResourceClaimTemplate; a v1alpha2 one has no device requests to show."""
    if version != V1ALPHA2:
        return _parse_claim.parse_resource_claim_template(raw, version)
    template = v1alpha2.parse_resource_claim_template(raw)
    return ResourceClaimTemplate(
        metadata=template.metadata, template_metadata=template.template_metadata
    )
