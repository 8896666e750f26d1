"""The canonical, version-neutral DRA objects, shaped like resource.k8s.io/v1.

Everything here is frozen and hashable (tuples, FrozenMaps), so values can be shared between
caches and the allocator without copies and can key memo tables. Field names are the snake_case
of the v1 API names; enum-like strings keep the exact API spelling. Parsing from raw JSON lives
in the per-version adapters; this module only declares shapes.

Attribute and capacity maps are keyed by *fully qualified* names: an unqualified name published
by a driver is stored as ``<driver>/<name>``, as upstream's CEL environment and constraints
read it.
"""

from __future__ import annotations

import datetime
import enum
from dataclasses import dataclass, field

from dra_operator.model._frozen import FrozenMap
from dra_operator.model._nodealloc import NodeAllocatableResource
from dra_operator.model._quantity import Quantity

# -- core/v1 pieces the control plane reads --------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelector:
    node_selector_terms: tuple[NodeSelectorTerm, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectMeta:
    """The metadata fields controllers read; `name` alone for cluster-scoped kinds."""

    name: str
    namespace: str = ""
    uid: str = ""
    generate_name: str = ""
    resource_version: str = ""
    generation: int = 0
    labels: FrozenMap[str, str] = field(default_factory=FrozenMap)
    annotations: FrozenMap[str, str] = field(default_factory=FrozenMap)
    finalizers: tuple[str, ...] = ()
    owner_references: tuple[OwnerReference, ...] = ()
    deletion_timestamp: datetime.datetime | None = None
    creation_timestamp: datetime.datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnerReference:
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False
    block_owner_deletion: bool = False


# -- devices and slices ----------------------------------------------------------------------


class AttributeKind(enum.Enum):
    """Which member of a DeviceAttribute is set; the list kinds need DRAListTypeAttributes."""

    INT = "int"
    BOOL = "bool"
    STRING = "string"
    VERSION = "version"
    INTS = "ints"
    BOOLS = "bools"
    STRINGS = "strings"
    VERSIONS = "versions"

    # Members are singletons: hash by identity in C, not Enum's Python-level hash of the name
    # (the allocator hashes kinds per device when it groups attribute values).
    __hash__ = object.__hash__


AttributeValue = int | bool | str | tuple[int, ...] | tuple[bool, ...] | tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceAttribute:
    """One attribute value; `kind` None means no member was set (CEL: unsupported value)."""

    kind: AttributeKind | None
    value: AttributeValue | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CapacityRequestPolicyRange:
    min: Quantity
    max: Quantity | None = None
    step: Quantity | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CapacityRequestPolicy:
    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    valid_range: CapacityRequestPolicyRange | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceCapacity:
    value: Quantity
    request_policy: CapacityRequestPolicy | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceTaint:
    key: str
    value: str = ""
    effect: str  # NoSchedule, NoExecute, None (unknown effects are kept and ignored)
    time_added: datetime.datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceCounterConsumption:
    counter_set: str
    counters: FrozenMap[str, Quantity]
    # 1.37, DRADeviceCompatibilityGroups (alpha): with the gate off such slices are ignored
    compatibility_groups: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CounterSet:
    name: str
    counters: FrozenMap[str, Quantity]


@dataclass(frozen=True, slots=True, kw_only=True)
class Device:
    name: str
    attributes: FrozenMap[str, DeviceAttribute] = field(default_factory=FrozenMap)
    capacity: FrozenMap[str, DeviceCapacity] = field(default_factory=FrozenMap)
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool | None = None
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool | None = None
    # DRANodeAllocatableResources (alpha): node-allocatable resources the device stands for
    node_allocatable_resources: FrozenMap[str, NodeAllocatableResource] = field(
        default_factory=FrozenMap
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourcePool:
    name: str
    generation: int
    resource_slice_count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceSlice:
    metadata: ObjectMeta
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()
    # 1.37, DRAOptionalNodeOperations (alpha): node operations the kubelet may skip for these
    # devices ("NodePrepareResources", "NodeUnprepareResources", "*"); unknown values are kept
    skip_node_operations: tuple[str, ...] = ()
    # 1.37, DRAPartitionableDevicesType (alpha): the string attribute naming each
    # counter-consuming device's partition type (read by the pool-status controller)
    partition_type_attribute: str | None = None


# -- classes ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceSelector:
    """A selector; `cel` None means a selector type we do not know (upstream: fatal error)."""

    cel: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class OpaqueDeviceConfiguration:
    driver: str
    parameters: str  # the JSON text of the RawExtension, compact, key order kept


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceClass:
    metadata: ObjectMeta
    selectors: tuple[DeviceSelector, ...] = ()
    config: tuple[OpaqueDeviceConfiguration | None, ...] = ()
    extended_resource_name: str | None = None
    suitable_nodes: NodeSelector | None = None  # 1.31 classic DRA: nodes for classic claims
    # 1.27-1.30 ResourceClass (v1alpha2): the driver of its claims, and whether the scheduler
    # allocates them (1.30 `structuredParameters`) rather than that driver (classic)
    driver_name: str = ""
    structured_parameters: bool = False

    @property
    def classic_driver(self) -> str:
        """The classic driver allocating this class's claims (v1alpha2), or ""."""
        return "" if self.structured_parameters else self.driver_name


# -- claims ----------------------------------------------------------------------------------


class AllocationMode(enum.Enum):
    EXACT_COUNT = "ExactCount"
    ALL = "All"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceToleration:
    key: str = ""
    operator: str = "Equal"  # Equal or Exists
    value: str = ""
    effect: str = ""  # empty tolerates every effect
    toleration_seconds: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CapacityRequirements:
    requests: FrozenMap[str, Quantity] = field(default_factory=FrozenMap)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceDerivedAttribute:
    """1.37, DRADerivedAttributes (alpha): a per-request attribute computed by CEL. Not
    implemented: the allocator refuses such requests, as upstream does with the gate off."""

    name: str
    expression: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ExactDeviceRequest:
    device_class_name: str
    selectors: tuple[DeviceSelector, ...] = ()
    allocation_mode: AllocationMode | str = AllocationMode.EXACT_COUNT  # str: unknown mode
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: CapacityRequirements | None = None
    derived_attributes: tuple[DeviceDerivedAttribute, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceSubRequest:
    name: str
    device_class_name: str
    selectors: tuple[DeviceSelector, ...] = ()
    allocation_mode: AllocationMode | str = AllocationMode.EXACT_COUNT
    count: int = 1
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: CapacityRequirements | None = None
    derived_attributes: tuple[DeviceDerivedAttribute, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceRequest:
    """Exactly one of `exactly` and `first_available` is set (v1 shape)."""

    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceConstraint:
    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceClaimConfiguration:
    requests: tuple[str, ...] = ()
    opaque: OpaqueDeviceConfiguration | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceClaim:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceClaimConfiguration, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceRequestAllocationResult:
    request: str  # "name" or "parent/sub"
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    share_id: str | None = None
    consumed_capacity: FrozenMap[str, Quantity] = field(default_factory=FrozenMap)
    # 1.37, DRAOptionalNodeOperations: the slice's `skipNodeOperations` at allocation time
    skip_node_operations: tuple[str, ...] = ()


class ConfigSource(enum.Enum):
    FROM_CLASS = "FromClass"
    FROM_CLAIM = "FromClaim"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceAllocationConfiguration:
    source: ConfigSource
    requests: tuple[str, ...] = ()
    opaque: OpaqueDeviceConfiguration | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceAllocationResult:
    results: tuple[DeviceRequestAllocationResult, ...] = ()
    config: tuple[DeviceAllocationConfiguration, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AllocationResult:
    devices: DeviceAllocationResult = field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: datetime.datetime | None = None
    controller: str = ""  # 1.31 classic DRA: the driver that allocated (and deallocates)
    # v1alpha2 `shareable` (1.27-1.30): False allows one consumer; None: always shareable
    shareable: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaimConsumerReference:
    resource: str
    name: str
    uid: str
    api_group: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Condition:
    """metav1.Condition (claim device status, DeviceTaintRule status)."""

    type: str
    status: str  # True, False, Unknown
    observed_generation: int = 0
    last_transition_time: datetime.datetime | None = None
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkDeviceData:
    interface_name: str = ""
    ips: tuple[str, ...] = ()
    hardware_address: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class AllocatedDeviceStatus:
    """`status.devices[]`, written by drivers; binding conditions are read from here."""

    driver: str
    pool: str
    device: str
    share_id: str | None = None
    conditions: tuple[Condition, ...] = ()
    data: str | None = None  # the JSON text of the RawExtension, compact, key order kept
    network_data: NetworkDeviceData | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaimStatus:
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()
    devices: tuple[AllocatedDeviceStatus, ...] = ()
    deallocation_requested: bool = False  # 1.31 classic DRA: the driver shall deallocate


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaim:
    metadata: ObjectMeta
    spec: DeviceClaim = field(default_factory=DeviceClaim)
    status: ResourceClaimStatus = field(default_factory=ResourceClaimStatus)
    controller: str = ""  # 1.31 `spec.controller`: a classic driver allocates (docs/classic.md)
    # v1alpha2 (1.27-1.30): the ResourceClass (no device requests; its driver allocates when
    # the class is classic, `classic_driver`) and `allocationMode: Immediate`
    resource_class_name: str = ""
    immediate: bool = False

    @property
    def is_classic(self) -> bool:
        """Whether a classic driver allocates this claim, as far as the claim alone says:
        1.31's `spec.controller`, or an allocation made by a driver. A v1alpha2 claim that is
        not allocated yet needs its class: `classic_driver`."""
        allocation = self.status.allocation
        return bool(self.controller) or (allocation is not None and bool(allocation.controller))

    def classic_driver(self, resource_class: DeviceClass | None = None) -> str:
        """The classic driver that allocates this claim, or "" (the scheduler allocates);
        `resource_class`: the class `resource_class_name` names, when it exists (v1alpha2)."""
        if self.controller:
            return self.controller
        allocation = self.status.allocation
        if allocation is not None:
            return allocation.controller
        return resource_class.classic_driver if resource_class is not None else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaimTemplate:
    metadata: ObjectMeta
    template_metadata: ObjectMeta  # labels/annotations copied to generated claims
    spec: DeviceClaim = field(default_factory=DeviceClaim)


# -- classic DRA (KEP-3063) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceClaimSchedulingStatus:
    """What one driver said about one pod claim: the nodes it cannot allocate it on."""

    name: str  # pod.spec.resourceClaims[].name
    unsuitable_nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PodSchedulingContext:
    """The scheduler's and the classic drivers' exchange about one pod (named like it)."""

    metadata: ObjectMeta
    selected_node: str = ""
    potential_nodes: tuple[str, ...] = ()
    resource_claims: tuple[ResourceClaimSchedulingStatus, ...] = ()

    def unsuitable(self, pod_claim: str) -> tuple[str, ...] | None:
        """The unsuitable nodes of `pod_claim`; None while no driver has answered for it."""
        for entry in self.resource_claims:
            if entry.name == pod_claim:
                return entry.unsuitable_nodes
        return None


# -- taint rules -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceTaintSelector:
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceTaintRule:
    metadata: ObjectMeta
    device_selector: DeviceTaintSelector | None  # None matches no device
    taint: DeviceTaint
    conditions: tuple[Condition, ...] = ()  # status.conditions (EvictionInProgress)


# -- identity of a device --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeviceID:
    """(driver, pool, device): how upstream names one device across the cluster."""

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"
