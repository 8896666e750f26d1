"""How a pod's claim entries map to ResourceClaims, and when a pod still needs them.

Upstream's `resourceclaim` helpers (dynamic-resource-allocation v0.36.4 `resourceclaim.go`)
and kube-controller-manager's `isPodDone` / `podNeedsClaims` / `owningPod`, with their error
texts. A claim of the pod's PodGroup (DRAWorkloadResourceClaims, v0.37.2's `IsForPod` and
`IsReservedForPod` with PodGroups accepted) counts as the pod's, and a reservation for the
PodGroup as one for the pod; see `_groups.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from dra_operator.cluster import Entry
from dra_operator.model import (
    OwnerReference,
    Pod,
    PodGroup,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    is_for_pod_or_group,
)
from dra_operator.model import UnresolvedClaim as Unresolved
from dra_operator.model import resolve_claim as resolve

MAX_GENERATE_NAME = 57
"""Leaves room for the API server's 5 random characters and a dash in a 63-character name."""


class ClaimsView(Protocol):
    """What the claims controller's decisions read from the caches (the seam to `cluster`)."""

    def pod(self, namespace: str, name: str) -> Pod | None: ...

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """Including claims we created that the watch has not shown yet."""
        ...

    def claims_owned_by(self, pod_uid: str) -> Iterable[ResourceClaim]: ...

    def template(self, namespace: str, name: str) -> Entry[ResourceClaimTemplate] | None: ...

    def pod_was_deleted(self, uid: str) -> bool: ...

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        """None also when the server serves no PodGroups (GenericWorkload off)."""
        ...

    @property
    def serves_pod_groups(self) -> bool: ...

    def claims_owned_by_group(self, group_uid: str) -> list[ResourceClaim]: ...


def is_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """Reserved for the pod itself or for the pod's PodGroup (by name, as upstream)."""
    group = pod.spec.pod_group_name
    return any(
        ref.uid == pod.metadata.uid
        or (
            group is not None
            and ref.api_group == PodGroup.API_GROUP
            and ref.resource == PodGroup.PLURAL
            and ref.name == group
        )
        for ref in claim.status.reserved_for
    )


def consumer_ref(pod: Pod) -> ResourceClaimConsumerReference:
    """The `reservedFor` entry of a pod (upstream `BindTo` without PodGroups)."""
    return ResourceClaimConsumerReference(
        resource="pods", name=pod.metadata.name, uid=pod.metadata.uid
    )


def owning_pod(claim: ResourceClaim) -> OwnerReference | None:
    """The pod that controls a generated claim (apiVersion v1, kind Pod), if any."""
    return next(
        (
            o
            for o in claim.metadata.owner_references
            if o.controller and o.api_version == "v1" and o.kind == "Pod"
        ),
        None,
    )


def is_pod_done(pod: Pod) -> bool:
    """No container runs now or ever will: terminal phase, or deleted before scheduling."""
    return pod.status.phase in ("Succeeded", "Failed") or (
        pod.metadata.deletion_timestamp is not None and not pod.spec.node_name
    )


def pod_needs_claims(pod: Pod, *, deleted: bool) -> tuple[bool, str]:
    """upstream `podNeedsClaims`: False means its claims can be released."""
    if deleted:
        return False, "pod got removed"
    if pod.status.phase in ("Succeeded", "Failed"):
        return False, "pod has terminated"
    if pod.metadata.deletion_timestamp is not None and not pod.spec.node_name:
        return False, "pod got deleted before scheduling"
    return True, "pod might run"


def pod_needs_work(pod: Pod, view: ClaimsView) -> tuple[bool, str]:
    """upstream `podNeedsWork` (v1.36.4): whether a pod event should enqueue the pod."""
    if pod.metadata.deletion_timestamp is not None:
        return False, "pod is deleted"
    nothing: list[str] = []
    for entry in pod.spec.resource_claims:
        resolved = resolve(pod, entry)
        if isinstance(resolved, Unresolved):
            return True, resolved.message
        if resolved.name is None:
            nothing.append(f"claim {entry.name} is not needed")
            continue
        claim = view.claim(pod.metadata.namespace, resolved.name)
        if claim is None:
            if entry.resource_claim_template_name is not None:
                return True, "must create ResourceClaim from template"
            nothing.append(f"ResourceClaim for claim {entry.name} is missing and must be created")
            continue
        if resolved.must_check_owner:
            problem = is_for_pod_or_group(pod, claim)
            if problem is not None:
                nothing.append(f"claim {entry.name}: {problem}")
                continue
        if not pod.spec.node_name:
            continue  # the scheduler reserves; keep checking for claims to create
        if claim.status.allocation is not None and not is_reserved_for_pod(pod, claim):
            return True, f"need to reserve claim {claim.metadata.namespace}/{claim.metadata.name}"
    return False, "nothing to do for any claim: " + ", ".join(nothing)


def generate_name(pod_name: str, pod_claim_name: str, *, dash: bool = True) -> str:
    """`<pod>-<claim>-` (1.28: without the last dash), both parts cut in proportion to their
    length when too long.

    Upstream truncates itself rather than leaving it to the API server, which would cut only
    the end and lose the pod claim name; note that the truncated form has no trailing dash.
    """
    name = f"{pod_name}-{pod_claim_name}" + ("-" if dash else "")
    if len(name) <= MAX_GENERATE_NAME:
        return name
    return (
        pod_name[: len(pod_name) * MAX_GENERATE_NAME // len(name)]
        + "-"
        + pod_claim_name[: len(pod_claim_name) * MAX_GENERATE_NAME // len(name)]
    )
