"""DeviceClass, ResourceClaim and ResourceClaimTemplate from raw JSON of any served version.

v1 and v1beta2 requests hold either `exactly` or `firstAvailable`; v1beta1 and v1alpha3 requests
are flat (the `exactly` fields sit on the request itself, next to an optional `firstAvailable`).
Both become the v1 shape. The server's defaults are applied as its defaulters do
(`allocationMode` ExactCount, `count` 1 for ExactCount, toleration `operator` Equal), so an object
read back from any version compares equal. Capacity request and consumed-capacity names stay as
written: only the devices in a slice know their driver.
"""

from __future__ import annotations

from dra_operator.errors import InvalidObjectError
from dra_operator.model._parse_common import (
    FLAT_VERSIONS,
    Raw,
    as_object,
    check_version,
    child,
    condition,
    list_of,
    metadata,
    object_meta,
    opt_bool,
    opt_int,
    opt_node_selector,
    opt_object,
    opt_str,
    opt_timestamp,
    quantity_map,
    raw_json,
    req_object,
    req_str,
    required,
    str_list,
    str_or_empty,
)
from dra_operator.model._types import (
    AllocatedDeviceStatus,
    AllocationMode,
    AllocationResult,
    CapacityRequirements,
    ConfigSource,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceClaim,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceConstraint,
    DeviceDerivedAttribute,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    NetworkDeviceData,
    OpaqueDeviceConfiguration,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
    ResourceClaimTemplate,
)


def device_selector(value: object, path: str) -> DeviceSelector:
    raw = as_object(value, path)
    cel = opt_object(raw, "cel", path)
    if cel is None:
        return DeviceSelector(cel=None)
    return DeviceSelector(cel=req_str(cel, "expression", child(path, "cel")))


def device_toleration(value: object, path: str) -> DeviceToleration:
    raw = as_object(value, path)
    return DeviceToleration(
        key=str_or_empty(raw, "key", path),
        operator=str_or_empty(raw, "operator", path) or "Equal",
        value=str_or_empty(raw, "value", path),
        effect=str_or_empty(raw, "effect", path),
        toleration_seconds=opt_int(raw, "tolerationSeconds", path),
    )


def _opaque(raw: Raw, path: str) -> OpaqueDeviceConfiguration | None:
    opaque = opt_object(raw, "opaque", path)
    if opaque is None:
        return None
    p = child(path, "opaque")
    return OpaqueDeviceConfiguration(
        driver=req_str(opaque, "driver", p),
        parameters=raw_json(required(opaque, "parameters", p), child(p, "parameters")),
    )


def _class_config(value: object, path: str) -> OpaqueDeviceConfiguration | None:
    return _opaque(as_object(value, path), path)


def parse_device_class(raw: Raw, version: str = "v1") -> DeviceClass:
    """A DeviceClass; its spec has the same shape in every served version."""
    check_version(version)
    spec = req_object(raw, "spec", "")
    return DeviceClass(
        metadata=metadata(raw),
        selectors=list_of(spec, "selectors", "spec", device_selector),
        config=list_of(spec, "config", "spec", _class_config),
        extended_resource_name=opt_str(spec, "extendedResourceName", "spec"),
        suitable_nodes=opt_node_selector(spec, "suitableNodes", "spec"),
    )


# -- requests --------------------------------------------------------------------------------


def _mode_and_count(raw: Raw, path: str) -> tuple[AllocationMode | str, int]:
    mode_text = str_or_empty(raw, "allocationMode", path) or AllocationMode.EXACT_COUNT.value
    mode: AllocationMode | str = mode_text
    if mode_text in {m.value for m in AllocationMode}:
        mode = AllocationMode(mode_text)
    count = opt_int(raw, "count", path) or 0
    if mode is AllocationMode.EXACT_COUNT and count == 0:
        count = 1
    return mode, count


def _capacity(raw: Raw, path: str) -> CapacityRequirements | None:
    capacity = opt_object(raw, "capacity", path)
    if capacity is None:
        return None
    return CapacityRequirements(
        requests=quantity_map(capacity, "requests", child(path, "capacity"))
    )


