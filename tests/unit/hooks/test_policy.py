"""HookPolicy: hooks veto and reorder, the allocator still checks every device."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.counts import property_examples
from tests.unit.hooks.scenario import (
    EXAMPLES,
    devices_of,
    gpu,
    gpu_claim,
    node_slice,
    run,
)

from dra_operator.allocator import BinPack, FirstFit, Ledger, Reason
from dra_operator.hooks import DeviceInfo, Guard, HookSet, LoadedHook, load_hooks
from dra_operator.observability import Metrics

SLICE = node_slice(gpu("gpu-0", "8Gi"), gpu("gpu-1", "40Gi"), gpu("gpu-2", "16Gi"))


@pytest.fixture
def examples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))


def _hooks(*specs: str, metrics: Metrics | None = None) -> HookSet:
    return HookSet(load_hooks(specs, use_entry_points=False), Guard(metrics))


def _sample(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


@pytest.mark.usefixtures("examples")
@pytest.mark.parametrize(
    ("specs", "count", "veto", "expected"),
    [
        pytest.param((), 1, "", ["gpu-0"], id="no-hooks-first-fit"),
        pytest.param(("most_memory:MostMemory",), 1, "", ["gpu-1"], id="most-memory"),
        pytest.param(("most_memory:MostMemory",), 2, "", ["gpu-1", "gpu-2"], id="most-memory-2"),
        pytest.param(("veto_by_name:VetoByName",), 1, "gpu-0", ["gpu-1"], id="veto-by-name"),
        pytest.param(
            ("veto_by_name:VetoByName",),
            1,
            "gpu.example.com/node-1/gpu-0",
            ["gpu-1"],
            id="veto-by-id",
        ),
        pytest.param(
            ("veto_by_name:VetoByName", "most_memory:MostMemory"),
            1,
            "gpu-1",
            ["gpu-2"],
            id="veto-then-order",
        ),
        pytest.param(("failing:Broken",), 1, "", ["gpu-0"], id="broken-ignored"),
        pytest.param(
            ("failing:Broken", "most_memory:MostMemory"), 1, "", ["gpu-1"], id="broken-beside"
        ),
    ],
)
def test_hooks_choose_the_devices(
    monkeypatch: pytest.MonkeyPatch,
    specs: tuple[str, ...],
    count: int,
    veto: str,
    expected: list[str],
) -> None:
    monkeypatch.setenv("DRA_OPERATOR_VETO_DEVICES", veto)
    policy = _hooks(*specs).policy()
    assert devices_of(run(gpu_claim(count), [SLICE], policy)) == expected


@pytest.mark.usefixtures("examples")
def test_a_failing_hook_is_logged_counted_and_ignored() -> None:
    metrics = Metrics()
    policy = _hooks("failing:Broken", metrics=metrics).policy()
    assert devices_of(run(gpu_claim(), [SLICE], policy)) == ["gpu-0"]
    for point in ("filter_device", "score_device"):
        labels = {"hook": "failing:Broken", "point": point}
        assert _sample(metrics, "dra_operator_hook_calls_total", **labels) == 3
        assert _sample(metrics, "dra_operator_hook_failures_total", reason="error", **labels) == 3


@pytest.mark.usefixtures("examples")
def test_a_failing_refusing_hook_vetoes_and_the_explanation_says_so() -> None:
    got = run(gpu_claim(), [SLICE], _hooks("failing:Strict").policy())
    assert got.explanation is not None
    (request,) = got.explanation.requests
    assert request.usable == 0
    assert [(g.reason, g.count) for g in request.rejected] == [(Reason.POLICY, 3)]
    assert "3 vetoed by the allocation policy" in str(got.explanation)


@pytest.mark.usefixtures("examples")
def test_a_veto_makes_an_all_request_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRA_OPERATOR_VETO_DEVICES", "gpu-2")
    policy = _hooks("veto_by_name:VetoByName").policy()
    assert run(gpu_claim(all_devices=True), [SLICE], policy).explanation is not None
    assert len(devices_of(run(gpu_claim(all_devices=True), [SLICE], FirstFit()))) == 3


class _Answer:
    """A hook returning fixed answers (or raising them when they are exceptions)."""

    def __init__(self, **answers: Any) -> None:
        self.answers = answers

    def _give(self, point: str) -> Any:
        value = self.answers[point]
        if isinstance(value, Exception):
            raise value
        return value


class _DeviceScorer(_Answer):
    def score_device(self, info: DeviceInfo) -> Any:
        return self._give("score_device")


class _NodeScorer(_Answer):
    def score_node(self, view: object) -> Any:
        return self._give("score_node")


@pytest.mark.parametrize(
    ("answer", "mode", "expected"),
    [
        pytest.param(2.5, "ignore", 10.0 + 2 * 2.5, id="weighted"),
        pytest.param(RuntimeError("x"), "ignore", 10.0, id="raised-ignored"),
        pytest.param(RuntimeError("x"), "refuse", -math.inf, id="raised-refused"),
        pytest.param("high", "ignore", 10.0, id="not-a-number-ignored"),
        pytest.param(math.nan, "refuse", -math.inf, id="nan-refused"),
    ],
)
def test_score_node_is_weighted_and_contained(answer: Any, mode: str, expected: float) -> None:
    from dra_operator.hooks import FailureMode

    hook = LoadedHook(
        name="n", target=_NodeScorer(score_node=answer), failure_mode=FailureMode(mode)
    )

    class _Base(FirstFit):
        def score(self, results: Any, ledger: Ledger) -> float:
            return 5.0

    policy = HookSet([hook], Guard()).policy(_Base(), strategy_weight=2, hook_weight=2)
    assert policy.score([], Ledger()) == expected


def test_a_late_answer_counts_as_a_timeout() -> None:
    ticks = iter([0.0, 5.0])
    metrics = Metrics()
    hook = LoadedHook(name="slow", target=_DeviceScorer(score_device=1.0), timeout=1.0)
    guard = Guard(metrics, clock=lambda: next(ticks))
    policy = HookSet([hook], guard).policy()  # one candidate: one call, two clock reads
    got = run(gpu_claim(), [node_slice(gpu("only"))], policy)
    assert devices_of(got) == ["only"]  # ignored: the device keeps score 0
    labels = {"hook": "slow", "point": "score_device", "reason": "timeout"}
    assert _sample(metrics, "dra_operator_hook_failures_total", **labels) == 1


def test_the_policy_keeps_the_base_order_on_ties_and_names_itself() -> None:
    hook = LoadedHook(name="flat", target=_DeviceScorer(score_device=1))
    policy = HookSet([hook], Guard()).policy(BinPack(), node="node-1")
    assert policy.name == "BinPack+flat"
    assert devices_of(run(gpu_claim(), [SLICE], policy)) == ["gpu-0"]
    assert policy.for_node("node-2").node == "node-2"
    assert HookSet([], Guard()).policy().name == "FirstFit"


class _VetoSet:
    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def filter_device(self, info: DeviceInfo) -> bool:
        return info.id.device not in self.names


@settings(max_examples=property_examples(60), deadline=None)
@given(
    memories=st.lists(st.sampled_from(["1Gi", "8Gi", "16Gi"]), min_size=1, max_size=6),
    vetoed=st.sets(st.integers(0, 5)),
    count=st.integers(1, 4),
)
def test_a_veto_is_the_same_as_the_device_not_being_there(
    memories: list[str], vetoed: set[int], count: int
) -> None:
    """Hooks never add what the allocator would refuse: vetoing equals unpublishing."""
    devices = [gpu(f"gpu-{i}", memory) for i, memory in enumerate(memories)]
    names = frozenset(f"gpu-{i}" for i in vetoed)
    hooks = [
        LoadedHook(name="veto", target=_VetoSet(names)),
        LoadedHook(name="mem", target=_load_most_memory()),
    ]
    got = run(gpu_claim(count), [node_slice(*devices)], HookSet(hooks, Guard()).policy())
    kept = [d for d in devices if d.name not in names]
    without = run(gpu_claim(count), [node_slice(*kept)], HookSet(hooks[1:], Guard()).policy())
    assert got.is_allocated == without.is_allocated
    if got.results is not None:
        assert devices_of(got) == devices_of(without)
        assert not set(devices_of(got)) & names


def _load_most_memory() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("most_memory", EXAMPLES / "most_memory.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MostMemory()
