"""Gang scheduling in the live scheduler: a popped pod of a gang runs its group's cycle.

The cycle (`run_cycle`) decides every pending member against the caches, each placement
reserved in the ledger and the NodeInfos before the next member is decided, and the claims the
members share seen as allocated by the member that allocated them (`PendingClaims`). Only when
the whole gang fits are the placements written, in one task (`_write_all`); otherwise
every reservation is rolled back before anything else runs (the cycle has no await), so no
device or node room is ever held for part of a gang, and each member gets a FailedScheduling
event with the group's text. Members whose cycle ran are not decided again on their own
until something changes (kube-scheduler pops the group once). A cycle that failed runs
PodGroupPostFilter (`_cleanup`, 1.37): its claim writes, and its text after the cycle's.

On a 1.36 server (scheduling.k8s.io/v1alpha2, GenericWorkload with GangScheduling) the cycle
follows 1.36: every member is tried, the members that fit in a failed cycle get 1.36's Permit
text, no PodGroupPostFilter runs, and the condition is 1.36's `PodGroupScheduled`.

Because the gang is placed in one cycle, no member ever waits at Permit for the others
(kube-scheduler v1.37.2's GangScheduling Permit, with its 5-minute timeout, only holds pods
placed one by one). Groups in a CompositePodGroup and groups with topology constraints
(TopologyAwareWorkloadScheduling) are not placed: their pods get an event saying so.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from dra_operator import errors, names
from dra_operator.cluster import PODS_BY_POD_GROUP, Change, ObjectKey, Store
from dra_operator.controllers.scheduler._decide import handles
from dra_operator.controllers.scheduler._decision import (
    ClaimWrite,
    Placement,
)
from dra_operator.controllers.scheduler._events import WorkKey, pod_key
from dra_operator.controllers.scheduler._writes import Event
from dra_operator.controllers.scheduler.gang._cleanup import carry_out, post_filter
from dra_operator.controllers.scheduler.gang._cycle import NOT_ENOUGH_PODS, Outcome, no_group
from dra_operator.controllers.scheduler.gang._decide_gang import decide_gang
from dra_operator.controllers.scheduler.gang._members import Gang, claims_created, gang_of
from dra_operator.controllers.scheduler.gang._postfilter import group_message
from dra_operator.controllers.scheduler.gang._status import SCHEDULED_1_36, condition_patch
from dra_operator.controllers.scheduler.plugins.dynamicresources import claims_to_allocate
from dra_operator.hooks import HookPoints
from dra_operator.model import Pod, PodGroup
from dra_operator.observability import get_logger

if TYPE_CHECKING:
    from dra_operator.controllers.scheduler._scheduler import Scheduler

_log = get_logger(__name__)

COMPOSITE_NOT_SUPPORTED = (
    "PodGroup {group} belongs to CompositePodGroup {parent}: composite pod groups are not "
    "supported by dra-operator"
)
TOPOLOGY_NOT_SUPPORTED = (
    "PodGroup {group} has topology scheduling constraints: topology-aware workload scheduling "
    "is not supported by dra-operator"
)


class GroupWriter(Protocol):
    """Patches a PodGroup's status (merge patch); raises `errors.APIError`."""

    async def patch_group_status(self, key: ObjectKey, patch: Mapping[str, Any]) -> None: ...


