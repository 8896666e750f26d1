"""Hooks as framework plugins: Filter, Score (with weight) and Permit, guarded like every hook."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import (
    Placement,
    Unschedulable,
    decide_pod,
    default_framework,
)
from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    build_snapshot,
    evaluate,
)
from dra_operator.hooks import Guard, HookSet, load_hooks
from dra_operator.model import Pod, parse_node, parse_pod
from dra_operator.observability import Metrics

from .builders import NS, new_state, node, pod, settings
from .test_scheduler import WatchedWorld, _failed, _node_of, eventually, running

EXAMPLES = Path(__file__).parents[4] / "examples" / "hooks"
PREFER = "prefer_label:PreferLabel"


@pytest.fixture
def examples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))


def _hooks(*classes: type, metrics: Metrics | None = None) -> HookSet:
    """Hooks from classes of this module, as `--hook module:Class` would load them."""
    specs = [f"{__name__}:{cls.__name__}" for cls in classes]
    return HookSet(load_hooks(specs, use_entry_points=False), Guard(metrics))


def _nodes() -> list[Any]:
    return [
        parse_node(node("a")),
        parse_node(node("b", labels={"example.com/fast": "true"})),
        parse_node(node("c")),
    ]


def _pod() -> Pod:
    return parse_pod(pod("p"))


def _sample(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


@pytest.mark.usefixtures("examples")
def test_the_label_score_example_joins_the_profile_with_its_weight() -> None:
    hooks = HookSet(load_hooks([PREFER], use_entry_points=False), Guard())
    framework = default_framework(hooks=hooks)
    assert [p.name for p in framework.score_plugins][-1] == PREFER  # after the defaults
    assert framework.weights[PREFER] == 2
    found = evaluate(framework, _pod(), build_snapshot(_nodes(), []))
    assert found.scores[PREFER] == {"a": 0, "b": 100, "c": 0}
    # Alike nodes: every default plugin scores them alike, the hook's weighted 100 decides.
    assert found.total["b"] - found.total["a"] == 200
    assert found.total["a"] == found.total["c"]


@pytest.mark.usefixtures("examples")
def test_the_live_decision_prefers_the_labelled_node() -> None:
    state = new_state()
    for raw in (node("a"), node("b", labels={"example.com/fast": "true"}), node("c")):
        change = state.nodes.apply("ADDED", raw)
        assert change is not None and change.new is not None
        state.node_infos.node_changed(change.new.obj)
    state.pods.apply("ADDED", pod("p"))
    entry = state.pods.get(ObjectKey("default", "p"))
    assert entry is not None
    assert isinstance(found := decide_pod(entry.obj, state, settings()), Placement)
    assert found.node == "a"  # FirstFit, nothing scores: the first node by name
    state.framework = default_framework(
        hooks=HookSet(load_hooks([PREFER], use_entry_points=False), Guard())
    )
    assert isinstance(found := decide_pod(entry.obj, state, settings()), Placement)
    assert found.node == "b"


class OnlyA:
    def filter(self, pod: Pod, node: Any) -> str | None:
        return None if node.name == "a" else "node(s) are not a"


class Broken:
    failure_mode = "refuse"

    def filter(self, pod: Pod, node: Any) -> str | None:
        raise RuntimeError("boom")

    def score(self, pod: Pod, node: Any) -> float:
        raise RuntimeError("boom")


class Lenient:
    def filter(self, pod: Pod, node: Any) -> str | None:
        raise RuntimeError("boom")

    def score(self, pod: Pod, node: Any) -> object:
        return "high"


class Gate:
    weight = 3

    def permit(self, pod: Pod, node_name: str) -> str | None:
        return "quota exceeded" if node_name == "b" else None


def test_a_filter_hook_rejects_nodes_with_its_reason_and_the_fit_error_counts_it() -> None:
    framework = default_framework(hooks=_hooks(OnlyA))
    found = evaluate(framework, _pod(), build_snapshot(_nodes(), []))
    assert found.feasible == ["a"]
    assert found.filter["b"].reasons == ("node(s) are not a",)
    assert found.filter["b"].plugin == f"{__name__}:OnlyA"

    state = new_state()
    for raw in (node("b"), node("c")):
        change = state.nodes.apply("ADDED", raw)
        assert change is not None and change.new is not None
        state.node_infos.node_changed(change.new.obj)
    state.framework = framework
    failed = decide_pod(_pod(), state, settings())
    assert isinstance(failed, Unschedulable)
    assert failed.message == "0/2 nodes are available: 2 node(s) are not a."


@pytest.mark.parametrize(
    ("hook", "passes", "reasons"),
    [
        pytest.param(Broken, False, ("the hook failed (error)",), id="refuse"),
        pytest.param(Lenient, True, (), id="ignore"),
    ],
)
def test_failing_hook_plugins_are_contained_per_failure_mode(
    hook: type, passes: bool, reasons: tuple[str, ...]
) -> None:
    metrics = Metrics()
    name = hook.__name__
    framework = default_framework(hooks=_hooks(hook, metrics=metrics))
    found = evaluate(framework, _pod(), build_snapshot(_nodes(), []))
    assert found.filter["a"].ok is passes
    assert found.filter["a"].reasons == reasons
    labels = {"hook": f"{__name__}:{name}", "point": "filter"}
    assert _sample(metrics, "dra_operator_hook_calls_total", **labels) == 3
    assert _sample(metrics, "dra_operator_hook_failures_total", reason="error", **labels) == 3
    if passes:  # a score that is not a number counts as a failure and scores 0
        assert found.scores[f"{__name__}:{name}"] == {"a": 0, "b": 0, "c": 0}
        score_labels = {"hook": f"{__name__}:{name}", "point": "score"}
        assert (
            _sample(metrics, "dra_operator_hook_failures_total", reason="error", **score_labels)
            == 3
        )


def test_a_permit_hook_rejects_with_its_reason() -> None:
    framework = default_framework(hooks=_hooks(Gate))
    assert [p.name for p in framework.permit_plugins] == [f"{__name__}:Gate"]
    status, _ = framework.run_permit(CycleState(), _pod(), "b")
    assert status.code is Code.UNSCHEDULABLE and status.reasons == ("quota exceeded",)
    assert framework.run_permit(CycleState(), _pod(), "a")[0].ok
    # A weight alone does not make it a Score plugin.
    assert f"{__name__}:Gate" not in [p.name for p in framework.score_plugins]


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.looptime
async def test_the_scheduler_runs_permit_after_the_decision_and_reserves_nothing_refused() -> None:
    """Permit comes after Reserve, in the scheduler: the decision names node b, the hook
    refuses it, the pod gets the hook's reason as FailedScheduling and is not bound."""
    world = WatchedWorld()
    world.put("nodes", node("b"))
    world.put("pods", pod("p"))
    state = replace(new_state(), framework=default_framework(hooks=_hooks(Gate)))
    async with running(world, state=state) as scheduler:
        await eventually(lambda: bool(_failed(world, "p")))
        await scheduler.wait_for_writes()
    assert _failed(world, "p") == ["quota exceeded"]
    assert _node_of(world, "p") is None
    uid = world.get("pods", NS, "p")["metadata"]["uid"]
    assert state.node_infos.node_of(uid) is None  # nothing reserved
