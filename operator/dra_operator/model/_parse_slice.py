"""ResourceSlice and DeviceTaintRule from raw JSON of any served resource.k8s.io version.

v1 and v1beta2 share one shape (flat `Device`, pointer node fields). v1beta1 and v1alpha3 keep
device fields under `basic` and write the slice's `nodeName`/`allNodes` as plain string/bool,
where "" and false mean unset (upstream's conversion maps them to nil). v1alpha3 capacities are
bare quantities. Attribute and capacity names are stored qualified with the slice's driver.
"""

from __future__ import annotations

from collections.abc import Callable

from dra_operator.errors import InvalidObjectError
from dra_operator.model._frozen import FrozenMap
from dra_operator.model._parse_common import (
    BASIC_VERSIONS,
    FLAT_VERSIONS,
    Raw,
    as_bool,
    as_int,
    as_object,
    as_str,
    check_version,
    child,
    condition,
    list_of,
    map_of,
    metadata,
    opt_bool,
    opt_node_selector,
    opt_object,
    opt_quantity,
    opt_str,
    opt_timestamp,
    qualify,
    quantity,
    req_object,
    req_str,
    required,
    str_list,
    str_or_empty,
)
from dra_operator.model._parse_nodealloc import node_allocatable_resources
from dra_operator.model._quantity import Quantity
from dra_operator.model._types import (
    AttributeKind,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceCounterConsumption,
    DeviceTaint,
    DeviceTaintRule,
    DeviceTaintSelector,
    ResourcePool,
    ResourceSlice,
)

_Reader = Callable[[object, str], int | bool | str]
_SCALAR: dict[str, tuple[AttributeKind, _Reader]] = {
    "int": (AttributeKind.INT, as_int),
    "bool": (AttributeKind.BOOL, as_bool),
    "string": (AttributeKind.STRING, as_str),
    "version": (AttributeKind.VERSION, as_str),
}
_LIST: dict[str, tuple[AttributeKind, _Reader]] = {
    "ints": (AttributeKind.INTS, as_int),
    "bools": (AttributeKind.BOOLS, as_bool),
    "strings": (AttributeKind.STRINGS, as_str),
    "versions": (AttributeKind.VERSIONS, as_str),
}


def device_attribute(value: object, path: str) -> DeviceAttribute:
    """Exactly one member may be set; none set gives kind None (CEL sees no value)."""
    raw = as_object(value, path)
    # Look only at the members present: a hot path when a slice has thousands of devices.
    found: list[DeviceAttribute] = []
    for name, member in raw.items():
        if member is None:
            continue
        if name in _SCALAR:
            kind, read = _SCALAR[name]
            found.append(DeviceAttribute(kind=kind, value=read(member, child(path, name))))
        elif name in _LIST:
            kind, read = _LIST[name]
            items = list_of(raw, name, path, read)
            if items:
                found.append(DeviceAttribute(kind=kind, value=items))  # type: ignore[arg-type]
    if len(found) > 1:
        raise InvalidObjectError(path, "must have exactly one value")
    return found[0] if found else DeviceAttribute(kind=None)


def _policy_range(value: object, path: str) -> CapacityRequestPolicyRange:
    raw = as_object(value, path)
    return CapacityRequestPolicyRange(
        min=quantity(required(raw, "min", path), child(path, "min")),
        max=opt_quantity(raw, "max", path),
        step=opt_quantity(raw, "step", path),
    )


def _request_policy(value: object, path: str) -> CapacityRequestPolicy:
    raw = as_object(value, path)
    valid_range = opt_object(raw, "validRange", path)
    return CapacityRequestPolicy(
        default=opt_quantity(raw, "default", path),
        valid_values=list_of(raw, "validValues", path, quantity),
        valid_range=None
        if valid_range is None
        else _policy_range(valid_range, child(path, "validRange")),
    )


def device_capacity(value: object, path: str) -> DeviceCapacity:
    raw = as_object(value, path)
    policy = opt_object(raw, "requestPolicy", path)
    return DeviceCapacity(
        value=quantity(required(raw, "value", path), child(path, "value")),
        request_policy=None
        if policy is None
        else _request_policy(policy, child(path, "requestPolicy")),
    )


def _plain_capacity(value: object, path: str) -> DeviceCapacity:
    return DeviceCapacity(value=quantity(value, path))


def _counter(value: object, path: str) -> Quantity:
    return quantity(required(as_object(value, path), "value", path), child(path, "value"))


def _counters(raw: Raw, path: str) -> FrozenMap[str, Quantity]:
    return map_of(raw, "counters", path, _counter)


