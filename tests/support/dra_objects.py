"""Builders for the DRA objects the real-server tests create: classes, slices, claims, pods.

Every builder returns a plain `resource.k8s.io/v1` (or core `v1`) manifest, ready for
`Client.create`, with only the fields its arguments ask for: what the server defaults stays
out, so a test reads exactly what it wrote. Names follow one convention so that the objects a
test leaves in the shared control plane never match another test's classes: a class `<name>`
selects driver `<name>.example.com` (`driver_of`), and a node's slice of a driver is
`<node>-<driver>` in a pool named after the node. Tests whose layout differs on purpose pass
their own names, pools and selector expressions. `in_version` reshapes one for an older server
(1.31-1.33 serve no v1), through the model's own parser and renderer.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dra_operator import model, names
from dra_operator.kube import Resource, dra

Manifest = dict[str, Any]

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
REQUEST = "gpu"  # the one request of every claim built here, and its pod's claim entry

_RESOURCE_API = dra("deviceclasses").api_version
# kind -> (v1 parser, renderer in any version)
_RESHAPE: dict[str, tuple[Callable[[Manifest], Any], Callable[[Any, str], Manifest]]] = {
    "DeviceClass": (model.parse_device_class, model.render_device_class),
    "ResourceSlice": (model.parse_resource_slice, model.render_resource_slice),
    "ResourceClaim": (model.parse_resource_claim, model.render_resource_claim),
    "ResourceClaimTemplate": (
        model.parse_resource_claim_template,
        model.render_resource_claim_template,
    ),
}


def in_version(manifest: Mapping[str, Any], version: str) -> Manifest:
    """A v1 manifest built here, in the shape of resource.k8s.io `version`."""
    if version == "v1":
        return dict(manifest)
    parse, render = _RESHAPE[manifest["kind"]]
    return render(parse(dict(manifest)), version)


PRIORITY_CLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", namespaced=False)


def priority_class(name: str, value: int, preemption_policy: str | None = None) -> Manifest:
    """A PriorityClass; `preemption_policy` "Never" makes its pods wait instead of preempting."""
    body: Manifest = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    if preemption_policy is not None:
        body["preemptionPolicy"] = preemption_policy
    return body


def unique_name(prefix: str) -> str:
    """`prefix` plus a random suffix: cluster-scoped objects outlive the test's namespace."""
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def driver_of(class_name: str) -> str:
    """The driver a test's class selects: each test its own, so slices other tests left
    behind never match its classes."""
    return f"{class_name}.example.com"


def selects_driver(driver: str) -> str:
    """The CEL selector that admits every device of `driver` and nothing else."""
    return f"device.driver == '{driver}'"


def device_class(name: str, expression: str | None = None) -> Manifest:
    """DeviceClass `name` with one CEL selector, by default the one for `driver_of(name)`."""
    return {
        "apiVersion": _RESOURCE_API,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {
            "selectors": [{"cel": {"expression": expression or selects_driver(driver_of(name))}}]
        },
    }


def gpus(count: int) -> list[Manifest]:
    """Devices gpu-0 .. gpu-<count-1>, with no attributes or capacity."""
    return [{"name": f"gpu-{i}"} for i in range(count)]


def resource_slice(
    node: str,
    driver: str,
    devices: Iterable[Mapping[str, Any]],
    *,
    name: str | None = None,
    pool: str | None = None,
) -> Manifest:
    """The one slice of a complete pool on `node`: named `<node>-<driver>` and pooled under
    the node's name unless `name` and `pool` say otherwise."""
    return {
        "apiVersion": _RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "pool": {"name": pool or node, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node,
            "devices": [dict(device) for device in devices],
        },
    }


def claim_spec(class_name: str, **exactly: Any) -> Manifest:
    """A claim's spec: one request `gpu` for exactly one device of `class_name`; `exactly`
    adds fields to the request (selectors, count, capacity)."""
    return {
        "devices": {
            "requests": [{"name": REQUEST, "exactly": {"deviceClassName": class_name, **exactly}}]
        }
    }


def resource_claim(name: str, spec: Mapping[str, Any], **metadata: Any) -> Manifest:
    """ResourceClaim `name` with `spec` (see `claim_spec`); `metadata` adds fields after the
    name (namespace, labels, finalizers, ...)."""
    return {
        "apiVersion": _RESOURCE_API,
        "kind": "ResourceClaim",
        "metadata": {"name": name, **metadata},
        "spec": dict(spec),
    }


def claim_template(
    name: str,
    spec: Mapping[str, Any],
    *,
    claim_metadata: Mapping[str, Any] | None = None,
    **metadata: Any,
) -> Manifest:
    """ResourceClaimTemplate `name` whose claims get `spec` and, when given, `claim_metadata`
    (labels and annotations the claims controller copies onto each generated claim);
    `metadata` adds fields after the template's own name."""
    template: Manifest = {} if claim_metadata is None else {"metadata": dict(claim_metadata)}
    template["spec"] = dict(spec)
    return {
        "apiVersion": _RESOURCE_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, **metadata},
        "spec": template,
    }


def _claim_entry(claim: str | None, template: str | None) -> dict[str, str]:
    """The pod's claim entry `gpu`: ResourceClaim `claim` or one made from `template`."""
    entry = {"name": REQUEST}
    if claim is not None:
        entry["resourceClaimName"] = claim
    if template is not None:
        entry["resourceClaimTemplateName"] = template
    return entry


def scheduler_pod(
    name: str,
    *,
    claim: str | None = None,
    template: str | None = None,
    hostname: str | None = None,
) -> Manifest:
    """A pause pod for the operator's scheduler whose claim entry `gpu` names ResourceClaim
    `claim` or ResourceClaimTemplate `template`; `hostname` pins it to that node by label,
    so no other node of the shared control plane takes part in its scheduling."""
    spec: Manifest = {"schedulerName": names.DEFAULT_SCHEDULER_NAME}
    if hostname is not None:
        spec["nodeSelector"] = {"kubernetes.io/hostname": hostname}
    spec["containers"] = [{"name": "c", "image": PAUSE_IMAGE}]
    spec["resourceClaims"] = [_claim_entry(claim, template)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def consumer_pod(
    name: str,
    *,
    claim: str | None = None,
    template: str | None = None,
    node: str | None = None,
    scheduler: str | None = None,
    **metadata: Any,
) -> Manifest:
    """A pod whose container `c` uses the claim entry `gpu` (ResourceClaim `claim`, or one
    made from `template`), as the claims controller, `verify` and the kubelet read it. `node`
    binds it by hand (spec.nodeName) where no scheduler runs; `scheduler` names one to bind
    it instead. The image is never pulled: no real kubelet runs these pods."""
    spec: Manifest = {}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    if node is not None:
        spec["nodeName"] = node
    spec["containers"] = [{"name": "c", "image": "x", "resources": {"claims": [{"name": REQUEST}]}}]
    spec["resourceClaims"] = [_claim_entry(claim, template)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **metadata}, "spec": spec}
