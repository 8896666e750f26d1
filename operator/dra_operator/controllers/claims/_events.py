"""Watch events to work keys for the claims controller (upstream's `enqueuePod`,
`enqueueResourceClaim`, `enqueueResourceClaimTemplate`).

Pure mappers: they read the caches through small Protocols and return keys; the operator's
wiring adds them to the queue. Run them on both the old and the new object of a change. The wiring
also records the UIDs of deleted pods (`cluster.RecentlyDeleted`) before mapping.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple, Protocol

from dra_operator.controllers.claims._resolve import (
    ClaimsView,
    pod_needs_claims,
    pod_needs_work,
)
from dra_operator.model import Pod, PodGroup, ResourceClaim, ResourceClaimTemplate
from dra_operator.model import ResolvedClaim as Resolved
from dra_operator.model import resolve_claim as resolve


class WorkKey(NamedTuple):
    """One item of the claims queue: `pod:<ns>/<name>`, `claim:<ns>/<name>` or
    `podgroup:<ns>/<name>` upstream."""

    kind: Literal["pod", "claim", "podgroup"]
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.namespace}/{self.name}"


class PodsByClaim(Protocol):
    """The pod indexes the mappers need (`cluster.PODS_BY_CLAIM`, `PODS_BY_TEMPLATE`)."""

    def pods_using_claim(self, namespace: str, name: str) -> Iterable[Pod]: ...

    def pods_using_template(self, namespace: str, name: str) -> Iterable[Pod]: ...


def keys_for_pod(pod: Pod, view: ClaimsView, *, deleted: bool = False) -> list[WorkKey]:
    """The claims a finished pod releases, and the pod itself if it needs work.

    The claim the scheduler generated for DRA-backed extended resources is released too: it is
    named in the pod status, not the spec (upstream since 1.34).
    """
    extended = pod.status.extended_resource_claim_status
    if not pod.spec.resource_claims and extended is None:
        return []
    namespace = pod.metadata.namespace
    keys: list[WorkKey] = []
    needs_claims, _ = pod_needs_claims(pod, deleted=deleted)
    if not needs_claims:
        for entry in pod.spec.resource_claims:
            resolved = resolve(pod, entry)
            if isinstance(resolved, Resolved) and resolved.name is not None:
                keys.append(WorkKey("claim", namespace, resolved.name))
        if extended is not None:
            keys.append(WorkKey("claim", namespace, extended.resource_claim_name))
    if not deleted:
        needs_work, _ = pod_needs_work(pod, view)
        if needs_work:
            keys.append(WorkKey("pod", namespace, pod.metadata.name))
    return keys


def keys_for_claim(
    claim: ResourceClaim, view: ClaimsView, pods: PodsByClaim, *, deleted: bool = False
) -> list[WorkKey]:
    """The claim itself (its reservations may be stale) and the pods that use it."""
    meta = claim.metadata
    keys = [] if deleted else [WorkKey("claim", meta.namespace, meta.name)]
    for pod in pods.pods_using_claim(meta.namespace, meta.name):
        keys.extend(keys_for_pod(pod, view))
    for owner in meta.owner_references:  # a PodGroup's claim: the group records it
        if owner.controller and owner.kind == "PodGroup":
            keys.append(WorkKey("podgroup", meta.namespace, owner.name))
    return keys


class GroupMembers(Protocol):
    """`cluster.PODS_BY_POD_GROUP`: the pods of a PodGroup."""

    def pods_in_group(self, namespace: str, name: str) -> Iterable[Pod]: ...


def keys_for_pod_group(
    group: PodGroup, view: ClaimsView, members: GroupMembers, *, deleted: bool = False
) -> list[WorkKey]:
    """upstream `enqueuePodGroup`: the group while it has claims; its claims when it is
    deleted (their reservation for it goes); its pods, which may now find its claims."""
    meta = group.metadata
    if not group.resource_claims:
        return []
    if deleted:
        return [
            WorkKey("claim", meta.namespace, s.resource_claim_name)
            for s in group.resource_claim_statuses
            if s.resource_claim_name
        ] + [
            WorkKey("claim", meta.namespace, c.resource_claim_name)
            for c in group.resource_claims
            if c.resource_claim_name
        ]
    keys = [WorkKey("podgroup", meta.namespace, meta.name)]
    for pod in members.pods_in_group(meta.namespace, meta.name):
        keys.extend(keys_for_pod(pod, view))
    return keys


def keys_for_template(
    template: ResourceClaimTemplate, view: ClaimsView, pods: PodsByClaim
) -> list[WorkKey]:
    """Pods waiting for this template (e.g. it was created after them)."""
    meta = template.metadata
    keys: list[WorkKey] = []
    for pod in pods.pods_using_template(meta.namespace, meta.name):
        keys.extend(keys_for_pod(pod, view))
    return keys
