"""From watch changes to scheduler work keys (upstream-dra.md §3.2's cluster events), pure.

A pod is queued when it changes, we handle it and its claims exist (upstream's DRA PreEnqueue:
a pod waiting for a claim to be created is not worth a decision; the claim's creation or the
pod status naming it queues the pod then). A claim added or updated queues the pods that use
the claim (found through the pods-by-claim index) and, for a standalone claim asking for
immediate allocation, the claim itself. A claim deleted queues none of them: 1.36's plugin has
no Delete event, and 1.37's hint skips a claim deleted without an allocation and, for one
deleted with its allocation, queues every parked pod (`releases_devices`). Anything that can
free room queues every key currently parked as unschedulable — kube-scheduler's "move all to
active" on a cluster event — never a scan of all pods: slices, classes and nodes changing, a
claim losing its allocation or going away with it, a pod leaving a node. Keys are level-based:
the reconcile reads the caches afresh.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from dra_operator import names
from dra_operator.cluster import PODS_BY_CLAIM, Change, ObjectKey, Store
from dra_operator.controllers.scheduler._decide import handles
from dra_operator.model import Pod, ResourceClaim, UnresolvedClaim, resolve_claim


class WorkKey(NamedTuple):
    kind: Literal["pod", "claim"]
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


def pod_key(pod: Pod) -> WorkKey:
    return WorkKey("pod", pod.metadata.namespace, pod.metadata.name)


def queue_priority(pods: Store[Pod], key: WorkKey) -> int:
    """The key's rank in the scheduler's queue, kube-scheduler's PrioritySort (v1.37.2,
    pkg/scheduler/framework/plugins/queuesort): the pod's `spec.priority` (0 when unset or the
    pod is gone), so a higher priority is decided first and equal ones in the order they became
    ready; a claim key (immediate allocation) ranks as priority 0."""
    if key.kind != "pod":
        return 0
    entry = pods.get(ObjectKey(key.namespace, key.name))
    return (entry.obj.spec.priority or 0) if entry is not None else 0


def claim_key(claim: ResourceClaim) -> WorkKey:
    return WorkKey("claim", claim.metadata.namespace, claim.metadata.name)


def wants_immediate(claim: ResourceClaim) -> bool:
    return claim.metadata.annotations.get(names.ALLOCATE_ANNOTATION) == names.ALLOCATE_IMMEDIATE


def keys_for_pod(
    change: Change[Pod], scheduler_names: frozenset[str], claims: Store[ResourceClaim]
) -> list[WorkKey]:
    """The pod itself, when we place it or it is bound with claims to allocate or reserve, and
    every claim it names exists."""
    new = change.new.obj if change.new is not None else None
    if new is None or not handles(new, scheduler_names) or not _claims_exist(new, claims):
        return []
    return [pod_key(new)]


def _claims_exist(pod: Pod, claims: Store[ResourceClaim]) -> bool:
    for entry in pod.spec.resource_claims:
        resolved = resolve_claim(pod, entry)
        if isinstance(resolved, UnresolvedClaim):
            if resolved.not_created:
                return False
            continue  # an error the decision reports
        if (
            resolved.name is not None
            and claims.get(ObjectKey(pod.metadata.namespace, resolved.name)) is None
        ):
            return False
    return True


def frees_room(change: Change[Pod]) -> bool:
    """A placed pod went away or finished: its node's resources are free again."""
    old = change.old.obj if change.old is not None else None
    if old is None or not old.spec.node_name:
        return False
    new = change.new.obj if change.new is not None else None
    return new is None or (
        new.status.phase in ("Succeeded", "Failed")
        and old.status.phase not in ("Succeeded", "Failed")
    )


def keys_for_claim(
    change: Change[ResourceClaim], pods: Store[Pod], scheduler_names: frozenset[str]
) -> list[WorkKey]:
    """The pods using the claim, and the claim if it asks to be allocated; none for a deletion."""
    if change.new is None:
        return []
    keys: list[WorkKey] = []
    for claim in change.objects():
        index_key = ObjectKey(claim.metadata.namespace, claim.metadata.name)
        keys += [
            pod_key(entry.obj)
            for entry in pods.by_index(PODS_BY_CLAIM, index_key)
            if handles(entry.obj, scheduler_names)
        ]
    if change.new is not None and wants_immediate(change.new.obj):
        keys.append(claim_key(change.new.obj))
    return list(dict.fromkeys(keys))


def releases_devices(change: Change[ResourceClaim]) -> bool:
    """A claim lost its allocation (deallocated or deleted): its devices are free again.

    A deletion is judged by the claim as the store last held it, which has every allocation we
    wrote (`Store.assume`): 1.37's hint for a claim whose final state is unknown is not needed.
    1.36 registers no claim Delete event and relies on the unschedulable pods being flushed
    after 5 minutes; with no such flush here, a claim deleted with its allocation wakes the
    parked keys on 1.36 too, so they get the devices at once rather than never.
    """
    old = change.old.obj if change.old is not None else None
    if old is None or old.status.allocation is None:
        return False
    return change.new is None or change.new.obj.status.allocation is None
