"""One pod's scheduling algorithm: PreFilter, Filter over enough nodes, Score, the host.

kube-scheduler v1.37.2, pkg/scheduler/schedule_one.go (`schedulePod`, `findNodesThatFitPod`,
`findNodesThatPassFilters`, `numFeasibleNodesToFind`, `prioritizeNodes`, and PostFilter in
`schedulingAlgorithm`). Filter walks the nodes PreFilter left, starting where the previous
cycle stopped (`Framework.next_start_node_index`), and stops once it has found
`num_feasible_nodes_to_find` nodes (one when no plugin scores). A single feasible node is
taken without scoring.

Two differences, both for determinism: upstream filters nodes in parallel (which nodes are
checked when it stops early is a race) and breaks score ties at random; here Filter walks the
nodes in order, and among the nodes with the highest total the one Filter found first wins.
A PreFilter result's nodes are walked in snapshot (name) order, where upstream walks a set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework._diagnosis import (
    NO_NODES,
    Diagnosis,
    NodeToStatus,
    fit_error_message,
    message,
)
from dra_operator.controllers.scheduler.framework._nodeinfo import NodeInfo, Snapshot
from dra_operator.controllers.scheduler.framework._plugins import PostFilterResult
from dra_operator.controllers.scheduler.framework._runtime import Framework, NodePluginScores
from dra_operator.controllers.scheduler.framework._state import CycleState
from dra_operator.controllers.scheduler.framework._status import Code, Status
from dra_operator.model import Pod

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes end the search: every node below 100; else `percentage` of
    them (unset or 0: 50 % minus 1 % per 125 nodes, at least 5 %), and never fewer than 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if not percentage:
        percentage = max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - num_all_nodes // 125)
    return max(MIN_FEASIBLE_NODES_TO_FIND, num_all_nodes * percentage // 100)


@dataclass(frozen=True, slots=True)
class Scheduled:
    """The node chosen, how many nodes were looked at, and the scores (empty: not scored)."""

    node: str
    evaluated_nodes: int
    feasible_nodes: int
    diagnosis: Diagnosis
    scores: tuple[NodePluginScores, ...] = ()


@dataclass(frozen=True, slots=True)
class FitError:
    """No node fits: the diagnosis, the FailedScheduling `message`, and PostFilter's outcome."""

    num_all_nodes: int
    diagnosis: Diagnosis
    post_filter: PostFilterResult | None = None
    unresolvable: bool = False  # no node at all, or PreFilter/PostFilter said so

    @property
    def message(self) -> str:
        if self.num_all_nodes == 0:
            return NO_NODES
        return fit_error_message(self.num_all_nodes, self.diagnosis)


@dataclass(frozen=True, slots=True)
class ScheduleError:
    """A plugin failed (Error status): the pod is retried, not reported unschedulable."""

    status: Status


def schedule_pod(
    framework: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
) -> Scheduled | FitError | ScheduleError:
    """Where `pod` goes on `snapshot`; runs PostFilter when it fits nowhere."""
    framework.start_cycle(snapshot)
    if not snapshot.node_infos:
        return FitError(0, Diagnosis(NodeToStatus(())), unresolvable=True)
    found = _find_nodes_that_fit(framework, state, pod, snapshot)
    if isinstance(found, ScheduleError):
        return found
    feasible, diagnosis = found
    evaluated = len(feasible) + len(diagnosis.statuses.explicit)
    if not feasible:
        if not framework.post_filter_plugins:
            return FitError(len(snapshot), diagnosis)
        result, status = framework.run_post_filter(state, pod, diagnosis.statuses)
        diagnosis.post_filter_msg = message(status)
        return FitError(
            len(snapshot),
            diagnosis,
            result,
            unresolvable=status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        )
    if len(feasible) == 1:
        return Scheduled(feasible[0].name, evaluated, 1, diagnosis)
    scores = _prioritize(framework, state, pod, feasible)
    if isinstance(scores, ScheduleError):
        return scores
    return Scheduled(select_host(scores), evaluated, len(feasible), diagnosis, tuple(scores))


def select_host(scores: Sequence[NodePluginScores]) -> str:
    """The highest total; among equals the first in `scores` (the order Filter found them)."""
    best = scores[0]
    for candidate in scores[1:]:
        if candidate.total > best.total:
            best = candidate
    return best.name


def _find_nodes_that_fit(
    framework: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
) -> tuple[list[NodeInfo], Diagnosis] | ScheduleError:
    all_nodes = snapshot.node_infos
    diagnosis = Diagnosis(NodeToStatus([n.name for n in all_nodes]))
    result, status, narrowing = framework.run_pre_filter(state, pod, all_nodes)
    diagnosis.unschedulable_plugins |= narrowing
    if not status.ok:
        if not status.rejects:
            return ScheduleError(status)
        diagnosis.statuses.absent = status
        diagnosis.prefilter_msg = message(status)
        diagnosis.add_plugin_status(status)
        return [], diagnosis
    nodes: Sequence[NodeInfo] = all_nodes
    if result is not None and result.node_names is not None:
        wanted = result.node_names
        nodes = [n for n in all_nodes if n.name in wanted]
        diagnosis.statuses.absent = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]",),
        )
    if not nodes:
        return [], diagnosis
    feasible = _pass_filters(framework, state, pod, nodes, diagnosis)
    processed = len(diagnosis.statuses.explicit) + (
        len(feasible) if isinstance(feasible, list) else 0
    )
    framework.next_start_node_index = (framework.next_start_node_index + processed) % len(all_nodes)
    return (feasible, diagnosis) if isinstance(feasible, list) else feasible


def _pass_filters(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    diagnosis: Diagnosis,
) -> list[NodeInfo] | ScheduleError:
    count = len(nodes)
    wanted = num_feasible_nodes_to_find(framework.percentage_of_nodes_to_score, count)
    if not framework.score_plugins:
        wanted = 1
    start = framework.next_start_node_index
    if not framework.filter_plugins:
        return [nodes[(start + i) % count] for i in range(min(wanted, count))]
    feasible: list[NodeInfo] = []
    explicit = diagnosis.statuses.explicit
    for i in range(count):
        node = nodes[(start + i) % count]
        status = framework.run_filter_with_nominated_pods(state, pod, node)
        if status.ok:
            feasible.append(node)
            if len(feasible) >= wanted:
                break
        elif status.code is Code.ERROR:
            return ScheduleError(status)
        else:
            explicit[node.name] = status
            diagnosis.add_plugin_status(status)
    return feasible


def _prioritize(
    framework: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
) -> list[NodePluginScores] | ScheduleError:
    if not framework.score_plugins:
        return [NodePluginScores(n.name, (), 1) for n in nodes]
    status = framework.run_pre_score(state, pod, nodes)
    if not status.ok:
        return ScheduleError(status)
    scores = framework.run_score(state, pod, nodes)
    return ScheduleError(scores) if isinstance(scores, Status) else scores
