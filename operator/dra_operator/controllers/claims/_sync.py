"""The claims controller's decisions: kube-controller-manager's `syncPod` and `syncClaim`.

Pure functions from cached state to a `Plan` of writes (upstream-dra.md §4.2, §4.3; read
against kubernetes v1.36.4 `pkg/controller/resourceclaim/controller.go`, and v1.37.2 for what
1.37 changed, upstream-1.37.md §7, with `ClaimsFeatures.since_137`):

* the pod status names the pod's generated claims through server-side apply of the entries it
  just made merged with those already there, sorted by name, as 1.37 does (#138408), on every
  release: 1.36 applies only the new entries, and server-side apply then drops the entries the
  same field manager applied before. On a real 1.36.4 API server a pod with two template claims,
  one of them deleted by hand, had its status flip between one entry and the other on every
  sync, for ever (each sync finds the dropped one as an orphan and applies it alone), and the
  pod never became schedulable; following 1.36 there would only copy that bug;
* a claim the pod status names but the cache lacks is re-created at once on 1.36; 1.37 first
  asks the API server (`NeedClaims`) and re-creates it only when it is not found or no longer
  owned by the pod.

Deliberate differences from upstream, each harmless:

* a bound pod whose template claim was just created is not an error in the reservation pass:
  the claim cannot be allocated yet, and the pod's status update re-runs the pod anyway
  (upstream returns "ResourceClaim not created yet" and retries with backoff);
* generated claims are deleted with a UID precondition, so a claim replaced under the same
  name is never deleted by mistake.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from dra_operator import names
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.claims._groups import (
    find_group_claim,
    group_consumer,
    is_group_consumer,
    shares_with_group,
)
from dra_operator.controllers.claims._resolve import (
    ClaimsView,
    consumer_ref,
    generate_name,
    is_pod_done,
    is_reserved_for_pod,
    owning_pod,
)
from dra_operator.controllers.claims._writes import (
    ApplyPodClaimStatuses,
    CreateClaim,
    CreatedFor,
    DeleteClaim,
    Event,
    NeedClaims,
    NeedPods,
    Plan,
    PruneReservedFor,
    RemoveFinalizer,
    ReserveClaim,
    Write,
)
from dra_operator.model import (
    ClaimNaming,
    FrozenMap,
    Pod,
    PodGroup,
    PodResourceClaim,
    ResourceClaim,
    ResourceClaimTemplate,
    deterministic_claim_name,
    is_for_pod_or_group,
    v1alpha2,
)
from dra_operator.model import UnresolvedClaim as Unresolved
from dra_operator.model import resolve_claim as resolve


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimsFeatures:
    """Feature gates the claims controller checks (both beta and on since Kubernetes 1.34),
    whether the server's release is 1.37 or newer (`allocator.Features.since_137`), and how it
    names generated claims."""

    admin_access: bool = True
    prioritized_list: bool = True
    since_137: bool = False
    naming: ClaimNaming = ClaimNaming.GENERATED_WITH_DASH


ALL_FEATURES: Final = ClaimsFeatures()


@dataclass(frozen=True, slots=True)
class _Reuse:
    name: str


@dataclass(frozen=True, slots=True)
class _Failure:
    message: str


def creation_failed(pod: Pod, pod_claim_name: str, error: str) -> Event:
    """The Warning event for a pod claim that could not get its ResourceClaim."""
    return Event(
        involved=ObjectKey(pod.metadata.namespace, pod.metadata.name),
        uid=pod.metadata.uid,
        type=names.EVENT_TYPE_WARNING,
        reason=names.EVENT_FAILED_RESOURCE_CLAIM_CREATION,
        message=f"PodResourceClaim {pod_claim_name}: {error}",
    )


def claims_to_check(
    pod: Pod | None, view: ClaimsView, features: ClaimsFeatures
) -> NeedClaims | None:
    """On 1.37, the generated claims the pod status names that the cache lacks: the driver
    asks the server for them and hands the answers to `sync_pod` as `checked`."""
    if pod is None or not features.since_137 or pod.metadata.deletion_timestamp is not None:
        return None
    missing = _recorded_but_not_cached(pod, view, {})
    if not missing:
        return None
    return NeedClaims(
        namespace=pod.metadata.namespace, names=tuple(missing), pod_claims=tuple(missing.values())
    )


def sync_pod(
    pod: Pod | None,
    view: ClaimsView,
    features: ClaimsFeatures = ALL_FEATURES,
    checked: Mapping[str, ResourceClaim | None] | None = None,
) -> Plan:
    """Create missing claims, publish their names, reserve claims of pods bound without us.

    If the driver's `CreateClaim` fails, it emits `creation_failed(...)` and stops, as upstream
    does; the orphan search finds already created claims on the retry. On 1.37 a claim named
    in the pod status that the cache lacks is re-created only if `checked` (the server's
    answers for `claims_to_check`; None: not found) says it is gone or not the pod's; one not
    checked yet fails the sync, to be retried.
    """
    if pod is None:
        return Plan(reason="pod is gone")
    meta = pod.metadata
    if meta.deletion_timestamp is not None:
        return Plan(reason="pod is marked for deletion")
    if features.since_137:
        missing = _recorded_but_not_cached(pod, view, checked or {})
        if missing:
            listed = ", ".join(missing)
            return Plan(error=f"pod {meta.namespace}/{meta.name}: claims {listed} not checked yet")
    group: PodGroup | None = None
    if pod.spec.pod_group_name is not None and view.serves_pod_groups:
        group = view.pod_group(meta.namespace, pod.spec.pod_group_name)
        if group is None:
            return Plan(
                error=f"get PodGroup for Pod {meta.namespace}/{meta.name}: "
                f'podgroup.scheduling.k8s.io "{pod.spec.pod_group_name}" not found'
            )
    writes: list[Write] = []
    statuses: list[tuple[str, str | CreatedFor]] = []
    for entry in pod.spec.resource_claims:
        outcome = _handle_claim(pod, entry, view, features, checked or {}, group)
        if isinstance(outcome, _Failure):
            writes.append(creation_failed(pod, entry.name, outcome.message))
            error = f"pod {meta.namespace}/{meta.name}, PodResourceClaim {entry.name}: "
            return Plan(writes=tuple(writes), error=error + outcome.message)
        if isinstance(outcome, CreateClaim):
            writes.append(outcome)
            statuses.append((entry.name, CreatedFor(entry.name)))
        elif isinstance(outcome, _Reuse):
            statuses.append((entry.name, outcome.name))
    if statuses and features.naming is not ClaimNaming.DETERMINISTIC:
        writes.append(
            ApplyPodClaimStatuses(
                namespace=meta.namespace, pod_name=meta.name, entries=_merged(pod, statuses)
            )
        )
    if not pod.spec.node_name:
        return Plan(writes=tuple(writes), reason="pod is not scheduled: the scheduler reserves")
    reserve = _reservations(pod, view, group)
    if isinstance(reserve, str):
        return Plan(writes=tuple(writes), error=reserve)
    return Plan(writes=(*writes, *reserve))


def _merged(
    pod: Pod, new: list[tuple[str, str | CreatedFor]]
) -> tuple[tuple[str, str | CreatedFor], ...]:
    """The pod's named entries overridden by `new`, sorted by pod claim name (1.37)."""
    merged: dict[str, str | CreatedFor] = {
        s.name: s.resource_claim_name
        for s in pod.status.resource_claim_statuses
        if s.resource_claim_name is not None
    }
    merged.update(new)
    return tuple(sorted(merged.items(), key=lambda item: item[0]))