def _exact(raw: Raw, path: str) -> ExactDeviceRequest:
    mode, count = _mode_and_count(raw, path)
    return ExactDeviceRequest(
        device_class_name=req_str(raw, "deviceClassName", path),
        selectors=list_of(raw, "selectors", path, device_selector),
        allocation_mode=mode,
        count=count,
        admin_access=opt_bool(raw, "adminAccess", path),
        tolerations=list_of(raw, "tolerations", path, device_toleration),
        capacity=_capacity(raw, path),
        derived_attributes=list_of(raw, "derivedAttributes", path, _derived_attribute),
    )


def _derived_attribute(value: object, path: str) -> DeviceDerivedAttribute:
    raw = as_object(value, path)
    return DeviceDerivedAttribute(
        name=req_str(raw, "name", path), expression=req_str(raw, "expression", path)
    )


def _sub_request(value: object, path: str) -> DeviceSubRequest:
    raw = as_object(value, path)
    mode, count = _mode_and_count(raw, path)
    return DeviceSubRequest(
        name=req_str(raw, "name", path),
        device_class_name=req_str(raw, "deviceClassName", path),
        selectors=list_of(raw, "selectors", path, device_selector),
        allocation_mode=mode,
        count=count,
        tolerations=list_of(raw, "tolerations", path, device_toleration),
        capacity=_capacity(raw, path),
        derived_attributes=list_of(raw, "derivedAttributes", path, _derived_attribute),
    )


def _request(value: object, path: str, version: str) -> DeviceRequest:
    raw = as_object(value, path)
    name = req_str(raw, "name", path)
    first_available = list_of(raw, "firstAvailable", path, _sub_request)
    if version in FLAT_VERSIONS:
        exactly = opt_object(raw, "exactly", path)
        exact = None if exactly is None else _exact(exactly, child(path, "exactly"))
    else:
        exact = None if first_available else _exact(raw, path)
    if (exact is None) == (not first_available):
        raise InvalidObjectError(path, "exactly one of `exactly` or `firstAvailable` is required")
    return DeviceRequest(name=name, exactly=exact, first_available=first_available)


def _constraint(value: object, path: str) -> DeviceConstraint:
    raw = as_object(value, path)
    return DeviceConstraint(
        requests=str_list(raw, "requests", path),
        match_attribute=opt_str(raw, "matchAttribute", path),
        distinct_attribute=opt_str(raw, "distinctAttribute", path),
    )


def _claim_config(value: object, path: str) -> DeviceClaimConfiguration:
    raw = as_object(value, path)
    return DeviceClaimConfiguration(
        requests=str_list(raw, "requests", path), opaque=_opaque(raw, path)
    )


def claim_spec(raw: Raw, path: str, version: str) -> DeviceClaim:
    devices = opt_object(raw, "devices", path) or {}
    p = child(path, "devices")
    return DeviceClaim(
        requests=list_of(devices, "requests", p, lambda v, q: _request(v, q, version)),
        constraints=list_of(devices, "constraints", p, _constraint),
        config=list_of(devices, "config", p, _claim_config),
    )


# -- status ----------------------------------------------------------------------------------


def _result(value: object, path: str) -> DeviceRequestAllocationResult:
    raw = as_object(value, path)
    return DeviceRequestAllocationResult(
        request=req_str(raw, "request", path),
        driver=req_str(raw, "driver", path),
        pool=req_str(raw, "pool", path),
        device=req_str(raw, "device", path),
        admin_access=opt_bool(raw, "adminAccess", path),
        tolerations=list_of(raw, "tolerations", path, device_toleration),
        binding_conditions=str_list(raw, "bindingConditions", path),
        binding_failure_conditions=str_list(raw, "bindingFailureConditions", path),
        share_id=opt_str(raw, "shareID", path),
        consumed_capacity=quantity_map(raw, "consumedCapacity", path),
        skip_node_operations=str_list(raw, "skipNodeOperations", path),
    )


def _allocation_config(value: object, path: str) -> DeviceAllocationConfiguration:
    raw = as_object(value, path)
    source = req_str(raw, "source", path)
    if source not in {s.value for s in ConfigSource}:
        raise InvalidObjectError(child(path, "source"), f"unsupported value {source!r}")
    return DeviceAllocationConfiguration(
        source=ConfigSource(source),
        requests=str_list(raw, "requests", path),
        opaque=_opaque(raw, path),
    )


