"""PodTopologySpread's PreFilter, AddPod/RemovePod and Filter (kube-scheduler v1.37.2).

PreFilter counts, per DoNotSchedule constraint and topology value, the matching pods on the nodes
that carry every constraint's key and pass the constraint's node inclusion policies, and keeps the
two smallest counts (upstream's "critical paths"). Filter admits a node when placing the pod
there keeps `count + self - min <= maxSkew` for every constraint, where `min` is 0 while fewer
than `minDomains` domains exist.

A node's part of those counts depends only on the node, its pods and what of the incoming pod
the constraints read (its namespace, the constraints, and for the inclusion policies its node
selector, required node affinity and tolerations): it is kept per such shape and node
(`CountMemo`) while the node's NodeInfo generation stands, so a cycle reads each unchanged node's
part instead of matching its pods again.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    NodeInfo,
    PodInfo,
    ShapeMemo,
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
    itself: tuple[int, ...]  # per constraint: 1 when it selects the incoming pod, read per node

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.constraints,
            [p.clone() for p in self.paths],
            [dict(c) for c in self.counts],
            self.itself,
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


Share = tuple[tuple[str, int] | None, ...] | None
"""A node's part of the counts: per constraint its topology value and matching pods, None where
the node is not included; None for a node missing a constraint's key."""

CountMemo = ShapeMemo[Share]


def _shape(pod: Pod, constraints: Sequence[Constraint]) -> Hashable:
    spec = pod.spec
    return (
        pod.metadata.namespace,
        tuple(constraints),
        spec.node_selector,
        spec.required_node_affinity,
        spec.tolerations,
    )


def _share(pod: Pod, info: NodeInfo, constraints: Sequence[Constraint]) -> Share:
    node = info.node
    labels = node.labels
    if not has_all_keys(labels, constraints):
        return None
    ns = pod.metadata.namespace
    return tuple(
        (labels[c.topology_key], count_matching(info.pods, c.selector, ns))
        if c.includes(pod, node)
        else None
        for c in constraints
    )


def pre_filter(
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    constraints: Sequence[Constraint],
    memo: CountMemo | None = None,
) -> Status:
    if not constraints:
        return SKIP
    counts: list[dict[str, int]] = [{} for _ in constraints]
    kept = memo.for_shape(_shape(pod, constraints)) if memo is not None else None
    for info in nodes:
        generation = info.generation
        found = kept.get(info.name) if kept is not None and generation else None
        if found is not None and found[0] == generation:
            share = found[1]
        else:
            share = _share(pod, info, constraints)
            if kept is not None and generation:
                kept[info.name] = (generation, share)
        if share is None:
            continue
        for by_value, part in zip(counts, share, strict=True):
            if part is not None:
                value, num = part
                by_value[value] = by_value.get(value, 0) + num
    paths = []
    for by_value in counts:
        p = CriticalPaths()
        for value, num in by_value.items():
            p.update(value, num)
        paths.append(p)
    labels = pod.metadata.labels
    itself = tuple(1 if c.selector.matches(labels) else 0 for c in constraints)
    state.write(PRE_FILTER_KEY, PreFilterState(tuple(constraints), paths, counts, itself))
    return SUCCESS


def read_state(state: CycleState) -> PreFilterState | Status:
    return _helper.read_state(state, PRE_FILTER_KEY, PreFilterState, "PreFilter")


def update(state: CycleState, pod: Pod, other: PodInfo, node: NodeInfo, delta: int) -> Status:
    s = read_state(state)
    if isinstance(s, Status):
        return s
    s.update(other.pod, pod, node.node, delta)
    return SUCCESS


def filter_node(s: PreFilterState, node: NodeInfo) -> Status:
    labels = node.node.labels
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return unresolvable(ERR_NODE_LABEL_NOT_MATCH)
        if s.counts[i].get(value, 0) + s.itself[i] - s.min_match(i) > c.max_skew:
            return unschedulable(ERR_CONSTRAINTS_NOT_MATCH)
    return SUCCESS
