"""The per-node loops of Filter and Score, with the results `_reuse` keeps.

kube-scheduler v1.37.2, pkg/scheduler/framework/runtime/framework.go (`RunFilterPlugins`,
`RunScorePlugins`): Filter stops at a node's first rejecting plugin; Score collects each
plugin's raw score per node, normalizes per plugin, and checks the range. Here the leading
signed Filter plugins' joint verdict and the signed Score plugins' raw scores come from the
plan's memo where the node is unchanged, and scores are columns of ints per plugin: NodeScore
objects exist only for a plugin that normalizes.
"""

from __future__ import annotations

from collections.abc import Sequence

from dra_operator.controllers.scheduler.framework._diagnosis import message
from dra_operator.controllers.scheduler.framework._nodeinfo import NodeInfo
from dra_operator.controllers.scheduler.framework._plugins import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    FilterPlugin,
    NodeScore,
    ScorePlugin,
)
from dra_operator.controllers.scheduler.framework._reuse import FilterPlan, ScorePlan
from dra_operator.controllers.scheduler.framework._state import CycleState
from dra_operator.controllers.scheduler.framework._status import SUCCESS, Code, Status
from dra_operator.model import Pod


def failed(what: str, plugin: str, status: Status) -> Status:
    """An unexpected status from `plugin`, as upstream's `AsStatus(fmt.Errorf(...))` words it."""
    return Status(Code.ERROR, (f'{what} "{plugin}": {message(status)}',), plugin)


def _filter(plugins: Sequence[FilterPlugin], state: CycleState, pod: Pod, node: NodeInfo) -> Status:
    """Success, or the status of the first of `plugins` that rejects `node`."""
    for plugin in plugins:
        status = plugin.filter(state, pod, node)
        if status.code is not Code.SUCCESS:
            if status.rejects:
                return status.with_plugin(plugin.name)
            return failed("running filter plugin", plugin.name, status)
    return SUCCESS


def _score_failed(plugin: str, status: Status) -> Status:
    wrapped = failed("plugin", plugin, status)
    return Status(Code.ERROR, (f"running Score plugins: {message(wrapped)}",))


def _scores(
    plugins: Sequence[ScorePlugin], state: CycleState, pod: Pod, node: NodeInfo
) -> tuple[int, ...] | Status:
    """Each of `plugins`' raw score of `node`, or the first error."""
    values: list[int] = []
    for plugin in plugins:
        score, status = plugin.score(state, pod, node)
        if status.code is not Code.SUCCESS:
            return _score_failed(plugin.name, status)
        values.append(score)
    return tuple(values)


def filter_node(plan: FilterPlan, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
    """Success, or the status of the first of the plan's plugins that rejects `node`."""
    memo = plan.memo
    generation = node.generation
    if memo is not None and generation:
        kept = memo.get(node.name)
        if kept is not None and kept[0] == generation:
            status = kept[1]
        else:
            status = _filter(plan.reused, state, pod, node)
            if status.code is not Code.ERROR:
                memo[node.name] = (generation, status)
        if status.code is not Code.SUCCESS:
            return status
    elif plan.reused:
        status = _filter(plan.reused, state, pod, node)
        if status.code is not Code.SUCCESS:
            return status
    return _filter(plan.rest, state, pod, node)


def score_columns(
    plan: ScorePlan, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
) -> dict[str, list[int]] | Status:
    """Each of the plan's plugins: its normalized score per node, in `nodes`' order; or the
    error."""
    raw: dict[str, list[int]] = {}
    memo = plan.memo
    if memo is not None:
        rows: list[tuple[int, ...]] = []
        for node in nodes:
            name, generation = node.name, node.generation
            kept = memo.get(name) if generation else None
            if kept is not None and kept[0] == generation:
                rows.append(kept[1])
                continue
            found = _scores(plan.signed, state, pod, node)
            if isinstance(found, Status):
                return found
            if generation:
                memo[name] = (generation, found)
            rows.append(found)
        by_signed = zip(*rows, strict=True) if rows else ((),) * len(plan.signed)
        for plugin, values in zip(plan.signed, by_signed, strict=True):
            raw[plugin.name] = list(values)
    for plugin in plan.others:
        scores: list[int] = []
        for node in nodes:
            score, status = plugin.score(state, pod, node)
            if status.code is not Code.SUCCESS:
                return _score_failed(plugin.name, status)
            scores.append(score)
        raw[plugin.name] = scores
    columns: dict[str, list[int]] = {}
    for plugin in plan.plugins:
        column = raw[plugin.name]
        extensions = plugin.score_extensions()
        if extensions is not None:
            entries = [NodeScore(n.name, v) for n, v in zip(nodes, column, strict=True)]
            status = extensions.normalize_score(state, pod, entries)
            if not status.ok:
                wrapped = failed("plugin", plugin.name, status)
                return Status(
                    Code.ERROR, (f"running Normalize on Score plugins: {message(wrapped)}",)
                )
            column = [entry.score for entry in entries]
        columns[plugin.name] = column
    for name, column in columns.items():
        if column and (min(column) < MIN_NODE_SCORE or max(column) > MAX_NODE_SCORE):
            bad = next(s for s in column if not MIN_NODE_SCORE <= s <= MAX_NODE_SCORE)
            return Status(
                Code.ERROR,
                (
                    f'applying score defaultWeights on Score plugins: plugin "{name}" '
                    f"returns an invalid score {bad}, it should in the range of "
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                ),
            )
    return columns
