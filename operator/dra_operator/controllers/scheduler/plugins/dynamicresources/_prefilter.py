"""DynamicResources' PreFilter: the pod's claims resolved, sorted, or the reason it fails.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/dynamicresources (PreFilter and its
`podResourceClaims`): a claim the pod names that does not exist fails the pod with
`resourceclaim "NAME" not found` (UnschedulableAndUnresolvable); a generated claim not created
yet is a wait, not a failure (PreEnqueue's case upstream: the pod is not even queued); a claim
being deleted, reserved for 256 consumers already, or holding a device with an untolerated
NoSchedule/NoExecute taint fails the pod. What is left is sorted into `Claims`: allocated ones
(to reserve; their node selectors and `skipNodeOperations` are Filter's), unallocated structured
ones (for Filter to allocate), classic and 1.30 named ones (`_classic`). Pure: reads `State`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dra_operator.allocator import Features
from dra_operator.cluster import (
    SLICES_BY_POOL,
    ObjectKey,
    PoolKey,
)
from dra_operator.controllers.scheduler._classic import (
    PendingClaim,
    v1alpha2_problem,
)
from dra_operator.controllers.scheduler._decision import (
    Wait,
    claim_key,
)
from dra_operator.controllers.scheduler._state import State
from dra_operator.model import (
    Device,
    DeviceClass,
    NodeSelector,
    Pod,
    ResourceClaim,
    UnresolvedClaim,
    is_for_pod_or_group,
    resolve_claim,
    tolerates,
)

MAX_RESERVED_FOR = 256
"""`status.reservedFor` holds at most this many consumers (API validation)."""

_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(slots=True)
class Claims:
    """The pod's claims sorted by what the cycle does with them (PreFilter's state)."""

    allocated: list[ResourceClaim] = field(default_factory=list)  # need reservation
    selectors: list[NodeSelector] = field(default_factory=list)  # of all allocated claims
    unallocated: list[ResourceClaim] = field(default_factory=list)
    skips_node_operations: bool = False  # an allocated claim's device skips node operations
    classic: list[PendingClaim] = field(default_factory=list)  # unallocated; a driver allocates
    named: list[ResourceClaim] = field(default_factory=list)  # unallocated; 1.30 structured
    in_place: list[ResourceClaim] = field(default_factory=list)  # every allocated claim


def resolve_claims(pod: Pod, state: State, features: Features) -> Claims | Wait | str:
    """The pod's claims by what they need, a reason to wait, or a PreFilter failure text."""
    meta = pod.metadata
    found = Claims()
    seen: set[str] = set()
    for entry in pod.spec.resource_claims:
        pod_claim = entry.name
        resolved = resolve_claim(pod, entry)
        if isinstance(resolved, UnresolvedClaim):
            return Wait(resolved.message) if resolved.not_created else resolved.message
        name, check_owner = resolved.name, resolved.must_check_owner
        if name is None:
            continue  # intentionally not created
        cached = state.claims.get(ObjectKey(meta.namespace, name))
        if cached is None:
            # A generated claim may just not be in the cache yet (the claims controller wrote
            # it); a claim the pod names itself is reported, as upstream's PreFilter does.
            message = f'resourceclaim "{name}" not found'
            return Wait(message) if check_owner else message
        claim = cached.obj
        if claim.metadata.uid in seen:
            continue  # two pod claim entries naming one claim: allocate and reserve it once
        seen.add(claim.metadata.uid)
        problem = _claim_problem(pod, claim, check_owner, state, features)
        if problem is not None:
            return problem
        allocation = claim.status.allocation
        if allocation is None:
            if claim.resource_class_name:  # v1alpha2 (1.27-1.30): the class says who allocates
                resource_class = _resource_class(state, claim)
                problem = v1alpha2_problem(claim, resource_class)
                if problem is not None:
                    return problem
                if resource_class is not None and not resource_class.classic_driver:
                    if state.ledger.is_in_flight(claim.metadata.uid):
                        return in_flight(claim)
                    found.named.append(claim)
                    continue
            if claim.is_classic or claim.resource_class_name:
                found.classic.append(PendingClaim(pod_claim, claim))
                continue
            if state.ledger.is_in_flight(claim.metadata.uid):
                return in_flight(claim)
            found.unallocated.append(claim)
            continue
        found.in_place.append(claim)
        if allocation.node_selector is not None:
            found.selectors.append(allocation.node_selector)
        if features.since_137 and any(r.skip_node_operations for r in allocation.devices.results):
            found.skips_node_operations = True  # 1.37's Filter; 1.36 has no such field
        if not any(ref.uid == meta.uid for ref in claim.status.reserved_for):
            found.allocated.append(claim)
    return found


def in_flight(claim: ResourceClaim) -> Wait:
    """The wait while another decision's allocation of `claim` is being written."""
    return Wait(f"resource claim {claim_key(claim)} is in the process of being allocated")


def _resource_class(state: State, claim: ResourceClaim) -> DeviceClass | None:
    entry = state.classes.get(ObjectKey("", claim.resource_class_name))
    return entry.obj if entry is not None else None


def _claim_problem(
    pod: Pod, claim: ResourceClaim, check_owner: bool, state: State, features: Features
) -> str | None:
    p, c = pod.metadata, claim.metadata
    if check_owner and (problem := is_for_pod_or_group(pod, claim)) is not None:
        return problem
    if c.deletion_timestamp is not None:
        return f'resourceclaim "{c.name}" is being deleted'
    status = claim.status
    if status.deallocation_requested:
        return "resourceclaim must be reallocated"  # its classic driver is deallocating it
    if status.allocation is None or any(r.uid == p.uid for r in status.reserved_for):
        return None
    if status.allocation.shareable is False and status.reserved_for:
        return "resourceclaim in use"  # v1alpha2: an allocation not shareable has one consumer
    if len(status.reserved_for) >= MAX_RESERVED_FOR:
        return f"resourceclaim {c.namespace}/{c.name} in use by {MAX_RESERVED_FOR} consumers"
    if features.device_taints:
        return _tainted(claim, state)
    return None


def _tainted(claim: ResourceClaim, state: State) -> str | None:
    """An allocated device now carries a NoSchedule/NoExecute taint its request does not tolerate.

    New consumers are refused (issue 6 item 5); existing ones are the eviction controller's.
    """
    allocation = claim.status.allocation
    assert allocation is not None
    for result in allocation.devices.results:
        for device in _devices_named(state, result.driver, result.pool, result.device):
            for taint in device.taints:
                if taint.effect not in _BLOCKING_EFFECTS:
                    continue
                if any(tolerates(t, taint) for t in result.tolerations):
                    continue
                return (
                    f"resourceclaim {claim_key(claim)}: device "
                    f"{result.driver}/{result.pool}/{result.device} has untolerated taint "
                    f"{taint.key}={taint.value}:{taint.effect}"
                )
    return None


def _devices_named(state: State, driver: str, pool: str, name: str) -> Iterator[Device]:
    for entry in state.slices.by_index(SLICES_BY_POOL, PoolKey(driver, pool)):
        for device in state.tainted.view(entry).devices:
            if device.name == name:
                yield device


def claims_to_allocate(pod: Pod, state: State, features: Features) -> list[ResourceClaim]:
    """The claims a decision for `pod` would allocate now (none when it would not decide)."""
    found = resolve_claims(pod, state, features)
    return found.unallocated if isinstance(found, Claims) else []
