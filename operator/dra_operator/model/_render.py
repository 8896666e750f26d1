"""Model objects back to API JSON.

Allocation results and claim status render for every version that serves claims (their shape
is the same in v1, v1beta2, v1beta1 and v1alpha3). DeviceClass, ResourceSlice, ResourceClaim,
ResourceClaimTemplate and DeviceTaintRule render whole in any version's shape, for tests,
fixtures and the CLI: the v1 JSON is built here and `_render_versions` reshapes it.
Attribute and capacity names of a device are written back without their driver's domain, the
form drivers publish.
"""

from __future__ import annotations

from dra_operator.model import _render_versions as versions
from dra_operator.model._parse_common import check_version
from dra_operator.model._render_common import (
    Json,
    condition,
    node_selector,
    object_meta,
    opt_node_selector,
    opt_time,
    put,
    put_pointer,
    quantities,
    raw_parameters,
)
from dra_operator.model._types import (
    AllocatedDeviceStatus,
    AllocationMode,
    AllocationResult,
    CapacityRequestPolicy,
    CapacityRequirements,
    CounterSet,
    Device,
    DeviceAllocationConfiguration,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceCounterConsumption,
    DeviceDerivedAttribute,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
    ExactDeviceRequest,
    OpaqueDeviceConfiguration,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
    ResourceClaimTemplate,
    ResourceSlice,
)

GROUP = "resource.k8s.io"

# -- shared pieces ---------------------------------------------------------------------------


def _toleration(t: DeviceToleration) -> Json:
    out: Json = {}
    put(out, "key", t.key)
    put(out, "operator", t.operator)
    put(out, "value", t.value)
    put(out, "effect", t.effect)
    put_pointer(out, "tolerationSeconds", t.toleration_seconds)
    return out


def _taint(t: DeviceTaint) -> Json:
    out: Json = {"key": t.key}
    put(out, "value", t.value)
    out["effect"] = t.effect
    put(out, "timeAdded", opt_time(t.time_added))
    return out


def _selector(s: DeviceSelector) -> Json:
    return {} if s.cel is None else {"cel": {"expression": s.cel}}


def _opaque(out: Json, opaque: OpaqueDeviceConfiguration | None) -> Json:
    if opaque is not None:
        out["opaque"] = {"driver": opaque.driver, "parameters": raw_parameters(opaque.parameters)}
    return out


# -- allocation results and claim status -----------------------------------------------------


def _result(r: DeviceRequestAllocationResult) -> Json:
    out: Json = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
    put_pointer(out, "adminAccess", r.admin_access)
    put(out, "tolerations", [_toleration(t) for t in r.tolerations])
    put(out, "bindingConditions", list(r.binding_conditions))
    put(out, "bindingFailureConditions", list(r.binding_failure_conditions))
    put_pointer(out, "shareID", r.share_id)
    put(out, "consumedCapacity", quantities(r.consumed_capacity))
    put(out, "skipNodeOperations", list(r.skip_node_operations))
    return out


def _allocation_config(c: DeviceAllocationConfiguration) -> Json:
    out: Json = {"source": c.source.value}
    put(out, "requests", list(c.requests))
    return _opaque(out, c.opaque)


def render_allocation_result(result: AllocationResult, version: str = "v1") -> Json:
    """`status.allocation` in the shape of `version` (the same in every served version)."""
    check_version(version)
    devices: Json = {}
    put(devices, "results", [_result(r) for r in result.devices.results])
    put(devices, "config", [_allocation_config(c) for c in result.devices.config])
    out: Json = {"devices": devices}
    put(out, "nodeSelector", opt_node_selector(result.node_selector))
    put(out, "allocationTimestamp", opt_time(result.allocation_timestamp))
    put(out, "controller", result.controller)
    return out


def consumer(ref: ResourceClaimConsumerReference) -> Json:
    out: Json = {}
    put(out, "apiGroup", ref.api_group)
    out.update(resource=ref.resource, name=ref.name, uid=ref.uid)
    return out


def render_claim_status(status: ResourceClaimStatus, version: str = "v1") -> Json:
    """A claim's `status` (allocation and reservedFor) in the shape of `version`."""
    check_version(version)
    out: Json = {}
    if status.allocation is not None:
        out["allocation"] = render_allocation_result(status.allocation, version)
    put(out, "reservedFor", [consumer(c) for c in status.reserved_for])
    put(out, "deallocationRequested", status.deallocation_requested)
    put(out, "devices", [_device_status(d) for d in status.devices])
    return out


