"""The writes the claims controller decides on, as values (sans-I/O).

Decisions return a `Plan`: writes to carry out in order, stopping at the first that fails.
Writes to the same claim are chained: the first carries the resourceVersion the decision read
(the optimistic-concurrency precondition; a 409 means re-read and re-decide), and a write whose
`resource_version` is None builds on the object the previous write returned, as upstream's
`syncClaim` does with the result of `UpdateStatus`.

The wire shapes (`manifest`, `apply_body`) are built here so they can be tested without a
server; `kube/` only sends them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dra_operator import names
from dra_operator.cluster import ObjectKey
from dra_operator.model import FrozenMap, ResourceClaimConsumerReference


@dataclass(frozen=True, slots=True)
class CreatedFor:
    """Placeholder for the name the server gives the claim created for this pod claim."""

    pod_claim_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateClaim:
    """POST a ResourceClaim generated from a template for one pod claim.

    Named by the API server from `generate_name`, or, before 1.28, `name`d by us
    (`model.ClaimNaming`); one of the two is set. The owner is the pod, or for a claim of a
    PodGroup's `spec.resourceClaims` the PodGroup (`owner_kind`, `owner_api_version`);
    `pod_claim_name` is then the PodGroup claim's name and `pod_name`/`pod_uid` the group's.
    """

    namespace: str
    pod_claim_name: str
    generate_name: str = ""
    name: str = ""
    pod_name: str
    pod_uid: str
    api_version: str
    labels: FrozenMap[str, str]
    annotations: FrozenMap[str, str]
    spec: Mapping[str, Any]  # the template's raw spec.spec, passed through unchanged
    admin_access: bool  # label of resourceclaim_controller_creates_total
    owner_kind: str = "Pod"
    owner_api_version: str = "v1"

    def manifest(self) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": "ResourceClaim",
            "metadata": {
                **({"name": self.name} if self.name else {"generateName": self.generate_name}),
                "namespace": self.namespace,
                "ownerReferences": [
                    {
                        "apiVersion": self.owner_api_version,
                        "kind": self.owner_kind,
                        "name": self.pod_name,
                        "uid": self.pod_uid,
                        "controller": True,
                    }
                ],
                **({"annotations": dict(self.annotations)} if self.annotations else {}),
                **({"labels": dict(self.labels)} if self.labels else {}),
            },
            "spec": self.spec,
        }

    def is_created_by(self, raw: Mapping[str, Any]) -> bool:
        """Whether `raw` is a claim already generated for this pod claim (by anyone).

        Upstream's `findPodResourceClaim` test: controlled by the pod, annotated with the pod
        claim name (before 1.28: named as this claim would be). Another claims controller may
        have made it (kube-controller-manager during a handover), so the reconciler asks the
        API server before creating.
        """
        metadata = raw.get("metadata") or {}
        if self.name:
            if metadata.get("name") != self.name:
                return False
        elif (metadata.get("annotations") or {}).get(
            names.POD_CLAIM_NAME_ANNOTATION
        ) != self.pod_claim_name:
            return False
        return any(
            owner.get("controller") and owner.get("uid") == self.pod_uid
            for owner in metadata.get("ownerReferences") or ()
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyPodClaimStatuses:
    """Server-side apply of `pod.status.resourceClaimStatuses` entries (merge key `name`).

    Field manager `ResourceClaimController`, force: entries of other pod claims are kept.
    With `kind` PodGroup, the same for `podgroups/status` (`pod_name` is the group's).
    """

    namespace: str
    pod_name: str
    entries: tuple[tuple[str, str | CreatedFor], ...]
    kind: str = "Pod"
    api_version: str = "v1"

    def apply_body(self, created: Mapping[str, str]) -> dict[str, Any]:
        """The apply configuration; `created` maps pod claim names to generated claim names."""
        statuses = [
            {
                "name": pod_claim,
                "resourceClaimName": created[claim.pod_claim_name]
                if isinstance(claim, CreatedFor)
                else claim,
            }
            for pod_claim, claim in self.entries
        ]
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "metadata": {"name": self.pod_name, "namespace": self.namespace},
            "status": {"resourceClaimStatuses": statuses},
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ReserveClaim:
    """UpdateStatus appending `consumer` to `status.reservedFor` (pod bound without us)."""

    claim: ObjectKey
    resource_version: str
    consumer: ResourceClaimConsumerReference

    def status_body(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The claim as read, with the consumer appended to `status.reservedFor`."""
        body = _copy(raw, self.resource_version)
        status = body.setdefault("status", {})
        status["reservedFor"] = [*status.get("reservedFor", ()), render_consumer(self.consumer)]
        return body


@dataclass(frozen=True, slots=True, kw_only=True)
class PruneReservedFor:
    """UpdateStatus (never a patch: it must fail on concurrent change) with `reserved_for`.

    `deallocate` also clears `status.allocation` in the same write: the last consumer left.
    `request_deallocation` instead sets `deallocationRequested`: a classic claim, which its
    driver deallocates (1.31 kube-controller-manager; docs/classic.md).
    """

    claim: ObjectKey
    resource_version: str | None
    reserved_for: tuple[ResourceClaimConsumerReference, ...]
    deallocate: bool
    request_deallocation: bool = False

    def status_body(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The claim as read, keeping only the still-valid `reservedFor` entries.

        Kept entries are the raw ones, so fields a newer API added to them survive.
        """
        body = _copy(raw, self.resource_version)
        status = body.setdefault("status", {})
        keep = {(ref.api_group, ref.resource, ref.name, ref.uid) for ref in self.reserved_for}
        kept = [
            entry
            for entry in status.get("reservedFor", ())
            if (
                entry.get("apiGroup", ""),
                entry.get("resource", ""),
                entry.get("name", ""),
                entry.get("uid", ""),
            )
            in keep
        ]
        if kept:
            status["reservedFor"] = kept
        else:
            status.pop("reservedFor", None)
        if self.deallocate:
            status.pop("allocation", None)
        if self.request_deallocation:
            status["deallocationRequested"] = True
        return body


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveFinalizer:
    """Update removing `resource.kubernetes.io/delete-protection` (allocation already clear)."""

    claim: ObjectKey
    resource_version: str | None
    finalizer: str = names.DELETE_PROTECTION_FINALIZER

    def body(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        body = _copy(raw, self.resource_version)
        metadata = body["metadata"]
        metadata["finalizers"] = [f for f in metadata.get("finalizers", ()) if f != self.finalizer]
        return body


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteClaim:
    """Delete a generated claim whose pod will not run; `uid` is the delete precondition."""

    claim: ObjectKey
    uid: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """A Kubernetes Event about a pod (`involved` is its key, `uid` its UID)."""

    involved: ObjectKey
    uid: str
    type: str
    reason: str
    message: str


Write = (
    CreateClaim
    | ApplyPodClaimStatuses
    | ReserveClaim
    | PruneReservedFor
    | RemoveFinalizer
    | DeleteClaim
    | Event
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What one reconcile decided.

    `error`, when set, is returned to the work queue after the writes (retry with backoff),
    as upstream's sync functions return an error after emitting their event. `reason` says why
    nothing (more) is done, for the log.
    """

    writes: tuple[Write, ...] = ()
    error: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class NeedPods:
    """Decide again once the API server said whether these pods exist (cold cache).

    The claims controller must never drop a reservation because its cache has not seen a pod
    yet: the scheduler may be placing it. `names` are pods in `namespace`.
    """

    namespace: str
    names: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True, kw_only=True)
class NeedClaims:
    """Decide again once the API server said whether these claims exist (1.37's `claimExists`).

    A claim the pod status names may be missing from the cache only because the watch has not
    shown it yet (another claims controller created it a moment ago): re-creating it then would
    give the pod claim a second claim. `names` are claims in `namespace`.
    """

    namespace: str
    names: tuple[str, ...] = field(default=())
    pod_claims: tuple[str, ...] = field(default=())  # the pod claim naming each, for the event


def render_consumer(ref: ResourceClaimConsumerReference) -> dict[str, str]:
    """A `reservedFor` entry as JSON (`apiGroup` omitted when empty, as the API does)."""
    rendered = {"resource": ref.resource, "name": ref.name, "uid": ref.uid}
    return {"apiGroup": ref.api_group, **rendered} if ref.api_group else rendered


def _copy(raw: Mapping[str, Any], resource_version: str | None) -> dict[str, Any]:
    """A private copy of a raw object, conditional on `resource_version` when given.

    None keeps the version in `raw`: the answer of the previous write in the same plan.
    """
    body: dict[str, Any] = copy.deepcopy(dict(raw))
    if resource_version is not None:
        body.setdefault("metadata", {})["resourceVersion"] = resource_version
    return body
