"""Hooks as scheduling-framework plugins: a user's Filter, Score or Permit, named in the profile.

A loaded hook (docs/hooks.md) with any of the methods `filter(pod, node)`, `score(pod, node)`
or `permit(pod, node_name)` becomes a plugin under the hook's name, serving exactly the points
it has; its Score weight is the hook's `weight`. `node` is the cycle's `NodeInfo` (`node.node`
is the Node, `node.pods` the pods on it). Every call goes through the hooks' `Guard` (counted,
timed, a failure logged once and contained per the hook's `failure_mode`):

- filter: `None` or `""` lets the node pass, a non-empty string rejects it with that reason;
  a failure lets it pass (`ignore`) or rejects it with "the hook failed (error)" (`refuse`);
- score: a finite number in [0, 100] (rounded); a failure or any other answer scores 0;
- permit: `None` or `""` allows the pod, a non-empty string rejects it with that reason;
  a failure allows it (`ignore`) or rejects it (`refuse`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from dra_operator.controllers.scheduler.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    PluginFactory,
    ScoreExtensions,
    Status,
    unschedulable,
)
from dra_operator.hooks import SCHEDULER_POINTS, Failed, FailureMode, Guard, HookSet, LoadedHook
from dra_operator.model import Pod


def hook_plugins(hooks: HookSet) -> dict[str, PluginFactory]:
    """A plugin factory for every loaded hook with a scheduler point, by the hook's name."""
    return {
        hook.name: _factory(hook, hooks.guard)
        for hook in hooks.hooks
        if any(hook.has(point) for point in SCHEDULER_POINTS)
    }


def hook_weights(hooks: HookSet) -> dict[str, int]:
    """The Score weight of every hook that scores."""
    return {hook.name: hook.weight for hook in hooks.hooks if hook.has("score")}


def _failure(hook: LoadedHook, failed: Failed) -> str:
    return f"the hook failed ({failed.reason.value})"


def _reason(hook: LoadedHook, guard: Guard, point: str, answer: object) -> str | None:
    """A filter/permit answer as a rejection reason (None: go ahead), per the failure mode."""
    if isinstance(answer, Failed):
        return _failure(hook, answer) if hook.failure_mode is FailureMode.REFUSE else None
    if answer is None or answer == "":
        return None
    if isinstance(answer, str):
        return answer
    failed = guard.report(hook, point, f"expected a string or None, got {answer!r}")
    return _failure(hook, failed) if hook.failure_mode is FailureMode.REFUSE else None


def _factory(hook: LoadedHook, guard: Guard) -> PluginFactory:
    methods: dict[str, Callable[..., Any]] = {}

    if hook.has("filter"):

        def filter_(self: Any, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
            reason = _reason(hook, guard, "filter", guard.call(hook, "filter", pod, node))
            return SUCCESS if reason is None else unschedulable(reason)

        methods["filter"] = filter_

    if hook.has("score"):

        def score(self: Any, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
            answer = guard.call(hook, "score", pod, node)
            if isinstance(answer, Failed):
                return MIN_NODE_SCORE, SUCCESS
            if (
                isinstance(answer, bool)
                or not isinstance(answer, int | float)
                or not math.isfinite(answer)
                or not MIN_NODE_SCORE <= answer <= MAX_NODE_SCORE
            ):
                guard.report(hook, "score", f"expected a number in [0, 100], got {answer!r}")
                return MIN_NODE_SCORE, SUCCESS
            return round(answer), SUCCESS

        def score_extensions(self: Any) -> ScoreExtensions | None:
            return None

        methods["score"] = score
        methods["score_extensions"] = score_extensions

    if hook.has("permit"):

        def permit(self: Any, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
            reason = _reason(hook, guard, "permit", guard.call(hook, "permit", pod, node_name))
            return (SUCCESS if reason is None else unschedulable(reason)), 0.0

        methods["permit"] = permit

    plugin_class = type("HookPlugin", (), {"name": hook.name, "__slots__": (), **methods})

    def new(args: Mapping[str, object], handle: Handle) -> Any:
        return plugin_class()

    return new
