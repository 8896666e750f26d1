"""The async hook points: refusals, observation, eviction delays, and contained failures."""

from __future__ import annotations

from typing import Any

import pytest
from tests.unit.hooks.scenario import EXAMPLES, gpu_claim

from dra_operator.hooks import (
    EVICTION_RETRY,
    FailureMode,
    Guard,
    HookSet,
    LoadedHook,
    Refusal,
    load_hooks,
)
from dra_operator.model import (
    AllocationResult,
    DeviceAllocationResult,
    FrozenMap,
    ObjectMeta,
    Pod,
)
from dra_operator.observability import Metrics

POD = Pod(metadata=ObjectMeta(name="p", namespace="default"))


@pytest.fixture
def examples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))


def _sample(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


@pytest.mark.usefixtures("examples")
async def test_before_allocate_refuses_with_a_reason_and_after_allocate_observes() -> None:
    hooks = HookSet(load_hooks(["quota:RefuseUnlabelled"], use_entry_points=False), Guard())
    refusal = await hooks.points.before_allocate(gpu_claim())
    assert refusal == Refusal(
        hook="quota:RefuseUnlabelled",
        reason="the claim lacks the label dra.example.com/allowed=true",
    )
    assert refusal.message == (
        "Allocation refused by hook quota:RefuseUnlabelled: "
        "the claim lacks the label dra.example.com/allowed=true."
    )
    result = AllocationResult(devices=DeviceAllocationResult())
    await hooks.points.after_allocate(gpu_claim(), result)
    assert hooks.hooks[0].target.allocated == {"default": 1}  # type: ignore[attr-defined]


@pytest.mark.usefixtures("examples")
@pytest.mark.parametrize(
    ("spec", "refused", "reason"),
    [
        pytest.param("failing:Broken", False, "error", id="raises-ignored"),
        pytest.param("failing:Strict", True, "error", id="raises-refused"),
        pytest.param("failing:Slow", True, "timeout", id="too-slow-refused"),
    ],
)
async def test_failing_before_allocate_is_contained(spec: str, refused: bool, reason: str) -> None:
    metrics = Metrics()
    hooks = HookSet(load_hooks([spec], use_entry_points=False), Guard(metrics))
    got = await hooks.points.before_allocate(gpu_claim())
    assert (got is not None) == refused
    if got is not None:
        assert got.reason == f"the hook failed ({reason})"
    labels = {"hook": spec, "point": "before_allocate"}
    assert _sample(metrics, "dra_operator_hook_calls_total", **labels) == 1
    assert _sample(metrics, "dra_operator_hook_failures_total", reason=reason, **labels) == 1


class _Evict:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.seen: list[tuple[str, ...]] = []

    def before_evict(self, pod: Pod, reasons: tuple[str, ...]) -> Any:  # sync: runs in a thread
        self.seen.append(reasons)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("answers", "mode", "expected"),
    [
        pytest.param([None], FailureMode.IGNORE, 0.0, id="go-ahead"),
        pytest.param([5, 20.5, True], FailureMode.IGNORE, 20.5, id="longest-delay"),
        pytest.param([-3, "soon"], FailureMode.IGNORE, 0.0, id="nonsense-ignored"),
        pytest.param([RuntimeError("x")], FailureMode.IGNORE, 0.0, id="raised-ignored"),
        pytest.param([RuntimeError("x")], FailureMode.REFUSE, EVICTION_RETRY, id="raised-delays"),
    ],
)
async def test_before_evict_delays(answers: list[Any], mode: FailureMode, expected: float) -> None:
    targets = [_Evict(answer) for answer in answers]
    hooks = [
        LoadedHook(name=f"h{i}", target=target, failure_mode=mode)
        for i, target in enumerate(targets)
    ]
    delay = await HookSet(hooks, Guard()).points.before_evict(POD, ["taint gpu/broken"])
    assert delay == expected
    assert all(target.seen == [("taint gpu/broken",)] for target in targets)


async def test_a_selection_of_hooks_and_unknown_names() -> None:
    from dra_operator.errors import HookLoadError

    hooks = HookSet(
        [LoadedHook(name="a", target=_Evict(1)), LoadedHook(name="b", target=_Evict(2))], Guard()
    )
    assert hooks.names == {"a", "b"}
    assert await hooks.select(["b"]).points.before_evict(POD, []) == 2
    assert hooks.select(None) is hooks
    with pytest.raises(HookLoadError, match="hook c: not loaded by this operator"):
        hooks.select(["c"])


@pytest.mark.usefixtures("examples")
@pytest.mark.parametrize(
    ("labels", "delay"),
    [
        pytest.param({"dra.example.com/hold": "true"}, 60.0, id="held"),
        pytest.param({}, 0.0, id="unlabelled"),
        pytest.param({"dra.example.com/hold": "no"}, 0.0, id="other-value"),
    ],
)
async def test_the_hold_evictions_example(labels: dict[str, str], delay: float) -> None:
    hooks = HookSet(load_hooks(["hold_evictions:HoldLabelled"], use_entry_points=False), Guard())
    pod = Pod(metadata=ObjectMeta(name="p", namespace="default", labels=FrozenMap(labels)))
    assert await hooks.points.before_evict(pod, ["DeviceTaintRule broken"]) == delay
    held = [("default/p", ("DeviceTaintRule broken",))] if delay else []
    assert hooks.hooks[0].target.held == held  # type: ignore[attr-defined]
