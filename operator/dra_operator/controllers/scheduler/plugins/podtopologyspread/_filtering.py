"""PodTopologySpread's PreFilter, AddPod/RemovePod and Filter (kube-scheduler v1.37.2).

PreFilter counts, per DoNotSchedule constraint and topology value, the matching pods on the nodes
that carry every constraint's key and pass the constraint's node inclusion policies, and keeps the
two smallest counts (upstream's "critical paths"). Filter admits a node when placing the pod
there keeps `count + self - min <= maxSkew` for every constraint, where `min` is 0 while fewer
than `minDomains` domains exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    NodeInfo,
    PodInfo,
    Status,
    unresolvable,
    unschedulable,
)
from dra_operator.controllers.scheduler.plugins import _helper
from dra_operator.controllers.scheduler.plugins.podtopologyspread._common import (
    NAME,
    Constraint,
    count_matching,
    has_all_keys,
)
from dra_operator.model import Node, Pod

PRE_FILTER_KEY = "PreFilter" + NAME
ERR_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_NODE_LABEL_NOT_MATCH = ERR_CONSTRAINTS_NOT_MATCH + " (missing required label)"

_MAX_INT32 = 2**31 - 1


@dataclass(slots=True)
class CriticalPaths:
    """The two topology values with the fewest matching pods, smallest first.

    Updated as upstream's `criticalPaths.update` does, including when a count changes under
    AddPod/RemovePod: a value already held is updated in place, another may only enter.
    """

    values: list[str] = field(default_factory=lambda: ["", ""])
    nums: list[int] = field(default_factory=lambda: [_MAX_INT32, _MAX_INT32])

    def update(self, value: str, num: int) -> None:
        v, n = self.values, self.nums
        i = 0 if value == v[0] else 1 if value == v[1] else -1
        if i >= 0:
            n[i] = num
            if n[0] > n[1]:
                v[0], v[1] = v[1], v[0]
                n[0], n[1] = n[1], n[0]
        elif num < n[0]:
            v[1], n[1] = v[0], n[0]
            v[0], n[0] = value, num
        elif num < n[1]:
            v[1], n[1] = value, num

    def clone(self) -> CriticalPaths:
        return CriticalPaths(list(self.values), list(self.nums))


@dataclass(slots=True)
class PreFilterState:
    constraints: tuple[Constraint, ...]
    paths: list[CriticalPaths]
    counts: list[dict[str, int]]  # per constraint: topology value -> matching pods

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.constraints, [p.clone() for p in self.paths], [dict(c) for c in self.counts]
        )

    def min_match(self, i: int) -> int:
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.paths[i].nums[0]

    def update(self, updated: Pod, preemptor: Pod, node: Node, delta: int) -> None:
        """AddPod (+1) / RemovePod (-1) of `updated` on `node`."""
        if updated.metadata.namespace != preemptor.metadata.namespace:
            return
        labels = node.labels
        if not has_all_keys(labels, self.constraints):
            return
        for i, c in enumerate(self.constraints):
            if not c.selector.matches(updated.metadata.labels) or not c.includes(preemptor, node):
                continue
            value = labels[c.topology_key]
            self.counts[i][value] = self.counts[i].get(value, 0) + delta
            self.paths[i].update(value, self.counts[i][value])


def pre_filter(
    state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], constraints: Sequence[Constraint]
) -> Status:
    if not constraints:
        return SKIP
    counts: list[dict[str, int]] = [{} for _ in constraints]
    ns = pod.metadata.namespace
    for info in nodes:
        node = info.node
        if not has_all_keys(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.includes(pod, node):
                continue
            value = node.labels[c.topology_key]
            counts[i][value] = counts[i].get(value, 0) + count_matching(info.pods, c.selector, ns)
    paths = []
    for by_value in counts:
        p = CriticalPaths()
        for value, num in by_value.items():
            p.update(value, num)
        paths.append(p)
    state.write(PRE_FILTER_KEY, PreFilterState(tuple(constraints), paths, counts))
    return SUCCESS


def read_state(state: CycleState) -> PreFilterState | Status:
    return _helper.read_state(state, PRE_FILTER_KEY, PreFilterState, "PreFilter")


def update(state: CycleState, pod: Pod, other: PodInfo, node: NodeInfo, delta: int) -> Status:
    s = read_state(state)
    if isinstance(s, Status):
        return s
    s.update(other.pod, pod, node.node, delta)
    return SUCCESS


def filter_node(s: PreFilterState, pod: Pod, node: NodeInfo) -> Status:
    labels = node.node.labels
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return unresolvable(ERR_NODE_LABEL_NOT_MATCH)
        itself = 1 if c.selector.matches(pod.metadata.labels) else 0
        if s.counts[i].get(value, 0) + itself - s.min_match(i) > c.max_skew:
            return unschedulable(ERR_CONSTRAINTS_NOT_MATCH)
    return SUCCESS
