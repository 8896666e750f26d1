"""A gang cycle over the caches: each member decided as a lone pod would be, after the members
before it took their devices and node room; all of it rolled back when the gang fails.

A placement is reserved as the live scheduler reserves one (the profile's Reserve and Permit,
the ledger counting its allocations in flight, the NodeInfos the pod on its node) before the
next member is decided, and a
claim a member allocated reads as allocated to the members after it (`PendingClaims`), so a
shared claim is allocated once and its devices counted once. Nothing here awaits: no other
decision sees a gang half placed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from dra_operator.controllers.scheduler._decide import decide_pod
from dra_operator.controllers.scheduler._decision import (
    Decision,
    Placement,
    Unschedulable,
)
from dra_operator.controllers.scheduler._policies import Governor
from dra_operator.controllers.scheduler._state import (
    Settings,
    State,
)
from dra_operator.controllers.scheduler.gang._cycle import Outcome, run_cycle
from dra_operator.controllers.scheduler.gang._members import Gang
from dra_operator.controllers.scheduler.gang._overlay import PendingClaims
from dra_operator.controllers.scheduler.plugins.dynamicresources import claims_to_allocate
from dra_operator.hooks import HookPoints
from dra_operator.model import Pod


def decide_gang(
    gang: Gang,
    state: State,
    settings: Settings,
    governor: Governor,
    refusals: Mapping[str, str] | None = None,
    *,
    placement_feasible: bool = True,
) -> tuple[Outcome, dict[str, HookPoints]]:
    """The cycle's outcome, and the hook points each member was decided under. When the
    outcome is ok its placements stay reserved in `state` for the caller to write.
    `placement_feasible` False is 1.36's rule (`run_cycle`)."""
    claims = PendingClaims(state.claims)
    view = dataclasses.replace(state, claims=claims)
    points: dict[str, HookPoints] = {}
    refused = refusals or {}

    def place(member: Pod) -> Decision:
        uid = member.metadata.uid
        if uid in refused:
            return Unschedulable(refused[uid])
        choice = governor.choose(claims_to_allocate(member, view, settings.features), settings)
        points[uid] = choice.points
        decision = decide_pod(member, view, choice.settings)
        if isinstance(decision, Placement):
            rejected = _framework_reserve(decision)
            if rejected is not None:
                return Unschedulable(rejected)
            reserve(state, member, decision)
            for write in decision.claims:
                if write.allocation is not None:
                    claims.pend(write.key, write.allocation)
        return decision

    outcome = run_cycle(gang, place, placement_feasible=placement_feasible)
    state.score_start = view.score_start
    if not outcome.ok:
        for _, placement in reversed(outcome.placed):
            revert(state, placement)
    return outcome, points


def reserve(state: State, pod: Pod, placement: Placement) -> None:
    """What the live scheduler holds for a placement until its writes are seen."""
    for write in placement.claims:
        if write.allocation is not None:
            state.ledger.reserve(write.uid, write.allocation)
    if placement.extended is not None:
        state.ledger.reserve(placement.extended.uid, placement.extended.allocation)
    if placement.bind:
        state.node_infos.assume(pod, placement.node)


def _framework_reserve(placement: Placement) -> str | None:
    """The profile's Reserve, then Permit, on the member's node, as the live scheduler runs
    them for a lone pod; on a refusal, Unreserve and the FailedScheduling text."""
    cycle = placement.cycle
    if cycle is None:
        return None
    status = cycle.framework.run_reserve(cycle.state, cycle.pod, placement.node)
    if status.ok:
        status, _ = cycle.framework.run_permit(cycle.state, cycle.pod, placement.node)
        if status.ok:
            return None
    cycle.framework.run_unreserve(cycle.state, cycle.pod, placement.node)
    return ", ".join(status.reasons)


def revert(state: State, placement: Placement) -> None:
    """Undo `reserve` (and the profile's Reserve)."""
    cycle = placement.cycle
    if cycle is not None:
        cycle.framework.run_unreserve(cycle.state, cycle.pod, placement.node)
    for write in placement.claims:
        if write.allocation is not None:
            state.ledger.rollback(write.uid)
    if placement.extended is not None:
        state.ledger.rollback(placement.extended.uid)
    if placement.bind and placement.pod_uid:
        state.node_infos.forget(placement.pod_uid)