class Gangs:
    """The PodGroups the server serves, and the gang cycles of their pods."""

    def __init__(
        self, groups: Store[PodGroup], writer: GroupWriter | None = None, *, release: int = 37
    ) -> None:
        self.groups = groups
        self._writer = writer
        self.release = release  # the server's minor: 1.36 has its own gang rule and texts
        # per group: what the caches were when its last cycle failed, and the members it tried
        self._covered: dict[ObjectKey, tuple[tuple[int, ...], set[str]]] = {}

    def takes(self, pod: Pod) -> bool:
        """Whether `pod` is placed by a group cycle: unbound, and its group (absent yet, or
        with a gang policy, or of a kind not supported) not a basic one."""
        name = pod.spec.pod_group_name
        if name is None or pod.spec.node_name:
            return False
        entry = self.groups.get(ObjectKey(pod.metadata.namespace, name))
        if entry is None:
            return True
        group = entry.obj
        return group.min_count is not None or _unsupported(group) is not None

    def group_changed(self, change: Change[PodGroup], scheduler: Scheduler) -> None:
        """A PodGroup appeared or changed (its minCount may be lower): its pods are retried."""
        if change.new is None:
            return
        self._covered.pop(change.new.key, None)
        for entry in scheduler.state.pods.by_index(PODS_BY_POD_GROUP, change.new.key):
            if handles(entry.obj, scheduler.scheduler_names):
                scheduler.controller.enqueue(pod_key(entry.obj))

    async def schedule(self, scheduler: Scheduler, key: WorkKey, pod: Pod) -> None:
        """The group cycle for the popped `pod`, and its writes or events."""
        assert pod.spec.pod_group_name is not None
        group_key = ObjectKey(pod.metadata.namespace, pod.spec.pod_group_name)
        entry = self.groups.get(group_key)
        if entry is None:
            scheduler.unschedulable.add(key)
            _log.info("gang.waiting", pod=str(key), reason=no_group(group_key.name))
            return
        group = entry.obj
        unsupported = _unsupported(group)
        if unsupported is not None:
            scheduler.unschedulable.add(key)
            scheduler._spawn(scheduler._writer.emit(_failed(pod, unsupported)))
            return
        state = scheduler.state
        gang = gang_of(
            group,
            (e.obj for e in state.pods.by_index(PODS_BY_POD_GROUP, group_key)),
            placed=lambda p: (
                bool(p.spec.node_name) or state.node_infos.node_of(p.metadata.uid) is not None
            ),
            ours=lambda p: handles(p, scheduler.scheduler_names) and not p.spec.scheduling_gates,
        )
        uid = pod.metadata.uid
        if all(p.metadata.uid != uid for p in gang.pending):
            return  # placed by the cycle of another member
        covered = self._covered.get(group_key)
        if (
            covered is not None
            and covered[0] == _seen(scheduler, self.groups)
            and uid in covered[1]
        ):
            covered[1].discard(uid)  # nothing changed since its group's cycle tried it
            scheduler.unschedulable.add(key)
            return
        if gang.total < gang.min_count:
            for member in gang.pending:
                scheduler.unschedulable.add(pod_key(member))
            _log.info("gang.waiting", pod=str(key), reason=NOT_ENOUGH_PODS)
            return
        missing = next((p for p in gang.pending if not claims_created(p, state.claims)), None)
        if missing is not None:  # the claim's creation queues that member again
            for member in gang.pending:
                scheduler.unschedulable.add(pod_key(member))
            _log.info("gang.waiting", pod=str(key), claims_of=missing.metadata.name)
            return
        refusals = await _refusals(scheduler, gang)
        outcome, points = decide_gang(
            gang,
            scheduler.state,
            scheduler.settings,
            scheduler.governor,
            refusals,
            placement_feasible=self.release >= 37,
        )
        if outcome.ok:
            self._covered.pop(group_key, None)
            self._carry_out(scheduler, outcome, points)
        else:
            if self.release >= 37:  # PodGroupPostFilter is new in 1.37
                outcome = self._post_filter(scheduler, gang, outcome)
            others = {p.metadata.uid for p in gang.pending} - {uid}
            self._covered[group_key] = (_seen(scheduler, self.groups), others)
            self._reject(scheduler, outcome)
        _log.info(
            "gang.cycle",
            group=str(group_key),
            ok=outcome.ok,
            placed=len(outcome.placed),
            message=outcome.message,
        )
        if self._writer is not None:
            now = datetime.datetime.now(datetime.UTC)
            if self.release >= 37:
                patch = condition_patch(entry.raw, ok=outcome.ok, message=outcome.message, now=now)
            else:  # 1.36: another type, and no text for a failed cycle
                patch = condition_patch(
                    entry.raw, ok=outcome.ok, message="", now=now, kind=SCHEDULED_1_36
                )
            if patch is not None:
                scheduler._spawn(self._patch(group_key, patch))

    def _carry_out(
        self, scheduler: Scheduler, outcome: Outcome, points: Mapping[str, HookPoints]
    ) -> None:
        placements = []
        for member, placement in outcome.placed:
            key = pod_key(member)
            scheduler.unschedulable.discard(key)
            scheduler._writing.add(key)
            placements.append((key, member, placement, points[member.metadata.uid]))
        scheduler._spawn(_write_all(scheduler, placements))
        for member, reason in outcome.rejected:
            scheduler.unschedulable.add(pod_key(member))
            if member.metadata.uid not in outcome.waiting:
                scheduler._spawn(scheduler._writer.emit(_failed(member, reason)))

    def _post_filter(self, scheduler: Scheduler, gang: Gang, outcome: Outcome) -> Outcome:
        """PodGroupPostFilter: its claim writes as a task, its text after the cycle's."""
        tried = {p.metadata.uid for p, _ in (*outcome.placed, *outcome.rejected)}
        status = post_filter(scheduler, gang, [p for p in gang.pending if p.metadata.uid in tried])
        if status.actions:
            scheduler._spawn(carry_out(scheduler, gang.group, status.actions))
        return dataclasses.replace(outcome, message=group_message(outcome.message, status))

    def _reject(self, scheduler: Scheduler, outcome: Outcome) -> None:
        own = {p.metadata.uid: reason for p, reason in outcome.rejected}
        members = [p for p, _ in outcome.placed] + [p for p, _ in outcome.rejected]
        for member in [*members, *outcome.untried]:
            scheduler.unschedulable.add(pod_key(member))
            if member.metadata.uid in outcome.waiting:
                continue  # parked without an event, as a pod that waits alone
            text = own.get(member.metadata.uid, outcome.message)
            scheduler._spawn(scheduler._writer.emit(_failed(member, text)))

    async def _patch(self, key: ObjectKey, patch: Mapping[str, Any]) -> None:
        assert self._writer is not None
        try:
            await self._writer.patch_group_status(key, patch)
        except errors.APIError as exc:  # the next cycle writes it again
            _log.warning("gang.status_failed", group=str(key), error=str(exc))


