"""PodGroupPostFilter in the live scheduler: its inputs read from the caches, its claim writes.

The inputs (`post_filter`): each member the failed cycle tried, with the claims Filter would
have found unavailable and its extended-resource claim of an earlier attempt; the group's own
claims; the priorities of the pods on nodes. A claim counts as unavailable when it is allocated
for nodes that exclude at least one node of the cluster (upstream records it per node that
reached DynamicResources' Filter; the cycle here does not keep per-node verdicts).

The writes (`carry_out`) act on the claim as read again, and only on the claim with the UID
the decision saw: deallocation and unreservation are status updates, the extended-resource
claim is deleted as the scheduler deletes one left over by a lone pod. A failure is logged and
left to the group's next cycle, as upstream leaves it to the next attempt.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dra_operator import errors
from dra_operator.cluster import CLAIMS_BY_OWNER_POD, ObjectKey
from dra_operator.controllers.scheduler.gang._members import Gang
from dra_operator.controllers.scheduler.gang._postfilter import (
    Action,
    ClaimAction,
    Status,
    Tried,
    chain,
    dynamic_resources,
    pod_group_preemption,
)
from dra_operator.model import (
    Pod,
    PodGroup,
    ResourceClaim,
    UnresolvedClaim,
    find_extended_claim,
    node_matches,
    resolve_claim,
)
from dra_operator.observability import get_logger

if TYPE_CHECKING:
    from dra_operator.controllers.scheduler._scheduler import Scheduler

_log = get_logger(__name__)


def post_filter(scheduler: Scheduler, gang: Gang, tried: list[Pod]) -> Status:
    """The PodGroupPostFilter chain of the default profile for a cycle that failed."""
    state = scheduler.state
    group = gang.group
    members = [
        Tried(
            pod=pod,
            unavailable=_unavailable(scheduler, pod),
            extended=find_extended_claim(
                pod,
                (e.obj for e in state.claims.by_index(CLAIMS_BY_OWNER_POD, pod.metadata.uid)),
            ),
        )
        for pod in tried
    ]
    dra = dynamic_resources(
        group,
        members,
        unscheduled=gang.pending,
        scheduled=gang.scheduled,
        group_claims=_group_claims(scheduler, group),
        # The API server drops spec.resourceClaims while DRAWorkloadResourceClaims is off.
        workload_claims=bool(group.resource_claims),
    )
    priorities = (e.obj.spec.priority or 0 for e in state.pods if e.obj.spec.node_name)
    return chain(dra, pod_group_preemption(group, gang.pending, priorities))


def _unavailable(scheduler: Scheduler, pod: Pod) -> tuple[ResourceClaim, ...]:
    state = scheduler.state
    found: list[ResourceClaim] = []
    for entry in pod.spec.resource_claims:
        resolved = resolve_claim(pod, entry)
        if isinstance(resolved, UnresolvedClaim) or resolved.name is None:
            continue
        claim_entry = state.claims.get(ObjectKey(pod.metadata.namespace, resolved.name))
        if claim_entry is None:
            continue
        allocation = claim_entry.obj.status.allocation
        if allocation is None or allocation.node_selector is None:
            continue
        selector = allocation.node_selector
        if any(not node_matches(n.obj.name, n.obj.labels, selector) for n in state.nodes):
            found.append(claim_entry.obj)
    return tuple(found)


def _group_claims(scheduler: Scheduler, group: PodGroup) -> list[ResourceClaim]:
    """upstream `NameFromPodGroup` and `IsForPodGroup` over `spec.resourceClaims`."""
    statuses = {s.name: s.resource_claim_name for s in group.resource_claim_statuses}
    found: list[ResourceClaim] = []
    for entry in group.resource_claims:
        name = entry.resource_claim_name
        check_owner = name is None
        if name is None:
            name = statuses.get(entry.name)
        if name is None:
            continue
        claim_entry = scheduler.state.claims.get(ObjectKey(group.metadata.namespace, name))
        if claim_entry is None:
            continue
        claim = claim_entry.obj
        if check_owner and not any(
            o.controller and o.uid == group.metadata.uid for o in claim.metadata.owner_references
        ):
            continue
        found.append(claim)
    return found


async def carry_out(
    scheduler: Scheduler, group: PodGroup, actions: tuple[ClaimAction, ...]
) -> None:
    """The writes of the chain, one after the other."""
    for action in actions:
        meta = action.claim.metadata
        key = ObjectKey(meta.namespace, meta.name)
        try:
            if action.action is Action.DELETE:
                await scheduler._delete_special(key, meta.uid)
                continue
            raw = await scheduler._writer.get_claim(key)
            if raw is None or (raw.get("metadata") or {}).get("uid") != meta.uid:
                continue
            if action.action is Action.DEALLOCATE:
                body = _deallocated(raw)
            else:
                body = _unreserved(raw, group.metadata.uid)
            await scheduler._writer.update_claim_status(body)
            _log.info("gang.post_filter", claim=str(key), action=action.action.value)
        except errors.APIError as exc:  # the group's next cycle decides again
            _log.warning("gang.post_filter_failed", claim=str(key), error=str(exc))


def _deallocated(raw: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = copy.deepcopy(dict(raw))
    status = body.setdefault("status", {})
    for field in ("reservedFor", "allocation", "devices"):
        status.pop(field, None)
    return body


def _unreserved(raw: Mapping[str, Any], group_uid: str) -> dict[str, Any]:
    body: dict[str, Any] = copy.deepcopy(dict(raw))
    status = body.setdefault("status", {})
    status["reservedFor"] = [
        r for r in status.get("reservedFor") or () if r.get("uid") != group_uid
    ]
    return body
