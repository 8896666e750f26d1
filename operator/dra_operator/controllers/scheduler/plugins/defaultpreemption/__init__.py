"""DefaultPreemption (PostFilter): make room for a pod that fits nowhere by evicting pods of
lower priority, on the node where that costs least.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/defaultpreemption and
pkg/scheduler/framework/preemption (`Evaluator.Preempt`). A pod with `preemptionPolicy: Never`
does not preempt, nor does one whose nominated node still has a lower-priority pod terminating
because of an earlier preemption. Only nodes Filter found Unschedulable (not
UnschedulableAndUnresolvable) are tried, at most `max(minCandidateNodesPercentage % of them,
minCandidateNodesAbsolute)` candidates are kept (defaults 10 and 100), and the choice follows
upstream's order (see `_candidates`).

The plugin is pure like every plugin before Permit: it names the node and the victims, and
stores the chosen candidate in the CycleState (`chosen_candidate`); the caller performs the
writes (victims' DisruptionTarget condition and deletion, the nomination) as upstream's
executor does. Upstream's asynchronous preemption and PodGroup (gang) preemption are not
modelled.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    Diagnosis,
    FrameworkHandle,
    Handle,
    NodeToStatus,
    PostFilterResult,
    Status,
    fit_error_message,
    unschedulable,
)
from dra_operator.controllers.scheduler.plugins._args import PluginArgsError, as_int, check_known
from dra_operator.controllers.scheduler.plugins.defaultpreemption._candidates import (
    dry_run,
    pick_one,
)
from dra_operator.controllers.scheduler.plugins.defaultpreemption._victims import (
    DISRUPTION_TARGET,
    NO_VICTIMS,
    PREEMPTION_BY_SCHEDULER,
    Candidate,
    priority,
    terminating_by_preemption,
)
from dra_operator.model import Pod

NAME = "DefaultPreemption"
STATE_KEY = "PostFilter" + NAME
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."

_ABSENT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
"""A node Filter did not look at counts as out for good (upstream's default absent status)."""


@dataclass(frozen=True, slots=True)
class Args:
    """DefaultPreemptionArgs."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


_PERCENTAGE = "minCandidateNodesPercentage"
_ABSOLUTE = "minCandidateNodesAbsolute"


def parse_args(args: Mapping[str, object]) -> Args:
    """The args, with upstream's defaults and validation texts."""
    check_known(args, "args", ("minCandidateNodesPercentage", "minCandidateNodesAbsolute"))
    percentage = as_int(
        args.get("minCandidateNodesPercentage", 10), "args.minCandidateNodesPercentage"
    )
    absolute = as_int(args.get("minCandidateNodesAbsolute", 100), "args.minCandidateNodesAbsolute")
    errors = []
    if not 0 <= percentage <= 100:
        errors.append(
            f"minCandidateNodesPercentage: Invalid value: {percentage}: not in valid range [0, 100]"
        )
    if absolute < 0:
        errors.append(
            f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)"
        )
    if percentage == 0 and absolute == 0:
        errors += [
            f"{a}: Invalid value: 0: cannot be zero at the same time as {b}"
            for a, b in ((_PERCENTAGE, _ABSOLUTE), (_ABSOLUTE, _PERCENTAGE))
        ]
    if errors:
        raise PluginArgsError("; ".join(errors))
    return Args(percentage, absolute)


def chosen_candidate(state: CycleState) -> Candidate | None:
    """The candidate this cycle's PostFilter chose, for the caller that performs the writes."""
    value = state.get(STATE_KEY)
    return value if isinstance(value, Candidate) else None


class DefaultPreemption:
    def __init__(
        self,
        args: Args,
        handle: FrameworkHandle,
        *,
        offset: Callable[[int], int] = random.randrange,
    ) -> None:
        self.args = args
        self.handle = handle
        self.offset = offset  # where in the potential nodes the search starts; random upstream

    @property
    def name(self) -> str:
        return NAME

    def num_candidates(self, num_nodes: int) -> int:
        wanted = num_nodes * self.args.min_candidate_nodes_percentage // 100
        return min(max(wanted, self.args.min_candidate_nodes_absolute), num_nodes)

    def eligible(self, pod: Pod, nominated_status: Status) -> str:
        """ "" when `pod` may preempt, else upstream's reason why not."""
        if pod.spec.preemption_policy == "Never":
            return NEVER
        nominated = pod.status.nominated_node_name
        if not nominated or nominated_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return ""
        node = self.handle.snapshot.get(nominated)
        if node is None:
            return ""
        own = priority(pod)
        for info in node.pods:
            if priority(info.pod) < own and terminating_by_preemption(info.pod):
                return TERMINATING
        return ""

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        result, status = self._preempt(state, pod, statuses)
        if status.reasons:
            text = ", ".join(status.reasons)
            status = Status(status.code, (f"preemption: {text}",), status.plugin)
        return result, status

    def _preempt(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        nominated = pod.status.nominated_node_name
        reason = self.eligible(pod, statuses.get(nominated, _ABSENT))
        if reason:
            return None, unschedulable(reason)
        snapshot = self.handle.snapshot
        potential = [
            n for n in snapshot if statuses.get(n.name, _ABSENT).code is Code.UNSCHEDULABLE
        ]
        candidates: list[Candidate] = []
        diagnosis = Diagnosis(NodeToStatus([n.name for n in snapshot]))
        if potential:
            budgets = self.handle.pod_disruption_budgets()
            wanted = self.num_candidates(len(potential))
            candidates, diagnosis.statuses = dry_run(
                self.handle, state, pod, potential, budgets, self.offset(len(potential)), wanted
            )
        if not candidates:
            errors = [s for s in diagnosis.statuses.explicit.values() if s.code is Code.ERROR]
            if errors:
                return None, errors[0]
            diagnosis.statuses.absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL,))
            text = fit_error_message(len(snapshot), diagnosis)
            return PostFilterResult(""), unschedulable(text)
        best = pick_one(candidates)
        state.write(STATE_KEY, best)
        text = (
            f"found a potential placement for pod on node {best.node}, "
            f"preempting {len(best.victims)} victims"
        )
        return PostFilterResult(best.node), Status(Code.SUCCESS, (text,))


def new(args: Mapping[str, object], handle: Handle) -> DefaultPreemption:
    if not isinstance(handle, FrameworkHandle):
        raise TypeError(f"{NAME} needs the framework's handle, got {type(handle).__name__}")
    return DefaultPreemption(parse_args(args), handle)


__all__ = [
    "DISRUPTION_TARGET",
    "NAME",
    "NO_VICTIMS",
    "PREEMPTION_BY_SCHEDULER",
    "Candidate",
    "DefaultPreemption",
    "chosen_candidate",
    "new",
]
