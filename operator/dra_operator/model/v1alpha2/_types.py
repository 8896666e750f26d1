"""resource.k8s.io/v1alpha2 (Kubernetes 1.27–1.30) as frozen values.

v1alpha2 cannot be mapped onto the v1 shapes: claims name a ResourceClass and a parameters
object instead of device requests, allocations are opaque driver handles (or, in 1.30, a
`structuredData` list of named instances), and the classic protocol has PodSchedulingContext.
So these types stand beside the v1 ones; what both share (metadata, node selectors, consumer
references) is reused. Raw JSON vendor parameters (RawExtension) are kept as compact JSON text
(None: unset, which the API server writes as `null`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from dra_operator.model._quantity import Quantity
from dra_operator.model._types import NodeSelector, ObjectMeta, ResourceClaimConsumerReference

VERSION = "v1alpha2"
IMMEDIATE = "Immediate"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
FINALIZER = "dra.k8s.io/delete-protection"
"""The finalizer 1.30's scheduler puts on claims it allocated (structured parameters)."""


# -- classes and claims ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassParametersReference:
    """ResourceClassParametersReference; `namespace` is set for namespaced kinds."""

    kind: str
    name: str
    api_group: str = ""
    namespace: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimParametersReference:
    """ResourceClaimParametersReference: an object in the claim's namespace."""

    kind: str
    name: str
    api_group: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClass:
    """Fields at top level (no spec); `structured_parameters` True: the scheduler allocates."""

    metadata: ObjectMeta
    driver_name: str
    parameters_ref: ClassParametersReference | None = None
    suitable_nodes: NodeSelector | None = None
    structured_parameters: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaimSpec:
    resource_class_name: str
    parameters_ref: ClaimParametersReference | None = None
    allocation_mode: str = WAIT_FOR_FIRST_CONSUMER  # the server's default


@dataclass(frozen=True, slots=True, kw_only=True)
class NamedResourcesAllocationResult:
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverAllocationResult:
    vendor_request_parameters: str | None = None
    named_resources: NamedResourcesAllocationResult | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StructuredResourceHandle:
    """What 1.30's scheduler writes for a structured allocation, per driver."""

    node_name: str = ""
    vendor_class_parameters: str | None = None
    vendor_claim_parameters: str | None = None
    results: tuple[DriverAllocationResult, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceHandle:
    """One driver's part of an allocation: opaque `data` (classic) or `structured_data`."""

    driver_name: str = ""
    data: str = ""
    structured_data: StructuredResourceHandle | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AllocationResult:
    resource_handles: tuple[ResourceHandle, ...] = ()
    available_on_nodes: NodeSelector | None = None  # None: every node
    shareable: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaimStatus:
    driver_name: str = ""
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()
    deallocation_requested: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaim:
    metadata: ObjectMeta
    spec: ResourceClaimSpec
    status: ResourceClaimStatus = field(default_factory=ResourceClaimStatus)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaimTemplate:
    metadata: ObjectMeta
    template_metadata: ObjectMeta
    spec: ResourceClaimSpec


# -- the classic scheduling protocol ---------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaimSchedulingStatus:
    """A driver's answer for one pod claim (`name` is the pod's claim entry name)."""

    name: str = ""
    unsuitable_nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PodSchedulingContext:
    """Named like its pod and controlled by it; spec written by the scheduler, status by drivers."""

    metadata: ObjectMeta
    selected_node: str = ""
    potential_nodes: tuple[str, ...] = ()
    resource_claims: tuple[ResourceClaimSchedulingStatus, ...] = ()


# -- 1.30 structured parameters: named resources ---------------------------------------------


class NamedAttributeKind(enum.Enum):
    """Which member of a NamedResourcesAttribute is set (its JSON name)."""

    QUANTITY = "quantity"
    BOOL = "bool"
    INT = "int"
    INT_SLICE = "intSlice"
    STRING = "string"
    STRING_SLICE = "stringSlice"
    VERSION = "version"


NamedAttributeValue = Quantity | bool | int | str | tuple[int, ...] | tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class NamedResourcesAttribute:
    """`kind` None: no member was set (the API server refuses that; we keep it visible)."""

    name: str
    kind: NamedAttributeKind | None
    value: NamedAttributeValue | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NamedResourcesInstance:
    name: str
    attributes: tuple[NamedResourcesAttribute, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceSlice:
    """One driver's instances on one node; `instances` None: no named-resources model set."""

    metadata: ObjectMeta
    driver_name: str
    node_name: str = ""
    instances: tuple[NamedResourcesInstance, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class VendorParameters:
    driver_name: str = ""
    parameters: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceFilter:
    """A class filter for one driver; `selector` None: no named-resources filter set."""

    driver_name: str = ""
    selector: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClassParameters:
    metadata: ObjectMeta
    generated_from: ClassParametersReference | None = None
    vendor_parameters: tuple[VendorParameters, ...] = ()
    filters: tuple[ResourceFilter, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceRequest:
    """One instance wanted; `selector` None: the request has no named-resources model."""

    vendor_parameters: str | None = None
    selector: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverRequests:
    driver_name: str = ""
    vendor_parameters: str | None = None
    requests: tuple[ResourceRequest, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaimParameters:
    metadata: ObjectMeta
    generated_from: ClaimParametersReference | None = None
    shareable: bool = False
    driver_requests: tuple[DriverRequests, ...] = ()
