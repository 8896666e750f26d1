"""PodSchedulingContext (1.31 `resource.k8s.io/v1alpha3`): parse and render.

Classic DRA (KEP-3063): the scheduler proposes nodes (`spec.potentialNodes`, at most 128) and
picks one (`spec.selectedNode`); each classic driver answers per pod claim with the nodes it
cannot allocate on (`status.resourceClaims[].unsuitableNodes`). docs/classic.md.
"""

from __future__ import annotations

from dra_operator.model._parse_common import (
    Raw,
    as_object,
    list_of,
    metadata,
    opt_object,
    req_str,
    str_list,
    str_or_empty,
)
from dra_operator.model._render_common import Json, put
from dra_operator.model._types import PodSchedulingContext, ResourceClaimSchedulingStatus

__all__ = [
    "context_manifest",
    "parse_pod_scheduling_context",
    "render_scheduling_spec",
]

_GROUP = "resource.k8s.io"


def _claim_status(value: object, path: str) -> ResourceClaimSchedulingStatus:
    raw = as_object(value, path)
    return ResourceClaimSchedulingStatus(
        name=req_str(raw, "name", path),
        unsuitable_nodes=str_list(raw, "unsuitableNodes", path),
    )


def parse_pod_scheduling_context(raw: Raw, version: str = "v1alpha3") -> PodSchedulingContext:
    """A PodSchedulingContext; the shape is the same in v1alpha2 and v1alpha3."""
    spec = opt_object(raw, "spec", "") or {}
    status = opt_object(raw, "status", "") or {}
    return PodSchedulingContext(
        metadata=metadata(raw),
        selected_node=str_or_empty(spec, "selectedNode", "spec"),
        potential_nodes=str_list(spec, "potentialNodes", "spec"),
        resource_claims=list_of(status, "resourceClaims", "status", _claim_status),
    )


def render_scheduling_spec(selected_node: str, potential_nodes: tuple[str, ...]) -> Json:
    """`spec` as the scheduler writes it (empty fields omitted, as the API does)."""
    out: Json = {}
    put(out, "selectedNode", selected_node)
    put(out, "potentialNodes", list(potential_nodes))
    return out


def context_manifest(
    namespace: str, pod: str, pod_uid: str, spec: Json, version: str = "v1alpha3"
) -> Json:
    """A new context for `pod`, controlled by it (upstream's `NewControllerRef`)."""
    owner = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": pod,
        "uid": pod_uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": f"{_GROUP}/{version}",
        "kind": "PodSchedulingContext",
        "metadata": {"name": pod, "namespace": namespace, "ownerReferences": [owner]},
        "spec": spec,
    }
