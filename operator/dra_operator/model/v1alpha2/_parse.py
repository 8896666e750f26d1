"""Raw resource.k8s.io/v1alpha2 JSON to the v1alpha2 model values.

Same rules as the v1 parsers: JSON null counts as absent, unknown fields are ignored, anything
malformed raises InvalidObjectError with the JSON path. The server's one defaulter here,
`allocationMode: WaitForFirstConsumer`, is applied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dra_operator.errors import InvalidObjectError
from dra_operator.model._parse_claim import consumer
from dra_operator.model._parse_common import (
    Raw,
    as_bool,
    as_int,
    as_object,
    as_str,
    child,
    list_of,
    metadata,
    object_meta,
    opt_bool,
    opt_node_selector,
    opt_object,
    opt_str,
    quantity,
    raw_json,
    req_object,
    req_str,
    str_list,
    str_or_empty,
)
from dra_operator.model.v1alpha2 import _types as t

GROUP_VERSION = f"resource.k8s.io/{t.VERSION}"


def _raw(raw: Raw, name: str, path: str) -> str | None:
    """A RawExtension field: None when absent or null."""
    value = raw.get(name)
    return None if value is None else raw_json(value, child(path, name))


def _class_ref(value: object, path: str) -> t.ClassParametersReference:
    raw = as_object(value, path)
    return t.ClassParametersReference(
        api_group=str_or_empty(raw, "apiGroup", path),
        kind=req_str(raw, "kind", path),
        name=req_str(raw, "name", path),
        namespace=str_or_empty(raw, "namespace", path),
    )


def _claim_ref(value: object, path: str) -> t.ClaimParametersReference:
    raw = as_object(value, path)
    return t.ClaimParametersReference(
        api_group=str_or_empty(raw, "apiGroup", path),
        kind=req_str(raw, "kind", path),
        name=req_str(raw, "name", path),
    )


def _opt(raw: Raw, name: str, path: str, item: Callable[[object, str], Any]) -> Any:
    value = raw.get(name)
    return None if value is None else item(value, child(path, name))


def parse_resource_class(raw: Raw) -> t.ResourceClass:
    return t.ResourceClass(
        metadata=metadata(raw),
        driver_name=req_str(raw, "driverName", ""),
        parameters_ref=_opt(raw, "parametersRef", "", _class_ref),
        suitable_nodes=opt_node_selector(raw, "suitableNodes", ""),
        structured_parameters=opt_bool(raw, "structuredParameters", ""),
    )


def _claim_spec(raw: Raw, path: str) -> t.ResourceClaimSpec:
    return t.ResourceClaimSpec(
        resource_class_name=req_str(raw, "resourceClassName", path),
        parameters_ref=_opt(raw, "parametersRef", path, _claim_ref),
        allocation_mode=opt_str(raw, "allocationMode", path) or t.WAIT_FOR_FIRST_CONSUMER,
    )


def _driver_result(value: object, path: str) -> t.DriverAllocationResult:
    raw = as_object(value, path)
    named = opt_object(raw, "namedResources", path)
    return t.DriverAllocationResult(
        vendor_request_parameters=_raw(raw, "vendorRequestParameters", path),
        named_resources=None
        if named is None
        else t.NamedResourcesAllocationResult(
            name=req_str(named, "name", child(path, "namedResources"))
        ),
    )


def _structured(value: object, path: str) -> t.StructuredResourceHandle:
    raw = as_object(value, path)
    return t.StructuredResourceHandle(
        node_name=str_or_empty(raw, "nodeName", path),
        vendor_class_parameters=_raw(raw, "vendorClassParameters", path),
        vendor_claim_parameters=_raw(raw, "vendorClaimParameters", path),
        results=list_of(raw, "results", path, _driver_result),
    )


def _handle(value: object, path: str) -> t.ResourceHandle:
    raw = as_object(value, path)
    return t.ResourceHandle(
        driver_name=str_or_empty(raw, "driverName", path),
        data=str_or_empty(raw, "data", path),
        structured_data=_opt(raw, "structuredData", path, _structured),
    )


def allocation_result(value: object, path: str) -> t.AllocationResult:
    raw = as_object(value, path)
    return t.AllocationResult(
        resource_handles=list_of(raw, "resourceHandles", path, _handle),
        available_on_nodes=opt_node_selector(raw, "availableOnNodes", path),
        shareable=bool(opt_bool(raw, "shareable", path)),
    )


def claim_status(raw: Raw, path: str) -> t.ResourceClaimStatus:
    return t.ResourceClaimStatus(
        driver_name=str_or_empty(raw, "driverName", path),
        allocation=_opt(raw, "allocation", path, allocation_result),
        reserved_for=list_of(raw, "reservedFor", path, consumer),
        deallocation_requested=bool(opt_bool(raw, "deallocationRequested", path)),
    )


def parse_resource_claim(raw: Raw) -> t.ResourceClaim:
    return t.ResourceClaim(
        metadata=metadata(raw),
        spec=_claim_spec(req_object(raw, "spec", ""), "spec"),
        status=claim_status(opt_object(raw, "status", "") or {}, "status"),
    )


def parse_resource_claim_template(raw: Raw) -> t.ResourceClaimTemplate:
    spec = req_object(raw, "spec", "")
    return t.ResourceClaimTemplate(
        metadata=metadata(raw),
        template_metadata=object_meta(opt_object(spec, "metadata", "spec") or {}, "spec.metadata"),
        spec=_claim_spec(req_object(spec, "spec", "spec"), "spec.spec"),
    )


def _scheduling_status(value: object, path: str) -> t.ResourceClaimSchedulingStatus:
    raw = as_object(value, path)
    return t.ResourceClaimSchedulingStatus(
        name=str_or_empty(raw, "name", path),
        unsuitable_nodes=str_list(raw, "unsuitableNodes", path),
    )


def parse_pod_scheduling_context(raw: Raw) -> t.PodSchedulingContext:
    spec = opt_object(raw, "spec", "") or {}
    status = opt_object(raw, "status", "") or {}
    return t.PodSchedulingContext(
        metadata=metadata(raw),
        selected_node=str_or_empty(spec, "selectedNode", "spec"),
        potential_nodes=str_list(spec, "potentialNodes", "spec"),
        resource_claims=list_of(status, "resourceClaims", "status", _scheduling_status),
    )


# -- named resources -------------------------------------------------------------------------


def _ints(value: object, path: str) -> tuple[int, ...]:
    return list_of(as_object(value, path), "ints", path, as_int)


def _strings(value: object, path: str) -> tuple[str, ...]:
    return list_of(as_object(value, path), "strings", path, as_str)


_ATTRIBUTE_VALUES: dict[t.NamedAttributeKind, Callable[[object, str], t.NamedAttributeValue]] = {
    t.NamedAttributeKind.QUANTITY: quantity,
    t.NamedAttributeKind.BOOL: as_bool,
    t.NamedAttributeKind.INT: as_int,
    t.NamedAttributeKind.INT_SLICE: _ints,
    t.NamedAttributeKind.STRING: as_str,
    t.NamedAttributeKind.STRING_SLICE: _strings,
    t.NamedAttributeKind.VERSION: as_str,
}


def _attribute(value: object, path: str) -> t.NamedResourcesAttribute:
    raw = as_object(value, path)
    name = req_str(raw, "name", path)
    found = [k for k in t.NamedAttributeKind if raw.get(k.value) is not None]
    if len(found) > 1:
        names = ", ".join(k.value for k in found)
        raise InvalidObjectError(path, f"exactly one value must be set, not {names}")
    if not found:
        return t.NamedResourcesAttribute(name=name, kind=None)
    kind = found[0]
    parsed = _ATTRIBUTE_VALUES[kind](raw[kind.value], child(path, kind.value))
    return t.NamedResourcesAttribute(name=name, kind=kind, value=parsed)


def _instance(value: object, path: str) -> t.NamedResourcesInstance:
    raw = as_object(value, path)
    return t.NamedResourcesInstance(
        name=req_str(raw, "name", path),
        attributes=list_of(raw, "attributes", path, _attribute),
    )


def parse_resource_slice(raw: Raw) -> t.ResourceSlice:
    named = opt_object(raw, "namedResources", "")
    return t.ResourceSlice(
        metadata=metadata(raw),
        node_name=str_or_empty(raw, "nodeName", ""),
        driver_name=req_str(raw, "driverName", ""),
        instances=None
        if named is None
        else list_of(named, "instances", "namedResources", _instance),
    )


def _selector(raw: Raw, path: str) -> str | None:
    named = opt_object(raw, "namedResources", path)
    return None if named is None else req_str(named, "selector", child(path, "namedResources"))


def _vendor_parameters(value: object, path: str) -> t.VendorParameters:
    raw = as_object(value, path)
    return t.VendorParameters(
        driver_name=str_or_empty(raw, "driverName", path),
        parameters=_raw(raw, "parameters", path),
    )


def _filter(value: object, path: str) -> t.ResourceFilter:
    raw = as_object(value, path)
    return t.ResourceFilter(
        driver_name=str_or_empty(raw, "driverName", path), selector=_selector(raw, path)
    )


def parse_resource_class_parameters(raw: Raw) -> t.ResourceClassParameters:
    return t.ResourceClassParameters(
        metadata=metadata(raw),
        generated_from=_opt(raw, "generatedFrom", "", _class_ref),
        vendor_parameters=list_of(raw, "vendorParameters", "", _vendor_parameters),
        filters=list_of(raw, "filters", "", _filter),
    )


def _request(value: object, path: str) -> t.ResourceRequest:
    raw = as_object(value, path)
    return t.ResourceRequest(
        vendor_parameters=_raw(raw, "vendorParameters", path), selector=_selector(raw, path)
    )


def _driver_requests(value: object, path: str) -> t.DriverRequests:
    raw = as_object(value, path)
    return t.DriverRequests(
        driver_name=str_or_empty(raw, "driverName", path),
        vendor_parameters=_raw(raw, "vendorParameters", path),
        requests=list_of(raw, "requests", path, _request),
    )


def parse_resource_claim_parameters(raw: Raw) -> t.ResourceClaimParameters:
    return t.ResourceClaimParameters(
        metadata=metadata(raw),
        generated_from=_opt(raw, "generatedFrom", "", _claim_ref),
        shareable=bool(opt_bool(raw, "shareable", "")),
        driver_requests=list_of(raw, "driverRequests", "", _driver_requests),
    )


V1Alpha2Object = (
    t.ResourceClass
    | t.ResourceClaim
    | t.ResourceClaimTemplate
    | t.PodSchedulingContext
    | t.ResourceSlice
    | t.ResourceClassParameters
    | t.ResourceClaimParameters
)

_KINDS: dict[str, Callable[[Raw], V1Alpha2Object]] = {
    "ResourceClass": parse_resource_class,
    "ResourceClaim": parse_resource_claim,
    "ResourceClaimTemplate": parse_resource_claim_template,
    "PodSchedulingContext": parse_pod_scheduling_context,
    "ResourceSlice": parse_resource_slice,
    "ResourceClassParameters": parse_resource_class_parameters,
    "ResourceClaimParameters": parse_resource_claim_parameters,
}


def parse_object(raw: object) -> V1Alpha2Object:
    """The model value of any resource.k8s.io/v1alpha2 object, by kind."""
    obj = as_object(raw, "")
    api_version = req_str(obj, "apiVersion", "")
    if api_version != GROUP_VERSION:
        raise InvalidObjectError("apiVersion", f"unsupported apiVersion {api_version!r}")
    kind = req_str(obj, "kind", "")
    if kind not in _KINDS:
        raise InvalidObjectError("kind", f"unsupported kind {kind!r} in {api_version}")
    return _KINDS[kind](obj)


def parse_allocation_result(raw: Raw) -> t.AllocationResult:
    """A claim's `status.allocation` on its own."""
    return allocation_result(raw, "status.allocation")
