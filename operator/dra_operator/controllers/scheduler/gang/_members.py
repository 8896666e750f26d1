"""Which pods a gang cycle places, in which order, and how many must fit.

kube-scheduler v1.37.2 (GenericWorkload; pkg/scheduler/schedule_one_podgroup.go and the
GangScheduling plugin): a PodGroup's members are every pod naming it in
`spec.schedulingGroup.podGroupName`; those bound or assumed count as scheduled, the others are
the cycle's pods, taken in queue order (priority, then age). The group is not tried until it
has at least `minCount` pods (PreEnqueue), and it succeeds when scheduled plus newly placed
pods reach `minCount`.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dra_operator.cluster import ObjectKey, Store
from dra_operator.model import Pod, PodGroup, ResourceClaim, UnresolvedClaim, resolve_claim

_EPOCH = datetime.datetime.min.replace(tzinfo=datetime.UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class Gang:
    """One PodGroup with a gang policy, as a cycle sees it."""

    group: PodGroup
    min_count: int
    pending: tuple[Pod, ...]  # unscheduled members ours to place, in queue order
    scheduled: int  # members bound or assumed
    total: int  # every live member


def is_live(pod: Pod) -> bool:
    """Members that count: not finished and not being deleted."""
    return (
        pod.status.phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None
    )


def queue_order(pod: Pod) -> tuple[int, datetime.datetime, str]:
    """Upstream's PrioritySort: higher priority first, then the older pod (then the name)."""
    created = pod.metadata.creation_timestamp or _EPOCH
    return (-(pod.spec.priority or 0), created, pod.metadata.name)


def gang_of(
    group: PodGroup,
    members: Iterable[Pod],
    *,
    placed: Callable[[Pod], bool],
    ours: Callable[[Pod], bool],
) -> Gang:
    """The gang of `group` (which has a gang policy) among `members`, the pods naming it.

    `placed` says whether a pod is bound or assumed; `ours` whether this scheduler places it.
    """
    live = [pod for pod in members if is_live(pod)]
    scheduled = sum(1 for pod in live if placed(pod))
    pending = sorted((p for p in live if not placed(p) and ours(p)), key=queue_order)
    return Gang(
        group=group,
        min_count=group.min_count or 0,
        pending=tuple(pending),
        scheduled=scheduled,
        total=len(live),
    )


def claims_created(pod: Pod, claims: Store[ResourceClaim]) -> bool:
    """Whether every claim `pod` names is in the cache: until then the gang waits (the claims
    controller is making them), without a cycle that could only fail."""
    for entry in pod.spec.resource_claims:
        resolved = resolve_claim(pod, entry)
        if isinstance(resolved, UnresolvedClaim):
            if resolved.not_created:
                return False
            continue  # an error the member's decision reports
        name = resolved.name
        if name is not None and claims.get(ObjectKey(pod.metadata.namespace, name)) is None:
            return False
    return True
