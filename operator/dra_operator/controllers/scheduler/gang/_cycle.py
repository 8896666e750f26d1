"""One PodGroup cycle: place the gang's pods one after the other, all or none.

kube-scheduler v1.37.2, `podGroupSchedulingDefaultAlgorithm` with the GangScheduling plugin's
PlacementFeasible: before the first pod and after each one, a gang whose scheduled plus
remaining pods can no longer reach `minCount` stops the cycle; at the end it succeeds only when
scheduled pods reach `minCount`. Each pod is decided against what the pods before it in the
cycle took (the caller's `place` reserves a placement before returning it); the caller reverts
every placement of a cycle that failed. Pods that did not fit in a cycle that succeeded stay
unscheduled, each with its own reason.

kube-scheduler v1.36.5 with GangScheduling has no PlacementFeasible: its cycle tries every pod,
and the gang succeeds when the GangScheduling Permit of a placed pod finds `minCount` pods
scheduled; the pods that fit in a cycle that failed are rejected with that Permit's text
(`PERMIT_WAITING`). `run_cycle(..., placement_feasible=False)` is that rule.

Pure: `place` is the only way out, so the rule is tested on its own and over real decisions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dra_operator.controllers.scheduler._decision import (
    Decision,
    Placement,
    Unschedulable,
    Wait,
)
from dra_operator.controllers.scheduler.gang._members import Gang
from dra_operator.model import Pod

NOT_ENOUGH_PODS = "waiting for minCount pods from a gang to appear in scheduling queue"
"""PreEnqueue's text while the group has fewer than `minCount` pods (GangScheduling)."""


PERMIT_WAITING = "waiting for minCount pods from a gang to be scheduled"
"""1.36's GangScheduling Permit text while fewer than `minCount` pods are scheduled."""


def no_group(name: str) -> str:
    """PreEnqueue's text while the pod's PodGroup does not exist (GangScheduling)."""
    return f'waiting for pods\'s pod group "{name}" to appear in scheduling queue'


def cannot_be_satisfied(min_count: int, scheduled: int, remaining: int) -> str:
    """PlacementFeasible's Unschedulable text (GangScheduling)."""
    return (
        f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What a cycle decided: `ok` keeps `placed`; otherwise the caller reverts them all."""

    ok: bool
    message: str  # the group's status text ("" when it succeeded)
    placed: tuple[tuple[Pod, Placement], ...] = ()
    rejected: tuple[tuple[Pod, str], ...] = ()  # pods tried that did not fit, and why
    waiting: frozenset[str] = frozenset()  # UIDs of the rejected not decidable yet (no event)
    untried: tuple[Pod, ...] = ()  # pods the cycle stopped before


def run_cycle(
    gang: Gang, place: Callable[[Pod], Decision], *, placement_feasible: bool = True
) -> Outcome:
    """Place `gang.pending` in order until the gang is whole or cannot be (1.37), or every
    pod of it (1.36: `placement_feasible` False)."""
    scheduled = gang.scheduled
    remaining = len(gang.pending)
    if placement_feasible and remaining + scheduled < gang.min_count:
        message = cannot_be_satisfied(gang.min_count, scheduled, remaining)
        return Outcome(ok=False, message=message, untried=gang.pending)
    placed: list[tuple[Pod, Placement]] = []
    rejected: list[tuple[Pod, str]] = []
    waiting: set[str] = set()
    for index, pod in enumerate(gang.pending):
        decision = place(pod)
        remaining -= 1
        if isinstance(decision, Placement):
            placed.append((pod, decision))
            scheduled += 1
        elif isinstance(decision, Unschedulable | Wait):
            reason = decision.message if isinstance(decision, Unschedulable) else decision.reason
            rejected.append((pod, reason))
            if isinstance(decision, Wait):
                waiting.add(pod.metadata.uid)
        if placement_feasible and remaining + scheduled < gang.min_count:
            message = cannot_be_satisfied(gang.min_count, scheduled, remaining)
            return Outcome(
                ok=False,
                message=message,
                placed=tuple(placed),
                rejected=tuple(rejected),
                waiting=frozenset(waiting),
                untried=gang.pending[index + 1 :],
            )
    if scheduled < gang.min_count:  # only without PlacementFeasible
        return Outcome(
            ok=False,
            message=PERMIT_WAITING,
            placed=tuple(placed),
            rejected=tuple(rejected),
            waiting=frozenset(waiting),
        )
    return Outcome(
        ok=True,
        message="",
        placed=tuple(placed),
        rejected=tuple(rejected),
        waiting=frozenset(waiting),
    )