def _recorded_but_not_cached(
    pod: Pod, view: ClaimsView, checked: Mapping[str, ResourceClaim | None]
) -> dict[str, str]:
    """Claims the pod status names that neither the cache nor `checked` knows (1.37), each
    with the pod claim that names it."""
    missing: dict[str, str] = {}
    for entry in pod.spec.resource_claims:
        resolved = resolve(pod, entry)
        if isinstance(resolved, Unresolved) or not resolved.name:
            continue
        if entry.resource_claim_template_name is None:
            continue  # a claim the pod names itself is never re-created
        name = resolved.name
        if view.claim(pod.metadata.namespace, name) is None and name not in checked:
            missing.setdefault(name, entry.name)
    return missing


def _handle_claim(
    pod: Pod,
    entry: PodResourceClaim,
    view: ClaimsView,
    features: ClaimsFeatures,
    checked: Mapping[str, ResourceClaim | None],
    group: PodGroup | None = None,
) -> CreateClaim | _Reuse | _Failure | None:
    """upstream `handleClaim`: None when the pod claim needs nothing.

    A template claim the pod shares with its PodGroup is never created here: the PodGroup's
    claim is recorded once the group sync has made it.
    """
    namespace = pod.metadata.namespace
    deterministic = features.naming is ClaimNaming.DETERMINISTIC
    resolved = resolve(pod, entry)
    if isinstance(resolved, Unresolved):
        if not resolved.not_created:
            return _Failure(f"checking for claim before creating it: {resolved.message}")
    elif resolved.name is None:
        return None
    else:
        claim = view.claim(namespace, resolved.name)
        if claim is None and features.since_137:
            claim = checked.get(resolved.name)  # what the server said (`NeedClaims`)
        problem = (
            None
            if claim is None or not resolved.must_check_owner
            else is_for_pod_or_group(pod, claim)
        )
        if claim is not None and problem is None:
            return None
        if problem is not None and deterministic:
            return _Failure(problem)  # the only name it may have is taken
        # Recorded but deleted, or no longer ours: make a new one below.
    template_name = entry.resource_claim_template_name
    if template_name is None:
        return None
    if group is not None and shares_with_group(group, entry):
        found = find_group_claim(group, entry.name, view)
        return None if found is None else _Reuse(found.metadata.name)
    if not deterministic:
        orphan = _find_orphan(pod, entry.name, view)
        if orphan is not None:
            return _Reuse(orphan.metadata.name)
    template = view.template(namespace, template_name)
    if template is None:
        return _Failure(
            f'resource claim template "{template_name}": '
            f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found'
        )
    admin_access = _needs_admin_access(template.obj)
    if admin_access and not features.admin_access:
        return _Failure("admin access is requested, but the feature is disabled")
    if not features.prioritized_list and any(r.first_available for r in template.obj.spec.requests):
        return _Failure(
            "template includes a prioritized list of subrequests, but the feature is disabled"
        )
    template_meta = template.obj.template_metadata
    pod_name = pod.metadata.name
    return CreateClaim(
        namespace=namespace,
        pod_claim_name=entry.name,
        name=deterministic_claim_name(pod_name, entry.name) if deterministic else "",
        generate_name=""
        if deterministic
        else generate_name(
            pod_name, entry.name, dash=features.naming is ClaimNaming.GENERATED_WITH_DASH
        ),
        pod_name=pod_name,
        pod_uid=pod.metadata.uid,
        api_version=str(template.raw.get("apiVersion") or "resource.k8s.io/v1"),
        labels=template_meta.labels,
        annotations=FrozenMap(  # 1.28 added the annotation
            template_meta.annotations
            if deterministic
            else {**template_meta.annotations, names.POD_CLAIM_NAME_ANNOTATION: entry.name}
        ),
        spec=(template.raw.get("spec") or {}).get("spec") or {},
        admin_access=admin_access,
    )


