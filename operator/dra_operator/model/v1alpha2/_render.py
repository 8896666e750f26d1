"""v1alpha2 model values to the JSON a 1.30 API server writes (k8s.io/api v0.30 tags).

Go's rules as in the v1 renderers: omitempty fields dropped; struct fields always written
(`status: {}`, a scheduling context's `spec: {}`); a RawExtension is a struct whose unset
value encodes as `null`, so vendor parameters are always present; `instances` and
`structuredData.results` have no omitempty (an empty list is `null`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dra_operator.model._quantity import Quantity
from dra_operator.model._render import consumer
from dra_operator.model._render_common import (
    Json,
    object_meta,
    opt_node_selector,
    put,
    put_pointer,
    raw_parameters,
)
from dra_operator.model.v1alpha2 import _types as t
from dra_operator.model.v1alpha2._parse import GROUP_VERSION


def _raw(text: str | None) -> object:
    return None if text is None else raw_parameters(text)


def _head(kind: str, meta: Json) -> Json:
    return {"apiVersion": GROUP_VERSION, "kind": kind, "metadata": meta}


def _class_ref(ref: t.ClassParametersReference) -> Json:
    out: Json = {}
    put(out, "apiGroup", ref.api_group)
    out.update(kind=ref.kind, name=ref.name)
    put(out, "namespace", ref.namespace)
    return out


def _claim_ref(ref: t.ClaimParametersReference) -> Json:
    out: Json = {}
    put(out, "apiGroup", ref.api_group)
    out.update(kind=ref.kind, name=ref.name)
    return out


def render_resource_class(cls: t.ResourceClass) -> Json:
    out = _head("ResourceClass", object_meta(cls.metadata))
    out["driverName"] = cls.driver_name
    if cls.parameters_ref is not None:
        out["parametersRef"] = _class_ref(cls.parameters_ref)
    put(out, "suitableNodes", opt_node_selector(cls.suitable_nodes))
    put_pointer(out, "structuredParameters", cls.structured_parameters)
    return out


def _claim_spec(spec: t.ResourceClaimSpec) -> Json:
    out: Json = {"resourceClassName": spec.resource_class_name}
    if spec.parameters_ref is not None:
        out["parametersRef"] = _claim_ref(spec.parameters_ref)
    put(out, "allocationMode", spec.allocation_mode)
    return out


def _driver_result(r: t.DriverAllocationResult) -> Json:
    out: Json = {"vendorRequestParameters": _raw(r.vendor_request_parameters)}
    if r.named_resources is not None:
        out["namedResources"] = {"name": r.named_resources.name}
    return out


def _structured(s: t.StructuredResourceHandle) -> Json:
    out: Json = {
        "vendorClassParameters": _raw(s.vendor_class_parameters),
        "vendorClaimParameters": _raw(s.vendor_claim_parameters),
    }
    put(out, "nodeName", s.node_name)
    out["results"] = [_driver_result(r) for r in s.results] or None
    return out


def _handle(h: t.ResourceHandle) -> Json:
    out: Json = {}
    put(out, "driverName", h.driver_name)
    put(out, "data", h.data)
    if h.structured_data is not None:
        out["structuredData"] = _structured(h.structured_data)
    return out


def render_allocation_result(result: t.AllocationResult) -> Json:
    out: Json = {}
    put(out, "resourceHandles", [_handle(h) for h in result.resource_handles])
    put(out, "availableOnNodes", opt_node_selector(result.available_on_nodes))
    put(out, "shareable", result.shareable)
    return out


def render_claim_status(status: t.ResourceClaimStatus) -> Json:
    out: Json = {}
    put(out, "driverName", status.driver_name)
    if status.allocation is not None:
        out["allocation"] = render_allocation_result(status.allocation)
    put(out, "reservedFor", [consumer(c) for c in status.reserved_for])
    put(out, "deallocationRequested", status.deallocation_requested)
    return out


def render_resource_claim(claim: t.ResourceClaim) -> Json:
    out = _head("ResourceClaim", object_meta(claim.metadata))
    out["spec"] = _claim_spec(claim.spec)
    out["status"] = render_claim_status(claim.status)
    return out


def render_resource_claim_template(template: t.ResourceClaimTemplate) -> Json:
    out = _head("ResourceClaimTemplate", object_meta(template.metadata))
    template_meta = object_meta(template.template_metadata)
    # 1.30's metav1.Time has no omitzero: a template's unset creationTimestamp is written null.
    template_meta.setdefault("creationTimestamp", None)
    out["spec"] = {"metadata": template_meta, "spec": _claim_spec(template.spec)}
    return out


def render_pod_scheduling_context(context: t.PodSchedulingContext) -> Json:
    out = _head("PodSchedulingContext", object_meta(context.metadata))
    spec: Json = {}
    put(spec, "selectedNode", context.selected_node)
    put(spec, "potentialNodes", list(context.potential_nodes))
    status: Json = {}
    claims = []
    for entry in context.resource_claims:
        claim: Json = {}
        put(claim, "name", entry.name)
        put(claim, "unsuitableNodes", list(entry.unsuitable_nodes))
        claims.append(claim)
    put(status, "resourceClaims", claims)
    out.update(spec=spec, status=status)
    return out


def _attribute_value(a: t.NamedResourcesAttribute) -> object:
    if a.kind is t.NamedAttributeKind.QUANTITY:
        assert isinstance(a.value, Quantity)
        return str(a.value)
    if a.kind is t.NamedAttributeKind.INT_SLICE:
        return {"ints": list(a.value) if isinstance(a.value, tuple) else None}
    if a.kind is t.NamedAttributeKind.STRING_SLICE:
        return {"strings": list(a.value) if isinstance(a.value, tuple) else None}
    return a.value


def _attribute(a: t.NamedResourcesAttribute) -> Json:
    out: Json = {"name": a.name}
    if a.kind is not None:
        out[a.kind.value] = _attribute_value(a)
    return out


def _instance(i: t.NamedResourcesInstance) -> Json:
    out: Json = {"name": i.name}
    put(out, "attributes", [_attribute(a) for a in i.attributes])
    return out


def render_resource_slice(resource_slice: t.ResourceSlice) -> Json:
    out = _head("ResourceSlice", object_meta(resource_slice.metadata))
    put(out, "nodeName", resource_slice.node_name)
    out["driverName"] = resource_slice.driver_name
    if resource_slice.instances is not None:
        out["namedResources"] = {
            "instances": [_instance(i) for i in resource_slice.instances] or None
        }
    return out


def _named(selector: str | None) -> Json:
    return {} if selector is None else {"namedResources": {"selector": selector}}


def render_resource_class_parameters(params: t.ResourceClassParameters) -> Json:
    out = _head("ResourceClassParameters", object_meta(params.metadata))
    if params.generated_from is not None:
        out["generatedFrom"] = _class_ref(params.generated_from)
    vendor = []
    for v in params.vendor_parameters:
        entry: Json = {}
        put(entry, "driverName", v.driver_name)
        entry["parameters"] = _raw(v.parameters)
        vendor.append(entry)
    put(out, "vendorParameters", vendor)
    filters = []
    for f in params.filters:
        entry = {}
        put(entry, "driverName", f.driver_name)
        filters.append(entry | _named(f.selector))
    put(out, "filters", filters)
    return out


def _driver_requests(d: t.DriverRequests) -> Json:
    out: Json = {}
    put(out, "driverName", d.driver_name)
    out["vendorParameters"] = _raw(d.vendor_parameters)
    requests = [
        {"vendorParameters": _raw(r.vendor_parameters)} | _named(r.selector) for r in d.requests
    ]
    put(out, "requests", requests)
    return out


def render_resource_claim_parameters(params: t.ResourceClaimParameters) -> Json:
    out = _head("ResourceClaimParameters", object_meta(params.metadata))
    if params.generated_from is not None:
        out["generatedFrom"] = _claim_ref(params.generated_from)
    put(out, "shareable", params.shareable)
    put(out, "driverRequests", [_driver_requests(d) for d in params.driver_requests])
    return out


def render_object(obj: object) -> Json:
    """Any v1alpha2 model value as its API JSON."""
    for kind, render in _RENDERERS:
        if isinstance(obj, kind):
            return render(obj)
    raise TypeError(f"not a v1alpha2 model value: {type(obj).__name__}")


_RENDERERS: tuple[tuple[type, Callable[[Any], Json]], ...] = (
    (t.ResourceClass, render_resource_class),
    (t.ResourceClaim, render_resource_claim),
    (t.ResourceClaimTemplate, render_resource_claim_template),
    (t.PodSchedulingContext, render_pod_scheduling_context),
    (t.ResourceSlice, render_resource_slice),
    (t.ResourceClassParameters, render_resource_class_parameters),
    (t.ResourceClaimParameters, render_resource_claim_parameters),
)
