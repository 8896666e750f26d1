"""PodGroup (scheduling.k8s.io; GenericWorkload, 1.36 v1alpha2, 1.37 v1beta1): what the claims
controller reads of it.

A PodGroup's `spec.resourceClaims` (DRAWorkloadResourceClaims) name claims, or templates of
claims, that the whole group shares: the claims controller makes one claim per template for the
group, owned by the PodGroup and recorded in `status.resourceClaimStatuses`, and reserves it
for the PodGroup rather than for each pod (k8s.io/api v0.37.2, scheduling/v1beta1). Both list
entries have the shapes of the pod's, so the pod's types are reused.

The scheduler reads the group's policy: a `gang` policy's `minCount` makes its pods placed
all or none (docs/workloads.md), and a group under a CompositePodGroup or with topology
constraints is one the operator does not place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dra_operator import names
from dra_operator.model._parse_common import (
    Raw,
    as_object,
    list_of,
    metadata,
    opt_object,
    opt_str,
    req_str,
)
from dra_operator.model._pod import PodResourceClaim, PodResourceClaimStatus
from dra_operator.model._types import ObjectMeta


@dataclass(frozen=True, slots=True, kw_only=True)
class PodGroup:
    """`API_GROUP`/`PLURAL` name the resource; `VERSIONS` serve it, newest first (1.37 serves
    v1beta1, 1.36 v1alpha2)."""

    API_GROUP: ClassVar[str] = "scheduling.k8s.io"
    PLURAL: ClassVar[str] = "podgroups"
    VERSIONS: ClassVar[tuple[str, ...]] = ("v1beta1", "v1alpha2")

    metadata: ObjectMeta
    api_version: str = ""  # as read: owner references of its claims name it
    resource_claims: tuple[PodResourceClaim, ...] = ()
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = ()
    min_count: int | None = None  # spec.schedulingPolicy.gang.minCount; None: basic policy
    parent_composite: str | None = None  # spec.parentCompositePodGroupName (CompositePodGroup)
    topology_constraints: bool = False  # spec.schedulingConstraints.topology is not empty
    initially_scheduled: str | None = None  # status of the PodGroupInitiallyScheduled condition
    priority: int | None = None  # spec.priority (1.37): what the group may preempt


def _entry(value: object, path: str) -> PodResourceClaim:
    raw = as_object(value, path)
    return PodResourceClaim(
        name=req_str(raw, "name", path),
        resource_claim_name=opt_str(raw, "resourceClaimName", path),
        resource_claim_template_name=opt_str(raw, "resourceClaimTemplateName", path),
    )


def _status(value: object, path: str) -> PodResourceClaimStatus:
    raw = as_object(value, path)
    return PodResourceClaimStatus(
        name=req_str(raw, "name", path),
        resource_claim_name=opt_str(raw, "resourceClaimName", path),
    )


def parse_pod_group(raw: Raw, version: str = "v1beta1") -> PodGroup:
    """A PodGroup of scheduling.k8s.io `version` (v1beta1 and v1alpha2 share these fields);
    `version` names it when the object does not (items of a LIST carry no apiVersion)."""
    spec = opt_object(raw, "spec", "") or {}
    status = opt_object(raw, "status", "") or {}
    policy = opt_object(spec, "schedulingPolicy", "spec") or {}
    gang = opt_object(policy, "gang", "spec.schedulingPolicy")
    constraints = opt_object(spec, "schedulingConstraints", "spec") or {}
    conditions = status.get("conditions")
    scheduled = next(
        (
            str(c.get("status"))
            for c in (conditions if isinstance(conditions, list) else ())
            if isinstance(c, dict)
            and c.get("type") == names.CONDITION_POD_GROUP_INITIALLY_SCHEDULED
        ),
        None,
    )
    return PodGroup(
        metadata=metadata(raw),
        api_version=str(raw.get("apiVersion") or f"{PodGroup.API_GROUP}/{version}"),
        resource_claims=list_of(spec, "resourceClaims", "spec", _entry),
        resource_claim_statuses=list_of(status, "resourceClaimStatuses", "status", _status),
        min_count=int(gang.get("minCount") or 0) if gang is not None else None,
        parent_composite=opt_str(spec, "parentCompositePodGroupName", "spec"),
        topology_constraints=bool(constraints.get("topology")),
        initially_scheduled=scheduled,
        priority=int(spec["priority"]) if isinstance(spec.get("priority"), int) else None,
    )