def _find_orphan(pod: Pod, pod_claim_name: str, view: ClaimsView) -> ResourceClaim | None:
    """A claim generated for this pod claim whose name never reached the pod status.

    Sorted by name so that, should there be several, every run picks the same one.
    """
    owned = sorted(view.claims_owned_by(pod.metadata.uid), key=lambda c: c.metadata.name)
    return next(
        (
            claim
            for claim in owned
            if claim.metadata.annotations.get(names.POD_CLAIM_NAME_ANNOTATION) == pod_claim_name
        ),
        None,
    )


def _needs_admin_access(template: ResourceClaimTemplate) -> bool:
    return any(r.exactly is not None and r.exactly.admin_access for r in template.spec.requests)


def _reservations(pod: Pod, view: ClaimsView, group: PodGroup | None) -> list[Write] | str:
    """Reserve the pod's allocated claims for it, or for its PodGroup when the claim is the
    group's: it was bound by someone else (upstream 4.2.5)."""
    writes: list[Write] = []
    for entry in pod.spec.resource_claims:
        resolved = resolve(pod, entry)
        if isinstance(resolved, Unresolved):
            if resolved.not_created:
                continue  # created by this very plan: not allocated yet
            return resolved.message
        if resolved.name is None:
            continue
        claim = view.claim(pod.metadata.namespace, resolved.name)
        if claim is None:
            break  # upstream stops here too: the claim event brings the pod back
        if resolved.must_check_owner:
            problem = is_for_pod_or_group(pod, claim)
            if problem is not None:
                return problem
        if claim.status.allocation is not None and not is_reserved_for_pod(pod, claim):
            writes.append(
                ReserveClaim(
                    claim=ObjectKey(claim.metadata.namespace, claim.metadata.name),
                    resource_version=claim.metadata.resource_version,
                    consumer=group_consumer(group)
                    if group is not None and shares_with_group(group, entry)
                    else consumer_ref(pod),
                )
            )
    return writes


_BUILTIN_FINALIZERS = (names.DELETE_PROTECTION_FINALIZER, v1alpha2.FINALIZER)


def _builtin_finalizer(finalizers: tuple[str, ...]) -> str | None:
    """The scheduler's finalizer on a claim it allocated (1.31+, or 1.30's for named
    resources): kube-controller-manager's cue that the
    allocation is the scheduler's to clear (classic-dra.md §5.4, §5.5)."""
    return next((f for f in _BUILTIN_FINALIZERS if f in finalizers), None)


