"""PodGroupPostFilter: what a gang cycle that found no placement does before its pods go back.

kube-scheduler v1.37.2 runs the PodGroupPostFilter plugins in profile order when a PodGroup
cycle ends Unschedulable (pkg/scheduler/schedule_one_podgroup.go, `podGroupCycle`): the first
plugin that succeeds (a preemption) ends the chain, the first UnschedulableAndUnresolvable
status ends it too, and Unschedulable reasons pile up. The chain's text is appended to the
group's status (`applyPodGroupPostFilterResult`), so it ends the PodGroupInitiallyScheduled
message and the FailedScheduling text of members that did fit.

The default profile has two such plugins:

* DynamicResources (plugins/dynamicresources, `PodGroupPostFilter`): for each member the cycle
  tried, the per-pod PostFilter step (deallocate one claim Filter found unavailable on a node
  and reserved for nobody or only that pod; else delete the pod's DRA extended-resource claim
  of an earlier attempt). If some member found nothing to free, DRAWorkloadResourceClaims is
  on and no member is scheduled yet: deallocate one unavailable claim reserved for nobody or
  only the group, or else take the group out of `reservedFor` of its first allocated claim
  (UnschedulableAndUnresolvable).
* DefaultPreemption (plugins/defaultpreemption, `PodGroupPostFilter`): not eligible when a
  member says `preemptionPolicy: Never`; UnschedulableAndUnresolvable when no pod on any node
  has a lower priority than the group. Choosing victims for a group is not implemented here:
  when some could exist the chain says so (`PREEMPTION_NOT_SUPPORTED`).

Pure: the caller says which claims each member found unavailable and carries out `actions`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dra_operator.model import Pod, PodGroup, ResourceClaim

DEALLOCATED = "deallocation of ResourceClaim completed"
DELETED = "deletion of ResourceClaim completed"
DEALLOCATED_GROUP_CLAIM = "deallocation of PodGroup ResourceClaim completed"
UNRESERVED_FOR_GROUP = "ResourceClaim unreserved for PodGroup"
COMPLETED = "deallocation and deletion of ResourceClaims completed"
PREEMPTION = "pod group preemption: "
NO_VICTIMS = "No preemption victims found for incoming preemptor"
NEVER = "not eligible due to preemptionPolicy=Never."
PREEMPTION_NOT_SUPPORTED = "pod group preemption is not supported by dra-operator"


class Action(enum.Enum):
    """A claim write of the DynamicResources step."""

    DEALLOCATE = "deallocate"  # UpdateStatus without allocation, reservedFor and devices
    DELETE = "delete"  # the special claim of DRA extended resources
    UNRESERVE = "unreserve"  # the PodGroup out of `status.reservedFor`


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimAction:
    action: Action
    claim: ResourceClaim


@dataclass(frozen=True, slots=True, kw_only=True)
class Tried:
    """A member the cycle ran PreFilter and Filter for."""

    pod: Pod
    unavailable: tuple[ResourceClaim, ...] = ()  # allocated, not available on a filtered node
    extended: ResourceClaim | None = None  # its extended-resource claim from an earlier attempt


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    """A plugin's Unschedulable status; `final` is UnschedulableAndUnresolvable."""

    reasons: tuple[str, ...]
    final: bool = False
    actions: tuple[ClaimAction, ...] = ()


def dynamic_resources(
    group: PodGroup,
    tried: Sequence[Tried],
    *,
    unscheduled: Sequence[Pod],
    scheduled: int,
    group_claims: Sequence[ResourceClaim],
    workload_claims: bool,
) -> Status:
    """DynamicResources' PodGroupPostFilter. `tried` are the members of `unscheduled` (the
    group's unscheduled pods, in queue order) the cycle reached; `group_claims` the group's own
    claims (by `spec.resourceClaims`, owner checked), in that order."""
    actions: list[ClaimAction] = []
    unreserve = False
    for member in tried:
        action = _free_one(member)
        if action is None:
            unreserve = True
        else:
            actions.append(action)
    if unreserve and workload_claims and unscheduled and scheduled == 0:
        done = {a.claim.metadata.uid for a in actions}
        for member in tried:
            for claim in member.unavailable:
                if claim.metadata.uid in done:
                    continue  # freed just above for its pod
                if _reserved_for_nobody_or(claim, group.metadata.uid):
                    action = ClaimAction(action=Action.DEALLOCATE, claim=claim)
                    return Status(reasons=(DEALLOCATED_GROUP_CLAIM,), actions=(*actions, action))
        first = unscheduled[0]  # upstream asks whether the claim is reserved for this pod
        for claim in group_claims:
            if claim.status.allocation is None:
                continue
            consumers = {ref.uid for ref in claim.status.reserved_for}
            if consumers & {first.metadata.uid, group.metadata.uid}:
                action = ClaimAction(action=Action.UNRESERVE, claim=claim)
                return Status(
                    reasons=(UNRESERVED_FOR_GROUP,), final=True, actions=(*actions, action)
                )
    return Status(reasons=(COMPLETED,), actions=tuple(actions))


def _free_one(member: Tried) -> ClaimAction | None:
    """The per-pod PostFilter step (`deallocateOrDeletePodClaims`): None when nothing is freed."""
    extended = member.extended
    for claim in member.unavailable:
        if extended is not None and claim.metadata.uid == extended.metadata.uid:
            break
        if _reserved_for_nobody_or(claim, member.pod.metadata.uid):
            return ClaimAction(action=Action.DEALLOCATE, claim=claim)
    if extended is not None:
        return ClaimAction(action=Action.DELETE, claim=extended)
    return None


def _reserved_for_nobody_or(claim: ResourceClaim, uid: str) -> bool:
    reserved = claim.status.reserved_for
    return not reserved or (len(reserved) == 1 and reserved[0].uid == uid)


def pod_group_preemption(
    group: PodGroup, unscheduled: Sequence[Pod], priorities: Iterable[int]
) -> Status:
    """DefaultPreemption's PodGroupPostFilter up to choosing victims. `priorities` are those
    of the pods on nodes (the possible victims)."""
    if any(p.spec.preemption_policy == "Never" for p in unscheduled):
        return Status(reasons=(PREEMPTION + NEVER,))
    priority = group.priority or 0
    if not any(p < priority for p in priorities):
        return Status(reasons=(PREEMPTION + NO_VICTIMS,), final=True)
    return Status(reasons=(PREEMPTION_NOT_SUPPORTED,))


def chain(*statuses: Status) -> Status:
    """The framework's `RunPodGroupPostFilterPlugins` over the plugins' statuses in profile
    order: an UnschedulableAndUnresolvable one is the result; else the reasons joined. Every
    status's actions stay: a plugin's writes are done before the next plugin runs."""
    reasons: list[str] = []
    actions: list[ClaimAction] = []
    for status in statuses:
        actions.extend(status.actions)
        if status.final:
            return Status(reasons=status.reasons, final=True, actions=tuple(actions))
        reasons.extend(status.reasons)
    return Status(reasons=tuple(reasons), actions=tuple(actions))


def group_message(cycle: str, post_filter: Status) -> str:
    """The group's text: the cycle's, then PostFilter's (`AppendReason`, joined by ", ")."""
    return ", ".join((cycle, *post_filter.reasons)) if cycle else ", ".join(post_filter.reasons)