def _device_status(d: AllocatedDeviceStatus) -> Json:
    out: Json = {"driver": d.driver, "pool": d.pool, "device": d.device}
    put_pointer(out, "shareID", d.share_id)
    # conditions has no omitempty: none is written as null.
    out["conditions"] = [condition(c) for c in d.conditions] or None
    if d.data is not None:
        out["data"] = raw_parameters(d.data)
    if d.network_data is not None:
        network: Json = {}
        put(network, "interfaceName", d.network_data.interface_name)
        put(network, "ips", list(d.network_data.ips))
        put(network, "hardwareAddress", d.network_data.hardware_address)
        out["networkData"] = network
    return out


# -- claims and templates --------------------------------------------------------------------


def _mode(mode: AllocationMode | str) -> str:
    return mode.value if isinstance(mode, AllocationMode) else mode


def _capacity_requirements(c: CapacityRequirements | None) -> Json | None:
    if c is None:
        return None
    out: Json = {}
    put(out, "requests", quantities(c.requests))
    return out


def _derived(d: DeviceDerivedAttribute) -> Json:
    return {"name": d.name, "expression": d.expression}


def _exact(r: ExactDeviceRequest) -> Json:
    out: Json = {"deviceClassName": r.device_class_name}
    put(out, "selectors", [_selector(s) for s in r.selectors])
    put(out, "allocationMode", _mode(r.allocation_mode))
    put(out, "count", r.count)
    put_pointer(out, "adminAccess", r.admin_access)
    put(out, "tolerations", [_toleration(t) for t in r.tolerations])
    put_pointer(out, "capacity", _capacity_requirements(r.capacity))
    put(out, "derivedAttributes", [_derived(d) for d in r.derived_attributes])
    return out


def _sub_request(r: DeviceSubRequest) -> Json:
    out: Json = {"name": r.name, "deviceClassName": r.device_class_name}
    put(out, "selectors", [_selector(s) for s in r.selectors])
    put(out, "allocationMode", _mode(r.allocation_mode))
    put(out, "count", r.count)
    put(out, "tolerations", [_toleration(t) for t in r.tolerations])
    put_pointer(out, "capacity", _capacity_requirements(r.capacity))
    put(out, "derivedAttributes", [_derived(d) for d in r.derived_attributes])
    return out


def _request(r: DeviceRequest) -> Json:
    out: Json = {"name": r.name}
    put_pointer(out, "exactly", None if r.exactly is None else _exact(r.exactly))
    put(out, "firstAvailable", [_sub_request(s) for s in r.first_available])
    return out


def _claim_spec(spec: DeviceClaim) -> Json:
    devices: Json = {"requests": [_request(r) for r in spec.requests] or None}
    constraints = []
    for c in spec.constraints:
        constraint: Json = {}
        put(constraint, "requests", list(c.requests))
        put_pointer(constraint, "matchAttribute", c.match_attribute)
        put_pointer(constraint, "distinctAttribute", c.distinct_attribute)
        constraints.append(constraint)
    put(devices, "constraints", constraints)
    configs = []
    for cfg in spec.config:
        config: Json = {}
        put(config, "requests", list(cfg.requests))
        configs.append(_opaque(config, cfg.opaque))
    put(devices, "config", configs)
    return {"devices": devices}


def _with_controller(spec: Json, claim: ResourceClaim) -> Json:
    put(spec, "controller", claim.controller)
    return spec


def render_resource_claim(claim: ResourceClaim, version: str = "v1") -> Json:
    """A whole ResourceClaim in the shape of `version`."""
    check_version(version)
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "ResourceClaim",
        "metadata": object_meta(claim.metadata),
        "spec": _with_controller(versions.claim_spec(_claim_spec(claim.spec), version), claim),
        "status": render_claim_status(claim.status, version),
    }


def render_resource_claim_template(template: ResourceClaimTemplate, version: str = "v1") -> Json:
    """A whole ResourceClaimTemplate in the shape of `version`."""
    check_version(version)
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "ResourceClaimTemplate",
        "metadata": object_meta(template.metadata),
        "spec": {
            "metadata": object_meta(template.template_metadata),
            "spec": versions.claim_spec(_claim_spec(template.spec), version),
        },
    }


def render_device_class(device_class: DeviceClass, version: str = "v1") -> Json:
    """A whole DeviceClass (the same shape in every version)."""
    check_version(version)
    spec: Json = {}
    put(spec, "selectors", [_selector(s) for s in device_class.selectors])
    put(spec, "config", [_opaque({}, c) for c in device_class.config])
    put_pointer(spec, "extendedResourceName", device_class.extended_resource_name)
    put(spec, "suitableNodes", opt_node_selector(device_class.suitable_nodes))
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "DeviceClass",
        "metadata": object_meta(device_class.metadata),
        "spec": spec,
    }


