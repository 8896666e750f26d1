"""PodTopologySpread's PreScore, Score and NormalizeScore (kube-scheduler v1.37.2).

For ScheduleAnyway constraints a node scores, per constraint, `count * log(domains + 2) +
maxSkew - 1`, where `count` is the matching pods in the node's domain (on the node itself for
the hostname key) and `domains` the number of the constraint's domains among the filtered nodes;
lower is better, so NormalizeScore inverts: `100 * (max + min - score) / max`. Nodes lacking a
constraint's key score 0 when the constraints are the pod's own or listed defaults; with the
system defaults they are scored on the keys they have.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    CycleState,
    NodeInfo,
    NodeScore,
    Snapshot,
    Status,
)
from dra_operator.controllers.scheduler.plugins import _helper
from dra_operator.controllers.scheduler.plugins.podtopologyspread._common import (
    HOSTNAME,
    NAME,
    Constraint,
    count_matching,
    has_all_keys,
)
from dra_operator.model import Pod

PRE_SCORE_KEY = "PreScore" + NAME


@dataclass(frozen=True, slots=True)
class PreScoreState:
    constraints: tuple[Constraint, ...]
    ignored: frozenset[str]  # filtered nodes lacking a key, when every key is required
    counts: tuple[dict[str, int], ...]  # per constraint (not hostname): value -> pods
    weights: tuple[float, ...]  # per constraint: log(domains + 2)


def pre_score(
    state: CycleState,
    pod: Pod,
    filtered: Sequence[NodeInfo],
    snapshot: Snapshot,
    constraints: Sequence[Constraint],
    require_all_topologies: bool,
) -> Status:
    if not len(snapshot):
        return SKIP
    if not constraints:
        return SKIP
    counts: list[dict[str, int]] = [{} for _ in constraints]
    ignored: set[str] = set()
    for info in filtered:
        labels = info.node.labels
        if require_all_topologies and not has_all_keys(labels, constraints):
            ignored.add(info.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != HOSTNAME:
                counts[i].setdefault(labels.get(c.topology_key, ""), 0)
    weights = tuple(
        math.log(
            (len(filtered) - len(ignored) if c.topology_key == HOSTNAME else len(counts[i])) + 2
        )
        for i, c in enumerate(constraints)
    )
    ns = pod.metadata.namespace
    for info in snapshot:
        node = info.node
        if require_all_topologies and not has_all_keys(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.includes(pod, node):
                continue
            value = node.labels.get(c.topology_key, "")
            if value in counts[i]:
                counts[i][value] += count_matching(info.pods, c.selector, ns)
    state.write(
        PRE_SCORE_KEY, PreScoreState(tuple(constraints), frozenset(ignored), tuple(counts), weights)
    )
    return SUCCESS


def read_state(state: CycleState) -> PreScoreState | Status:
    return _helper.read_state(state, PRE_SCORE_KEY, PreScoreState, "PreScore")


def score_node(s: PreScoreState, pod: Pod, info: NodeInfo) -> int:
    if info.name in s.ignored:
        return 0
    labels = info.node.labels
    total = 0.0
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == HOSTNAME:
            count = count_matching(info.pods, c.selector, pod.metadata.namespace)
        else:
            count = s.counts[i][value]
        total += count * s.weights[i] + (c.max_skew - 1)
    return math.floor(total + 0.5)  # Go's math.Round for a non-negative score


def normalize(s: PreScoreState, scores: list[NodeScore]) -> None:
    valid = [n.score for n in scores if n.name not in s.ignored]
    low = min(valid, default=0)
    high = max([0, *valid])
    for n in scores:
        if n.name in s.ignored:
            n.score = 0
        elif high == 0:
            n.score = MAX_NODE_SCORE
        else:
            n.score = MAX_NODE_SCORE * (high + low - n.score) // high
