"""Which lower-priority pods must go for the preemptor to fit on one node.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/defaultpreemption
(`SelectVictimsOnNode`) and pkg/scheduler/framework/preemption/util.go (`MoreImportantVictim`,
`FilterVictimsWithPDBViolation`, `PodTerminatingByPreemption`). Every pod of lower priority is
taken off a clone of the node (each plugin's PreFilter state told through RemovePod); if the
preemptor then fits, victims are given back one at a time, highest priority first (then earliest
start; among pods not started, the one earlier on the node) and the ones whose eviction would
break a PodDisruptionBudget before the others, and each one the preemptor still fits beside is
spared.

Each victim here is a single pod: PodGroup victims (gang preemption) are not modelled.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    CycleState,
    FrameworkHandle,
    NodeInfo,
    PodInfo,
    Status,
    unresolvable,
)
from dra_operator.model import Pod, PodDisruptionBudget, SelectorError, compile_selector

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
NO_VICTIMS = "No preemption victims found for incoming pod"

_NOW = datetime.datetime.max.replace(tzinfo=datetime.UTC)
"""A pod that has not started yet counts as starting now (upstream's `GetPodStartTime`): later
than every start time a pod reports."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node preemption would free: its victims, most important first, and how many of them
    break a PodDisruptionBudget."""

    node: str
    victims: tuple[Pod, ...]
    num_pdb_violations: int


def priority(pod: Pod) -> int:
    """`corev1helpers.PodPriority`: a pod without a priority has 0."""
    return pod.spec.priority or 0


def start_time(pod: Pod) -> datetime.datetime:
    return pod.status.start_time or _NOW


def more_important(a: Pod, b: Pod) -> bool:
    """Higher priority first, then the pod that started earlier."""
    if priority(a) != priority(b):
        return priority(a) > priority(b)
    return start_time(a) < start_time(b)


def importance_key(pod: Pod, position: int = 0) -> tuple[int, datetime.datetime, int]:
    """Sort key equivalent to `more_important` (ascending = most important first), where
    `position` is the pod's place on its node. Upstream's victims that have not started count
    as starting when each is built (`GetPodStartTime` reads `time.Now()`), one after another
    in the node's pod order: among them, the one earlier on the node is the more important.
    Started pods of equal priority and start time stay equal (a stable sort keeps their order)."""
    return -priority(pod), start_time(pod), position if pod.status.start_time is None else 0


def terminating_by_preemption(pod: Pod) -> bool:
    """Being deleted, and its first DisruptionTarget condition says a scheduler preempted it."""
    if pod.metadata.deletion_timestamp is None:
        return False
    for condition in pod.status.conditions:
        if condition.type == DISRUPTION_TARGET:
            return condition.status == "True" and condition.reason == PREEMPTION_BY_SCHEDULER
    return False


def split_by_pdb_violation(
    victims: Sequence[PodInfo], budgets: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """The victims whose eviction would take some budget below zero (in the given order, each
    charged to every budget selecting it), and the others."""
    allowed = [b.disruptions_allowed for b in budgets]
    violating: list[PodInfo] = []
    others: list[PodInfo] = []
    for info in victims:
        pod = info.pod
        breaks = False
        if pod.metadata.labels:
            for at, budget in enumerate(budgets):
                if budget.metadata.namespace != pod.metadata.namespace:
                    continue
                try:
                    selector = compile_selector(budget.selector)
                except SelectorError:
                    continue
                if selector.nothing or selector.everything:
                    continue  # a nil or empty selector covers no pod here
                if not selector.matches(pod.metadata.labels):
                    continue
                if pod.metadata.name in budget.disrupted_pods:
                    continue  # already charged by the eviction API
                allowed[at] -= 1
                if allowed[at] < 0:
                    breaks = True
                    break
        (violating if breaks else others).append(info)
    return violating, others


def select_victims_on_node(
    handle: FrameworkHandle,
    state: CycleState,
    preemptor: Pod,
    node: NodeInfo,
    budgets: Sequence[PodDisruptionBudget],
) -> tuple[list[Pod], int, Status]:
    """The victims on `node` (a clone, changed in place, as is `state`), the number of them
    that break a budget, and Success; or the status saying why preempting here does not help."""

    def remove(info: PodInfo) -> Status:
        node.remove_pod(info.pod.metadata.uid)
        return handle.run_pre_filter_extension_remove_pod(state, preemptor, info, node)

    def add(info: PodInfo) -> Status:
        node.add_pod(info)
        return handle.run_pre_filter_extension_add_pod(state, preemptor, info, node)

    own = priority(preemptor)
    potential = [info for info in node.pods if priority(info.pod) < own]
    if not potential:
        return [], 0, unresolvable(NO_VICTIMS)
    for info in potential:
        status = remove(info)
        if not status.ok:
            return [], 0, status
    status = handle.run_filter_with_nominated_pods(state, preemptor, node)
    if not status.ok:
        return [], 0, status
    position = {info.pod.metadata.uid: at for at, info in enumerate(potential)}

    def key(pod: Pod) -> tuple[int, datetime.datetime, int]:
        return importance_key(pod, position[pod.metadata.uid])

    potential.sort(key=lambda info: key(info.pod))
    violating, others = split_by_pdb_violation(potential, budgets)
    victims: list[Pod] = []
    num_violating = 0
    for group, counts in ((violating, True), (others, False)):
        for info in group:
            status = add(info)
            if not status.ok:
                return [], 0, status
            if handle.run_filter_with_nominated_pods(state, preemptor, node).ok:
                continue
            status = remove(info)
            if not status.ok:
                return [], 0, status
            victims.append(info.pod)
            num_violating += counts
    if violating and others:
        victims.sort(key=key)
    return victims, num_violating, SUCCESS
