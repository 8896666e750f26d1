"""The wire shapes of the scheduler's writes, built from the raw objects we read (rule 1).

A claim we allocate gets upstream's finalizer first, by a plain Update conditional on the
resourceVersion the decision read; then `status.allocation` and the new `reservedFor` entry by
UpdateStatus, conditional on the version the finalizer write returned. An allocated claim only
gets the `reservedFor` entry. The pod is bound last (`pods/binding`, with the pod's UID as the
precondition). When the bind fails for good, Unreserve takes the pod out of `reservedFor` again
and deallocates a claim left without consumers. Every body is a private deep copy; the caches'
raw dicts are never touched. A v1alpha2 claim (1.30's named resources) gets 1.30's finalizer,
`dra.k8s.io/delete-protection`, and its allocation in 1.30's shape with `status.driverName`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dra_operator import names
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler._named import NamedWrite
from dra_operator.model import (
    AllocationResult,
    ResourceClaimConsumerReference,
    render_allocation_result,
    v1alpha2,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """A Kubernetes Event about a pod or a claim."""

    kind: str  # "Pod" or "ResourceClaim"
    involved: ObjectKey
    uid: str
    type: str
    reason: str
    message: str


def _version_of(raw: Mapping[str, Any]) -> str:
    return str(raw.get("apiVersion", "")).rpartition("/")[2] or "v1"


def finalizer_of(raw: Mapping[str, Any]) -> str:
    """The scheduler's finalizer in the claim's API version (1.30's for v1alpha2)."""
    if _version_of(raw) == v1alpha2.VERSION:
        return v1alpha2.FINALIZER
    return names.DELETE_PROTECTION_FINALIZER


def has_finalizer(raw: Mapping[str, Any]) -> bool:
    finalizers = (raw.get("metadata") or {}).get("finalizers") or ()
    return finalizer_of(raw) in finalizers


def finalizer_body(raw: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
    """The claim with the scheduler's finalizer (`finalizer_of`) added (Update)."""
    body = _copy(raw, resource_version)
    metadata = body["metadata"]
    metadata["finalizers"] = [*metadata.get("finalizers", ()), finalizer_of(raw)]
    return body


def status_body(
    raw: Mapping[str, Any],
    resource_version: str,
    allocation: AllocationResult | None,
    consumer: ResourceClaimConsumerReference | None,
    named: NamedWrite | None = None,
) -> dict[str, Any]:
    """The claim with `status.allocation` (when given; `named` instead for 1.30's named
    resources) set and `consumer` reserved."""
    body = _copy(raw, resource_version)
    status = body.setdefault("status", {})
    if named is not None:
        status["driverName"] = named.driver_name
        status["allocation"] = v1alpha2.render_allocation_result(named.allocation)
    elif allocation is not None:
        status["allocation"] = render_allocation_result(allocation, _version_of(body))
    if consumer is not None:
        status["reservedFor"] = [*status.get("reservedFor", ()), render_consumer(consumer)]
    return body


def unreserve_body(
    raw: Mapping[str, Any], resource_version: str, pod_uid: str
) -> tuple[dict[str, Any], bool]:
    """The claim without the pod in `reservedFor` (Unreserve), and whether it was deallocated.

    When no consumer is left and the claim carries our finalizer (we allocated it), the
    allocation goes in the same write, as the claims controller deallocates a claim that just
    lost its last consumer; the finalizer is removed by a separate Update afterwards.
    """
    body = _copy(raw, resource_version)
    status = body.setdefault("status", {})
    kept = [entry for entry in status.get("reservedFor", ()) if entry.get("uid") != pod_uid]
    if kept:
        status["reservedFor"] = kept
    else:
        status.pop("reservedFor", None)
    deallocate = not kept and has_finalizer(raw) and "allocation" in status
    if deallocate:
        status.pop("allocation")
    return body, deallocate


def deallocation_body(raw: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
    """Classic PostFilter: no consumers and `deallocationRequested`, in one UpdateStatus (the
    API refuses the request while `reservedFor` is set, but checks the new list)."""
    body = _copy(raw, resource_version)
    status = body.setdefault("status", {})
    status.pop("reservedFor", None)
    status["deallocationRequested"] = True
    return body


def without_finalizer_body(raw: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
    """The claim without the scheduler's finalizer (`finalizer_of`) (Update)."""
    body = _copy(raw, resource_version)
    metadata = body["metadata"]
    kept = [f for f in metadata.get("finalizers", ()) if f != finalizer_of(raw)]
    metadata["finalizers"] = kept
    return body


def is_allocated(raw: Mapping[str, Any]) -> bool:
    return bool((raw.get("status") or {}).get("allocation"))


def is_reserved_for(raw: Mapping[str, Any], pod_uid: str) -> bool:
    reserved = (raw.get("status") or {}).get("reservedFor") or ()
    return any(entry.get("uid") == pod_uid for entry in reserved)


def render_consumer(ref: ResourceClaimConsumerReference) -> dict[str, str]:
    """A `reservedFor` entry as JSON (`apiGroup` omitted when empty, as the API does)."""
    rendered = {"resource": ref.resource, "name": ref.name, "uid": ref.uid}
    return {"apiGroup": ref.api_group, **rendered} if ref.api_group else rendered


def binding_body(pod: ObjectKey, uid: str, node: str) -> dict[str, Any]:
    """The `pods/binding` object; the UID makes the bind fail for a recreated pod."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


def _copy(raw: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
    body: dict[str, Any] = copy.deepcopy(dict(raw))
    body.setdefault("metadata", {})["resourceVersion"] = resource_version
    return body
