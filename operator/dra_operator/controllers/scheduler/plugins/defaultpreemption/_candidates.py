"""Candidate nodes for preemption, and the one chosen.

kube-scheduler v1.37.2, pkg/scheduler/framework/preemption/preemption.go (`DryRunPreemption`,
`pickOneNodeForPreemption`) and util (`GetEarliestPodStartTime`). The nodes are tried from a
random offset, in order, until enough candidates are found (at least one that breaks no
budget). Upstream tries nodes in parallel, so which nodes it tried when it stops is a race;
here they are tried one after another, which gives what upstream gives when no two nodes race.
The last tie of the choice is the first candidate found, where upstream's is a map's order.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence

from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    FrameworkHandle,
    NodeInfo,
    NodeToStatus,
    Status,
)
from dra_operator.controllers.scheduler.plugins.defaultpreemption._victims import (
    Candidate,
    priority,
    select_victims_on_node,
    start_time,
)
from dra_operator.model import Pod, PodDisruptionBudget

_INT32_SPAN = 2**31
"""Priorities are shifted by this before summing, so that every term is positive."""
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MICROSECOND = datetime.timedelta(microseconds=1)


def dry_run(
    handle: FrameworkHandle,
    state: CycleState,
    preemptor: Pod,
    nodes: Sequence[NodeInfo],
    budgets: Sequence[PodDisruptionBudget],
    offset: int,
    wanted: int,
) -> tuple[list[Candidate], NodeToStatus]:
    """Candidates that break no budget first, then the others (each list at most `wanted`
    long), and the status of each node tried that is no candidate."""
    clean: list[Candidate] = []
    violating: list[Candidate] = []
    statuses = NodeToStatus([n.name for n in handle.snapshot])
    for i in range(len(nodes)):
        node = nodes[(offset + i) % len(nodes)]
        victims, num_violations, status = select_victims_on_node(
            handle, state.clone(), preemptor, node.clone(), budgets
        )
        if status.ok and victims:
            found = violating if num_violations else clean
            if len(found) < wanted:
                found.append(Candidate(node.name, tuple(victims), num_violations))
            if clean and len(clean) + len(violating) >= wanted:
                break
            continue
        if status.ok:
            status = Status(
                Code.ERROR, (f'expected at least one victim pod on node "{node.name}"',)
            )
        statuses.explicit[node.name] = status
    return clean + violating, statuses


def _earliest_start_of_most_important(victims: Sequence[Pod]) -> int:
    """In microseconds since the epoch, so that every score is an int."""
    top = max(priority(p) for p in victims)
    earliest = min(start_time(p) for p in victims if priority(p) == top)
    return (earliest - _EPOCH) // _MICROSECOND


_SCORES: tuple[Callable[[Candidate], int], ...] = (
    lambda c: -c.num_pdb_violations,
    lambda c: -priority(c.victims[0]),
    lambda c: -sum(priority(p) + _INT32_SPAN for p in c.victims),
    lambda c: -len(c.victims),
    lambda c: _earliest_start_of_most_important(c.victims),
)
"""Fewest budgets broken, lowest highest victim priority, lowest sum of priorities, fewest
victims, latest start of the most important victims: each breaks the ties of the one before."""


def pick_one(candidates: Sequence[Candidate]) -> Candidate:
    remaining = list(candidates)
    for score in _SCORES:
        if len(remaining) == 1:
            break
        values = [score(c) for c in remaining]
        best = max(values)
        remaining = [c for c, v in zip(remaining, values, strict=True) if v == best]
    return remaining[0]