def _counter_consumption(value: object, path: str) -> DeviceCounterConsumption:
    raw = as_object(value, path)
    return DeviceCounterConsumption(
        counter_set=req_str(raw, "counterSet", path),
        counters=_counters(raw, path),
        compatibility_groups=str_list(raw, "compatibilityGroups", path),
    )


def counter_set(value: object, path: str) -> CounterSet:
    raw = as_object(value, path)
    return CounterSet(name=req_str(raw, "name", path), counters=_counters(raw, path))


def device_taint(value: object, path: str) -> DeviceTaint:
    raw = as_object(value, path)
    return DeviceTaint(
        key=req_str(raw, "key", path),
        value=str_or_empty(raw, "value", path),
        effect=req_str(raw, "effect", path),
        time_added=opt_timestamp(raw, "timeAdded", path),
    )


def _device(value: object, path: str, driver: str, version: str) -> Device:
    raw = as_object(value, path)
    name = req_str(raw, "name", path)
    if version in FLAT_VERSIONS:
        body, body_path = raw, path
    else:
        body = opt_object(raw, "basic", path) or {}
        body_path = child(path, "basic")
    capacity_item = _plain_capacity if version == "v1alpha3" else device_capacity
    names = qualify(driver)
    return Device(
        name=name,
        attributes=map_of(body, "attributes", body_path, device_attribute, names),
        capacity=map_of(body, "capacity", body_path, capacity_item, names),
        consumes_counters=list_of(body, "consumesCounters", body_path, _counter_consumption),
        node_name=opt_str(body, "nodeName", body_path),
        node_selector=opt_node_selector(body, "nodeSelector", body_path),
        all_nodes=opt_bool(body, "allNodes", body_path),
        taints=list_of(body, "taints", body_path, device_taint),
        binds_to_node=opt_bool(body, "bindsToNode", body_path),
        binding_conditions=str_list(body, "bindingConditions", body_path),
        binding_failure_conditions=str_list(body, "bindingFailureConditions", body_path),
        allow_multiple_allocations=opt_bool(body, "allowMultipleAllocations", body_path),
        node_allocatable_resources=node_allocatable_resources(body, body_path),
    )


def _pool(raw: Raw, path: str) -> ResourcePool:
    return ResourcePool(
        name=req_str(raw, "name", path),
        generation=as_int(required(raw, "generation", path), child(path, "generation")),
        resource_slice_count=as_int(
            required(raw, "resourceSliceCount", path), child(path, "resourceSliceCount")
        ),
    )


def parse_resource_slice(raw: Raw, version: str = "v1") -> ResourceSlice:
    """A ResourceSlice in the shape of `version` (v1, v1beta2, v1beta1, v1alpha3)."""
    check_version(version)
    spec = req_object(raw, "spec", "")
    driver = req_str(spec, "driver", "spec")
    node_name = opt_str(spec, "nodeName", "spec")
    all_nodes = opt_bool(spec, "allNodes", "spec")
    if version in BASIC_VERSIONS:
        node_name = node_name or None
        all_nodes = all_nodes or None
    return ResourceSlice(
        metadata=metadata(raw),
        driver=driver,
        pool=_pool(req_object(spec, "pool", "spec"), "spec.pool"),
        node_name=node_name,
        node_selector=opt_node_selector(spec, "nodeSelector", "spec"),
        all_nodes=all_nodes,
        per_device_node_selection=opt_bool(spec, "perDeviceNodeSelection", "spec"),
        devices=list_of(spec, "devices", "spec", lambda v, p: _device(v, p, driver, version)),
        shared_counters=list_of(spec, "sharedCounters", "spec", counter_set),
        skip_node_operations=str_list(spec, "skipNodeOperations", "spec"),
        partition_type_attribute=opt_str(spec, "partitionTypeAttribute", "spec"),
    )


def parse_device_taint_rule(raw: Raw, version: str = "v1") -> DeviceTaintRule:
    """A DeviceTaintRule (v1alpha3, v1beta2 and v1 share the shape)."""
    check_version(version)
    spec = req_object(raw, "spec", "")
    selector = opt_object(spec, "deviceSelector", "spec")
    status = opt_object(raw, "status", "") or {}
    path = "spec.deviceSelector"
    return DeviceTaintRule(
        metadata=metadata(raw),
        device_selector=None
        if selector is None
        else DeviceTaintSelector(
            driver=opt_str(selector, "driver", path),
            pool=opt_str(selector, "pool", path),
            device=opt_str(selector, "device", path),
        ),
        taint=device_taint(required(spec, "taint", "spec"), "spec.taint"),
        conditions=list_of(status, "conditions", "status", condition),
    )
