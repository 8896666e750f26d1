"""What a decision answers: a `Placement` to carry out, a `Wait`, or an `Unschedulable`.

A `Placement` carries what the binding cycle writes: DynamicResources' claim writes
(`ClaimWrite`, written in its PreBind slot), the special claim of extended resources, the pod's
binding, and the framework's `Cycle` that Reserve, Permit, PreBind and Unreserve continue.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler._classic import ClassicWrite
from dra_operator.controllers.scheduler._extended import ExtendedWrite
from dra_operator.controllers.scheduler._named import NamedWrite
from dra_operator.controllers.scheduler.framework import (
    CycleState,
    Framework,
)
from dra_operator.model import (
    AllocationResult,
    NodeAllocatableClaimStatus,
    Pod,
    ResourceClaim,
    ResourceClaimConsumerReference,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimWrite:
    """One claim of a placement: allocate it (with our finalizer first) and/or reserve it.

    `resource_version` is the version the decision read: the precondition of the first write.
    """

    key: ObjectKey
    uid: str
    resource_version: str
    allocation: AllocationResult | None  # None: already allocated, only reserve
    named: NamedWrite | None = None  # 1.30: `allocation` as written (the ledger reads the other)


@dataclass(frozen=True, slots=True)
class Cycle:
    """The framework's cycle of a placed pod, carried to Reserve, Permit and PreBind (which the
    scheduler runs: they change state or write) and to Unreserve when a later step fails."""

    framework: Framework
    state: CycleState
    pod: Pod


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """The decision: node, claim writes, and whether the pod still has to be bound."""

    node: str
    claims: tuple[ClaimWrite, ...]
    pod: ObjectKey | None = None  # None for a claim allocated without a consumer
    pod_uid: str = ""
    consumer: ResourceClaimConsumerReference | None = None
    bind: bool = False
    extended: ExtendedWrite | None = None  # the special claim for extended resources
    cycle: Cycle | None = field(default=None, compare=False)  # None: a bound pod, a claim
    node_allocatable: tuple[NodeAllocatableClaimStatus, ...] = ()  # PreBind's pod status


@dataclass(frozen=True, slots=True)
class Wait:
    """Not decidable yet and not worth an event; an event on the cause queues it again."""

    reason: str


@dataclass(frozen=True, slots=True)
class Unschedulable:
    """No node fits; `message` is the FailedScheduling text."""

    message: str
    stale: ResourceClaim | None = None  # an earlier attempt's special claim, to be deleted
    classic: ClassicWrite | None = None  # classic DRA: written before the event (_classic)


Decision = Placement | Wait | Unschedulable | None  # None: nothing to do


def consumer_of(pod: Pod) -> ResourceClaimConsumerReference:
    """The `reservedFor` entry of a pod (upstream's `BindTo` without PodGroups)."""
    return ResourceClaimConsumerReference(
        resource="pods", name=pod.metadata.name, uid=pod.metadata.uid
    )


def placement_for(
    pod: Pod,
    node: str,
    writes: list[ClaimWrite],
    extended: ExtendedWrite | None = None,
    cycle: Cycle | None = None,
) -> Placement:
    return Placement(
        node=node,
        claims=tuple(writes),
        pod=ObjectKey(pod.metadata.namespace, pod.metadata.name),
        pod_uid=pod.metadata.uid,
        consumer=consumer_of(pod),
        bind=not pod.spec.node_name,
        extended=extended,
        cycle=cycle,
    )


def reservation(claim: ResourceClaim) -> ClaimWrite:
    """The write that only adds the pod to an allocated claim's `reservedFor`."""
    return ClaimWrite(
        key=claim_key(claim),
        uid=claim.metadata.uid,
        resource_version=claim.metadata.resource_version,
        allocation=None,
    )


def claim_key(claim: ResourceClaim) -> ObjectKey:
    return ObjectKey(claim.metadata.namespace, claim.metadata.name)