# -- slices and taint rules ------------------------------------------------------------------


def _attribute(a: DeviceAttribute) -> Json:
    if a.kind is None:
        return {}
    value = list(a.value) if isinstance(a.value, tuple) else a.value
    return {a.kind.value: value}


def _request_policy(p: CapacityRequestPolicy) -> Json:
    # `default` has no omitempty: unset is written as null.
    out: Json = {"default": None if p.default is None else str(p.default)}
    put(out, "validValues", [str(q) for q in p.valid_values])
    if p.valid_range is not None:
        r = p.valid_range
        valid_range: Json = {"min": str(r.min)}
        put_pointer(valid_range, "max", None if r.max is None else str(r.max))
        put_pointer(valid_range, "step", None if r.step is None else str(r.step))
        out["validRange"] = valid_range
    return out


def _capacity(c: DeviceCapacity) -> Json:
    out: Json = {"value": str(c.value)}
    if c.request_policy is not None:
        out["requestPolicy"] = _request_policy(c.request_policy)
    return out


def _counters(counters: CounterSet | DeviceCounterConsumption) -> Json:
    return {name: {"value": str(q)} for name, q in counters.counters.items()}


def _local_name(driver: str) -> str:
    return driver + "/"


def _device(d: Device, driver: str) -> Json:
    prefix = _local_name(driver)

    def local(name: str) -> str:
        return name[len(prefix) :] if name.startswith(prefix) else name

    out: Json = {"name": d.name}
    put(out, "attributes", {local(k): _attribute(v) for k, v in d.attributes.items()})
    put(out, "capacity", {local(k): _capacity(v) for k, v in d.capacity.items()})
    consumes = []
    for c in d.consumes_counters:
        consumption: Json = {"counterSet": c.counter_set}
        put(consumption, "counters", _counters(c))
        put(consumption, "compatibilityGroups", list(c.compatibility_groups))
        consumes.append(consumption)
    put(out, "consumesCounters", consumes)
    put_pointer(out, "nodeName", d.node_name)
    put_pointer(out, "nodeSelector", opt_node_selector(d.node_selector))
    put_pointer(out, "allNodes", d.all_nodes)
    put(out, "taints", [_taint(t) for t in d.taints])
    put_pointer(out, "bindsToNode", d.binds_to_node)
    put(out, "bindingConditions", list(d.binding_conditions))
    put(out, "bindingFailureConditions", list(d.binding_failure_conditions))
    put_pointer(out, "allowMultipleAllocations", d.allow_multiple_allocations)
    return out


def render_resource_slice(resource_slice: ResourceSlice, version: str = "v1") -> Json:
    """A whole ResourceSlice in the shape of `version`."""
    check_version(version)
    s = resource_slice
    spec: Json = {
        "driver": s.driver,
        "pool": {
            "name": s.pool.name,
            "generation": s.pool.generation,
            "resourceSliceCount": s.pool.resource_slice_count,
        },
    }
    put_pointer(spec, "nodeName", s.node_name)
    if s.node_selector is not None:
        spec["nodeSelector"] = node_selector(s.node_selector)
    put_pointer(spec, "allNodes", s.all_nodes)
    put(spec, "devices", [_device(d, s.driver) for d in s.devices])
    put_pointer(spec, "perDeviceNodeSelection", s.per_device_node_selection)
    shared = []
    for counter_set in s.shared_counters:
        entry: Json = {"name": counter_set.name}
        put(entry, "counters", _counters(counter_set))
        shared.append(entry)
    put(spec, "sharedCounters", shared)
    put(spec, "skipNodeOperations", list(s.skip_node_operations))
    put_pointer(spec, "partitionTypeAttribute", s.partition_type_attribute)
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "ResourceSlice",
        "metadata": object_meta(s.metadata),
        "spec": versions.slice_spec(spec, version),
    }


def render_device_taint_rule(rule: DeviceTaintRule, version: str = "v1") -> Json:
    """A whole DeviceTaintRule (v1alpha3, v1beta2 and v1 share the shape)."""
    check_version(version)
    spec: Json = {}
    if rule.device_selector is not None:
        selector: Json = {}
        put_pointer(selector, "driver", rule.device_selector.driver)
        put_pointer(selector, "pool", rule.device_selector.pool)
        put_pointer(selector, "device", rule.device_selector.device)
        spec["deviceSelector"] = selector
    spec["taint"] = _taint(rule.taint)
    status: Json = {}
    put(status, "conditions", [condition(c) for c in rule.conditions])
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "DeviceTaintRule",
        "metadata": object_meta(rule.metadata),
        "spec": spec,
        "status": status,
    }