def allocation_result(value: object, path: str) -> AllocationResult:
    """An AllocationResult (the same shape in every served version)."""
    raw = as_object(value, path)
    devices = opt_object(raw, "devices", path) or {}
    p = child(path, "devices")
    return AllocationResult(
        devices=DeviceAllocationResult(
            results=list_of(devices, "results", p, _result),
            config=list_of(devices, "config", p, _allocation_config),
        ),
        node_selector=opt_node_selector(raw, "nodeSelector", path),
        allocation_timestamp=opt_timestamp(raw, "allocationTimestamp", path),
        controller=str_or_empty(raw, "controller", path),
    )


def consumer(value: object, path: str) -> ResourceClaimConsumerReference:
    raw = as_object(value, path)
    return ResourceClaimConsumerReference(
        api_group=str_or_empty(raw, "apiGroup", path),
        resource=req_str(raw, "resource", path),
        name=req_str(raw, "name", path),
        uid=req_str(raw, "uid", path),
    )


def _network_data(raw: Raw | None, path: str) -> NetworkDeviceData | None:
    if raw is None:
        return None
    return NetworkDeviceData(
        interface_name=str_or_empty(raw, "interfaceName", path),
        ips=str_list(raw, "ips", path),
        hardware_address=str_or_empty(raw, "hardwareAddress", path),
    )


def _device_status(value: object, path: str) -> AllocatedDeviceStatus:
    raw = as_object(value, path)
    data = raw.get("data")
    return AllocatedDeviceStatus(
        driver=req_str(raw, "driver", path),
        pool=req_str(raw, "pool", path),
        device=req_str(raw, "device", path),
        share_id=opt_str(raw, "shareID", path),
        conditions=list_of(raw, "conditions", path, condition),
        data=None if data is None else raw_json(data, child(path, "data")),
        network_data=_network_data(
            opt_object(raw, "networkData", path), child(path, "networkData")
        ),
    )


def claim_status(raw: Raw, path: str) -> ResourceClaimStatus:
    allocation = opt_object(raw, "allocation", path)
    return ResourceClaimStatus(
        allocation=None
        if allocation is None
        else allocation_result(allocation, child(path, "allocation")),
        reserved_for=list_of(raw, "reservedFor", path, consumer),
        devices=list_of(raw, "devices", path, _device_status),
        deallocation_requested=bool(opt_bool(raw, "deallocationRequested", path)),
    )


def parse_resource_claim(
    raw: Raw, version: str = "v1", *, spec: DeviceClaim | None = None
) -> ResourceClaim:
    """A ResourceClaim: spec, status.allocation and status.reservedFor.

    `spec` is an earlier version's, parsed from a raw spec equal to this one's (a claim's spec
    is immutable: its later events change metadata and status only)."""
    check_version(version)
    raw_spec = req_object(raw, "spec", "")
    if spec is None:
        spec = claim_spec(raw_spec, "spec", version)
    return ResourceClaim(
        metadata=metadata(raw),
        spec=spec,
        status=claim_status(opt_object(raw, "status", "") or {}, "status"),
        controller=str_or_empty(raw_spec, "controller", "spec"),
    )


def parse_resource_claim_template(raw: Raw, version: str = "v1") -> ResourceClaimTemplate:
    """A ResourceClaimTemplate; `template_metadata` is what generated claims inherit."""
    check_version(version)
    spec = req_object(raw, "spec", "")
    template_meta = opt_object(spec, "metadata", "spec")
    return ResourceClaimTemplate(
        metadata=metadata(raw),
        template_metadata=object_meta(template_meta or {}, "spec.metadata"),
        spec=claim_spec(req_object(spec, "spec", "spec"), "spec.spec", version),
    )


def parse_allocation_result(raw: Raw, version: str = "v1") -> AllocationResult:
    """A claim's `status.allocation` on its own (e.g. from a patch or a cache entry)."""
    check_version(version)
    return allocation_result(raw, "status.allocation")