def sync_claim(
    claim: ResourceClaim | None,
    view: ClaimsView,
    checked: dict[str, Pod | None] | None = None,
) -> Plan | NeedPods:
    """Prune stale reservations, deallocate unused claims, delete claims of finished pods.

    A reserving pod that the cache does not know is never dropped on the cache's word: the
    result is `NeedPods`, and the driver calls again with `checked` holding what the API server
    returned for each name (None: not found).
    """
    if claim is None:
        return Plan(reason="claim is gone")
    meta = claim.metadata
    key = ObjectKey(meta.namespace, meta.name)
    reserved = claim.status.reserved_for
    remaining = []
    unknown: list[str] = []
    for ref in reserved:
        if is_group_consumer(ref) and view.serves_pod_groups:
            group = view.pod_group(meta.namespace, ref.name)
            if group is not None and group.metadata.uid == ref.uid:
                remaining.append(ref)  # upstream: kept while that PodGroup exists
            continue
        if ref.api_group != "" or ref.resource != "pods":
            remaining.append(ref)  # a consumer type we cannot check: keep it, as upstream does
            continue
        if view.pod_was_deleted(ref.uid):
            continue
        pod = view.pod(meta.namespace, ref.name)
        if pod is None:
            if checked is None or ref.name not in checked:
                unknown.append(ref.name)
                remaining.append(ref)
                continue
            found = checked[ref.name]
            if found is not None and found.metadata.uid == ref.uid:
                remaining.append(ref)
        elif pod.metadata.uid == ref.uid and not is_pod_done(pod):
            remaining.append(ref)
    if unknown:
        return NeedPods(namespace=meta.namespace, names=tuple(unknown))

    writes: list[Write] = []
    finalizer = _builtin_finalizer(meta.finalizers)
    protected = finalizer is not None
    allocated = claim.status.allocation is not None
    if len(remaining) < len(reserved):
        # Deallocate on the transition "in use" -> "unused" only: a claim allocated but never
        # reserved (a driver may do that) stays allocated; so does an Immediate one (1.30).
        deallocate = not remaining and protected and not claim.immediate
        allocation = claim.status.allocation
        classic = allocation is not None and bool(allocation.controller)
        writes.append(
            PruneReservedFor(
                claim=key,
                resource_version=meta.resource_version,
                reserved_for=tuple(remaining),
                deallocate=deallocate and not classic,
                # 1.27-1.30: an Immediate claim stays allocated without consumers
                request_deallocation=not remaining and classic and not claim.immediate,
            )
        )
        if finalizer is not None and (deallocate or not allocated):
            writes.append(RemoveFinalizer(claim=key, resource_version=None, finalizer=finalizer))
    elif finalizer is not None and meta.deletion_timestamp is not None and not remaining:
        if allocated:
            writes.append(
                PruneReservedFor(
                    claim=key,
                    resource_version=meta.resource_version,
                    reserved_for=(),
                    deallocate=True,
                )
            )
            writes.append(RemoveFinalizer(claim=key, resource_version=None, finalizer=finalizer))
        else:
            writes.append(
                RemoveFinalizer(
                    claim=key, resource_version=meta.resource_version, finalizer=finalizer
                )
            )

    if not remaining:
        owner = owning_pod(claim)
        if owner is not None:
            pod = view.pod(meta.namespace, owner.name)
            # A pod the watch showed deleted is certainly gone: delete its claim as the garbage
            # collector would (a bare control plane has none; with one, the UID precondition
            # makes the second delete harmless). Merely not in the cache: leave it to the
            # garbage collector rather than ask the server.
            gone = pod is None and view.pod_was_deleted(owner.uid)
            if gone or (pod is not None and (pod.metadata.uid != owner.uid or is_pod_done(pod))):
                writes.append(DeleteClaim(claim=key, uid=meta.uid))
        elif view.serves_pod_groups and _group_is_gone(claim, view):
            # The garbage collector's job, done here as for pods: a bare control plane has none.
            writes.append(DeleteClaim(claim=key, uid=meta.uid))
    return Plan(writes=tuple(writes))


def _group_is_gone(claim: ResourceClaim, view: ClaimsView) -> bool:
    """The claim belongs to a PodGroup that no longer exists (or was replaced)."""
    meta = claim.metadata
    owners = [
        o
        for o in meta.owner_references
        if o.controller and o.kind == "PodGroup" and o.api_version.startswith("scheduling.k8s.io/")
    ]
    if not owners:
        return False
    group = view.pod_group(meta.namespace, owners[0].name)
    return group is None or group.metadata.uid != owners[0].uid
