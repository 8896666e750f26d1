"""Invariants about who uses claims: reservations, bound pods and generated claims.

Semantics follow kube-controller-manager's resourceclaim controller and the scheduler plugin
(kubernetes v1.36.4):

* A `reservedFor` entry must name a live pod (same UID, not done: not in a terminal phase and
  not deleted before it was scheduled, upstream `isPodDone`) that uses the claim, either
  directly, through `status.resourceClaimStatuses`, or as its extended-resource claim. There
  are at most 256 entries, with distinct UIDs (`ResourceClaimReservedForMaxSize`).
* A `reservedFor` entry naming a PodGroup (DRAWorkloadResourceClaims) must name a live PodGroup
  with that UID; the group's claim is then reserved for each of its pods. A claim generated for
  a PodGroup must have that PodGroup alive with the same UID (kube-controller-manager v1.37.2).
* A bound pod that has not terminated may only be running because each of its claims exists,
  is allocated, is reserved for it (or for its PodGroup), and the allocation's node selector
  admits its node (the node is skipped when its object is gone: nothing can be said about its
  labels).
* A generated claim (annotation `resource.kubernetes.io/pod-claim-name`, or the scheduler's
  `resource.kubernetes.io/extended-resource-claim`, and controlled by a Pod) must have its
  owner alive with the same UID; once the owner is done the claims controller deletes it, once
  the owner is gone the garbage collector does. Claims already being deleted are exempt: they
  are on their way out.
* An allocated claim without finalizer `resource.kubernetes.io/delete-protection` is only a
  warning: the scheduler always adds it before allocating, but an allocation written by another
  party (a driver's own controller, an administrator) may legitimately lack it. Without it,
  deleting the claim does not wait for the devices to be released.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from dra_operator import names
from dra_operator.model import (
    Node,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodGroup,
    ResourceClaim,
    controller_of,
    node_matches,
)
from dra_operator.verify._state import Code, Severity, Violation

__all__ = ["RESERVED_FOR_MAX_SIZE", "check_consumers"]

RESERVED_FOR_MAX_SIZE = 256
DELETE_PROTECTION = names.DELETE_PROTECTION_FINALIZER
GENERATED = (names.POD_CLAIM_NAME_ANNOTATION, names.EXTENDED_RESOURCE_CLAIM_ANNOTATION)

_TERMINAL = ("Succeeded", "Failed")
_Key = tuple[str, str]


def check_consumers(
    claims: Iterable[ResourceClaim],
    pods: Iterable[Pod],
    nodes: Iterable[Node],
    pod_groups: Iterable[PodGroup] | None = None,
) -> list[Violation]:
    """Every consumer-level violation among `claims` and `pods` (and `pod_groups`, None when
    the server serves none)."""
    claims_by_key = {(c.metadata.namespace, c.metadata.name): c for c in claims}
    pods_by_key = {(p.metadata.namespace, p.metadata.name): p for p in pods}
    nodes_by_name = {n.name: n for n in nodes}
    groups = (
        None
        if pod_groups is None
        else {(g.metadata.namespace, g.metadata.name): g for g in pod_groups}
    )
    violations: list[Violation] = []
    for claim in claims_by_key.values():
        violations += _check_reserved_for(claim, pods_by_key, groups)
        violations += _check_owner(claim, pods_by_key)
        violations += _check_group_owner(claim, groups)
        if (
            claim.status.allocation is not None
            and DELETE_PROTECTION not in claim.metadata.finalizers
        ):
            violations.append(
                _claim_violation(
                    Code.FINALIZER_MISSING,
                    claim,
                    f"The claim is allocated but lacks finalizer {DELETE_PROTECTION}, so "
                    "deleting it would not wait for its devices to be released.",
                    severity=Severity.WARNING,
                )
            )
    for pod in pods_by_key.values():
        if pod.spec.node_name and pod.status.phase not in _TERMINAL:
            violations += _check_bound_pod(pod, claims_by_key, nodes_by_name)
    return violations


def _done_reason(pod: Pod) -> str | None:
    if pod.status.phase in _TERMINAL:
        return f"has terminated (phase {pod.status.phase})"
    if pod.metadata.deletion_timestamp is not None and not pod.spec.node_name:
        return "was deleted before it was scheduled"
    return None


def _claim_names(pod: Pod) -> Iterator[tuple[str, str | None]]:
    """(how the pod refers to it, claim name or None when unknown) for each claim it uses."""
    statuses = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    for entry in pod.spec.resource_claims:
        if entry.resource_claim_name is not None:
            yield f"claim {entry.name}", entry.resource_claim_name
        elif entry.resource_claim_template_name is not None:
            if entry.name not in statuses:
                yield (
                    f"claim {entry.name} (from template {entry.resource_claim_template_name})",
                    None,
                )
            elif (name := statuses[entry.name]) is not None:
                yield f"claim {entry.name}", name
    extended = pod.status.extended_resource_claim_status
    if extended is not None:
        yield "extended-resource claim", extended.resource_claim_name


def _uses(pod: Pod, claim_name: str) -> bool:
    return any(name == claim_name for _, name in _claim_names(pod))


def _check_reserved_for(
    claim: ResourceClaim, pods: Mapping[_Key, Pod], groups: Mapping[_Key, PodGroup] | None
) -> list[Violation]:
    namespace = claim.metadata.namespace
    reserved = claim.status.reserved_for
    violations: list[Violation] = []
    if len(reserved) > RESERVED_FOR_MAX_SIZE:
        violations.append(
            _claim_violation(
                Code.RESERVED_FOR_INVALID,
                claim,
                f"The claim is reserved for {len(reserved)} consumers, more than the "
                f"{RESERVED_FOR_MAX_SIZE} allowed.",
            )
        )
    uids = [ref.uid for ref in reserved]
    for uid in sorted({uid for uid in uids if uids.count(uid) > 1}):
        violations.append(
            _claim_violation(
                Code.RESERVED_FOR_INVALID,
                claim,
                f"The claim is reserved {uids.count(uid)} times for the consumer with UID {uid}.",
            )
        )
    for ref in reserved:
        if _is_group_ref(ref.api_group, ref.resource) and groups is not None:
            group = groups.get((namespace, ref.name))
            if group is None:
                problem = f"is reserved for PodGroup {namespace}/{ref.name}, which does not exist"
            elif group.metadata.uid != ref.uid:
                problem = (
                    f"is reserved for PodGroup {namespace}/{ref.name} with UID {ref.uid}, but "
                    f"that PodGroup has UID {group.metadata.uid}"
                )
            else:
                continue
        elif ref.api_group or ref.resource != "pods":
            problem = (
                f"is reserved for {ref.resource}.{ref.api_group} {ref.name}, which is not a pod"
            )
        elif (pod := pods.get((namespace, ref.name))) is None:
            problem = f"is reserved for pod {namespace}/{ref.name}, which does not exist"
        elif pod.metadata.uid != ref.uid:
            problem = (
                f"is reserved for pod {namespace}/{ref.name} with UID {ref.uid}, but that pod "
                f"has UID {pod.metadata.uid}"
            )
        elif (why := _done_reason(pod)) is not None:
            problem = f"is reserved for pod {namespace}/{ref.name}, which {why}"
        elif not _uses(pod, claim.metadata.name):
            problem = f"is reserved for pod {namespace}/{ref.name}, which does not use it"
        else:
            continue
        violations.append(_claim_violation(Code.RESERVATION_STALE, claim, f"The claim {problem}."))
    return violations


def _check_owner(claim: ResourceClaim, pods: Mapping[_Key, Pod]) -> list[Violation]:
    meta = claim.metadata
    if not any(a in meta.annotations for a in GENERATED) or meta.deletion_timestamp is not None:
        return []
    owner = controller_of(claim)
    if owner is None or owner.api_version != "v1" or owner.kind != "Pod":
        return []
    pod = pods.get((meta.namespace, owner.name))
    why = _done_reason(pod) if pod is not None else None
    return _owner_gone(claim, "pod", owner, pod.metadata if pod else None, why)


def _is_group_ref(api_group: str, resource: str) -> bool:
    return api_group == PodGroup.API_GROUP and resource == PodGroup.PLURAL


def _check_group_owner(
    claim: ResourceClaim, groups: Mapping[_Key, PodGroup] | None
) -> list[Violation]:
    """A claim generated for a PodGroup must have that PodGroup alive with the same UID."""
    meta = claim.metadata
    if groups is None or meta.deletion_timestamp is not None:
        return []
    if names.POD_CLAIM_NAME_ANNOTATION not in meta.annotations:
        return []
    owner = controller_of(claim)
    if (
        owner is None
        or owner.kind != "PodGroup"
        or not owner.api_version.startswith(f"{PodGroup.API_GROUP}/")
    ):
        return []
    group = groups.get((meta.namespace, owner.name))
    return _owner_gone(claim, "PodGroup", owner, group.metadata if group else None)


def _owner_gone(
    claim: ResourceClaim,
    noun: str,
    owner: OwnerReference,
    found: ObjectMeta | None,
    why: str | None = None,
) -> list[Violation]:
    """OWNER_MISSING when the owner a claim was generated for is gone, was replaced (another
    UID) or is done (`why`)."""
    where = f"{noun} {claim.metadata.namespace}/{owner.name}"
    if found is None:
        problem = f"{where}, which no longer exists"
    elif found.uid != owner.uid:
        problem = f"{where} with UID {owner.uid}, but that {noun} has UID {found.uid}"
    elif why is not None:
        problem = f"{where}, which {why}; the claim should have been deleted"
    else:
        return []
    return [_claim_violation(Code.OWNER_MISSING, claim, f"The claim was generated for {problem}.")]


def _reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """For the pod itself, or for the PodGroup it belongs to (the group's shared claims)."""
    group = pod.spec.pod_group_name
    return any(
        ref.uid == pod.metadata.uid
        or (group is not None and _is_group_ref(ref.api_group, ref.resource) and ref.name == group)
        for ref in claim.status.reserved_for
    )


def _check_bound_pod(
    pod: Pod, claims: Mapping[_Key, ResourceClaim], nodes: Mapping[str, Node]
) -> list[Violation]:
    namespace, node_name = pod.metadata.namespace, pod.spec.node_name
    violations: list[Violation] = []
    for what, name in _claim_names(pod):
        claim = claims.get((namespace, name)) if name is not None else None
        if claim is None:
            missing = "has not been created" if name is None else f"({name}) does not exist"
            code, sentence = Code.POD_CLAIM_MISSING, f"its {what} {missing}"
        elif (allocation := claim.status.allocation) is None:
            code, sentence = Code.POD_CLAIM_UNALLOCATED, f"its {what} ({name}) is not allocated"
        elif not _reserved_for_pod(pod, claim):
            code, sentence = (
                Code.POD_CLAIM_UNRESERVED,
                f"its {what} ({name}) is not reserved for it",
            )
        elif (
            allocation.node_selector is not None
            and (node := nodes.get(node_name)) is not None
            and not node_matches(node.name, node.labels, allocation.node_selector)
        ):
            code = Code.POD_NODE_NOT_ADMITTED
            sentence = f"the node selector of its {what} ({name}) does not admit that node"
        else:
            continue
        violations.append(
            Violation(
                code=code,
                kind="Pod",
                name=f"{namespace}/{pod.metadata.name}",
                message=f"The pod is bound to node {node_name}, but {sentence}.",
            )
        )
    return violations


def _claim_violation(
    code: Code, claim: ResourceClaim, sentence: str, *, severity: Severity = Severity.ERROR
) -> Violation:
    return Violation(
        code=code,
        kind="ResourceClaim",
        name=f"{claim.metadata.namespace}/{claim.metadata.name}",
        message=sentence,
        severity=severity,
    )
