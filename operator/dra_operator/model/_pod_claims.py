"""Which ResourceClaim a pod's claim entry names, and whether the pod controls it.

upstream's `resourceclaim.Name` and `resourceclaim.IsForPod` (dynamic-resource-allocation
v0.36.4), with their texts. Pure functions of model objects: the claims controller and the
scheduler both need them and may not import each other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dra_operator.model._pod import Pod, PodResourceClaim
from dra_operator.model._podgroup import PodGroup
from dra_operator.model._types import ObjectMeta, OwnerReference, ResourceClaim

__all__ = [
    "ClaimNaming",
    "ResolvedClaim",
    "UnresolvedClaim",
    "controller_of",
    "deterministic_claim_name",
    "is_for_pod",
    "resolve_claim",
]


class ClaimNaming(enum.Enum):
    """How a release names the claims it generates from templates (classic-dra.md §5.1).

    Before 1.28 a pod has no `status.resourceClaimStatuses`: the claim of a template entry is
    `<pod>-<pod claim>`, found by that name alone. 1.28 let the API server generate names and
    recorded them in the pod status, with the prefix `<pod>-<pod claim>`; 1.29 added a dash.
    """

    DETERMINISTIC = "deterministic"
    GENERATED = "generated"
    GENERATED_WITH_DASH = "generated-with-dash"

    @classmethod
    def for_minor(cls, minor: int) -> ClaimNaming:
        if minor < 28:
            return cls.DETERMINISTIC
        return cls.GENERATED if minor == 28 else cls.GENERATED_WITH_DASH


def deterministic_claim_name(pod_name: str, pod_claim_name: str) -> str:
    """The claim of a template entry before 1.28."""
    return f"{pod_name}-{pod_claim_name}"


@dataclass(frozen=True, slots=True)
class ResolvedClaim:
    """A pod claim entry's claim: `name` None means "intentionally not created"."""

    name: str | None
    must_check_owner: bool


@dataclass(frozen=True, slots=True)
class UnresolvedClaim:
    """The claim name is not known; `not_created` tells "not created yet" from an unknown API."""

    message: str
    not_created: bool


def resolve_claim(pod: Pod, entry: PodResourceClaim) -> ResolvedClaim | UnresolvedClaim:
    """upstream `resourceclaim.Name`."""
    meta = pod.metadata
    if entry.resource_claim_name is not None:
        return ResolvedClaim(entry.resource_claim_name, must_check_owner=False)
    if entry.resource_claim_template_name is not None:
        for status in pod.status.resource_claim_statuses:
            if status.name == entry.name:
                return ResolvedClaim(status.resource_claim_name, must_check_owner=True)
        return UnresolvedClaim(
            f'pod "{meta.namespace}/{meta.name}": ResourceClaim not created yet', not_created=True
        )
    return UnresolvedClaim(
        f'pod "{meta.namespace}/{meta.name}", spec.resourceClaim "{entry.name}": '
        "none of the supported fields are set",
        not_created=False,
    )


def controller_of(claim: ResourceClaim) -> OwnerReference | None:
    return next((o for o in claim.metadata.owner_references if o.controller), None)


def is_for_pod(pod: Pod, claim: ResourceClaim) -> str | None:
    """upstream `resourceclaim.IsForPod`: None when the pod controls the claim, else why not."""
    return not_controlled_by("Pod", pod.metadata, claim)


def is_for_pod_or_group(pod: Pod, claim: ResourceClaim) -> str | None:
    """upstream `IsForPod` accepting PodGroup owners (DRAWorkloadResourceClaims, v0.37.2):
    None when the pod, or the PodGroup the pod belongs to (by name), controls the claim; else
    why not."""
    problem = is_for_pod(pod, claim)
    group = pod.spec.pod_group_name
    if problem is None or group is None or claim.metadata.namespace != pod.metadata.namespace:
        return problem
    controller = controller_of(claim)
    if (
        controller is not None
        and controller.name == group
        and controller.kind == "PodGroup"
        and controller.api_version.startswith(f"{PodGroup.API_GROUP}/")
    ):
        return None
    c, p = claim.metadata, pod.metadata
    return (
        f"ResourceClaim {c.namespace}/{c.name} was not created for Pod {p.namespace}/{p.name} "
        f"(neither Pod nor PodGroup {group} is the owner)"
    )


def not_controlled_by(kind: str, owner: ObjectMeta, claim: ResourceClaim) -> str | None:
    """Why `owner` (a `kind`) does not control the claim, or None when it does: upstream's
    `IsForPod` and `IsForPodGroup` word it alike."""
    c = claim.metadata
    if c.namespace != owner.namespace:
        return (
            f"ResourceClaim {c.namespace}/{c.name} is not in the same namespace as "
            f"{kind} {owner.namespace}/{owner.name}"
        )
    controller = controller_of(claim)
    if controller is None or controller.uid != owner.uid:
        return (
            f"ResourceClaim {c.namespace}/{c.name} was not created for {kind} "
            f"{owner.namespace}/{owner.name} ({kind} is not owner)"
        )
    return None