def _unsupported(group: PodGroup) -> str | None:
    meta = group.metadata
    name = f"{meta.namespace}/{meta.name}"
    if group.parent_composite is not None:
        return COMPOSITE_NOT_SUPPORTED.format(group=name, parent=group.parent_composite)
    if group.topology_constraints:
        return TOPOLOGY_NOT_SUPPORTED.format(group=name)
    return None


async def _refusals(scheduler: Scheduler, gang: Gang) -> dict[str, str]:
    """The `before_allocate` hooks of every member, asked before the cycle (which cannot
    await): a member refused is one that does not fit."""
    refused: dict[str, str] = {}
    features = scheduler.settings.features
    for member in gang.pending:
        pending = claims_to_allocate(member, scheduler.state, features)
        choice = scheduler.governor.choose(pending, scheduler.settings)
        for claim in pending:
            refusal = await choice.points.before_allocate(claim)
            if refusal is not None:
                refused[member.metadata.uid] = refusal.message
                break
    return refused


def _seen(scheduler: Scheduler, groups: Store[PodGroup]) -> tuple[int, ...]:
    """The revisions of every cache a cycle reads: equal means a new cycle decides the same."""
    state = scheduler.state
    return (
        state.ledger.revision,
        state.pods.revision,
        state.claims.revision,
        state.nodes.revision,
        state.slices.revision,
        state.classes.revision,
        groups.revision,
    )


async def _write_all(
    scheduler: Scheduler, placements: list[tuple[WorkKey, Pod, Placement, HookPoints]]
) -> None:
    """The gang's writes: first, concurrently, the members that reserve no claim another
    member allocates; then, one after the other, those that do, each on the claim's version
    the allocating write returned (a shared claim is written allocated once)."""
    allocated = {w.key for _, _, p, _ in placements for w in p.claims if w.allocation is not None}

    def later(placement: Placement) -> bool:
        return any(w.allocation is None and w.key in allocated for w in placement.claims)

    async def carry_out(entry: tuple[WorkKey, Pod, Placement, HookPoints]) -> None:
        key, member, placement, points = entry
        fresh = tuple(_current(scheduler, write) for write in placement.claims)
        placement = dataclasses.replace(placement, claims=fresh)
        await scheduler._carry_out(key, ("Pod", member.metadata.uid), placement, points)

    await asyncio.gather(*(carry_out(e) for e in placements if not later(e[2])))
    for entry in placements:
        if later(entry[2]):
            await carry_out(entry)


def _current(scheduler: Scheduler, write: ClaimWrite) -> ClaimWrite:
    if write.allocation is not None:
        return write
    entry = scheduler.state.claims.get(write.key)
    if entry is None or entry.obj.metadata.uid != write.uid:
        return write
    return dataclasses.replace(write, resource_version=entry.resource_version)


def _failed(pod: Pod, message: str) -> Event:
    return Event(
        kind="Pod",
        involved=ObjectKey(pod.metadata.namespace, pod.metadata.name),
        uid=pod.metadata.uid,
        type=names.EVENT_TYPE_WARNING,
        reason=names.EVENT_FAILED_SCHEDULING,
        message=message,
    )
