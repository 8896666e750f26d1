"""What the scheduler reports: attempt labels from explanations, and the series after a run.

Covers: the outcome and reason of an explained attempt (headline rejection group, constraint,
incomplete pool, no devices, spent budget); CEL and other input errors; the counts after the
scheduler ran against the fake server (attempts by outcome, one binding, the queue, CEL work
read at scrape time); the CEL evaluator's result cache and counters.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools

import pytest
from tests.unit.observability.scrape import scrape

from dra_operator import errors, names
from dra_operator.allocator import (
    Explanation,
    PoolProblem,
    Reason,
    RejectionGroup,
    RequestExplanation,
)
from dra_operator.controllers.scheduler import (
    CELSelectors,
    Scheduler,
    blocking_reason,
    cel_stats,
    input_error_reason,
)
from dra_operator.model import Device
from dra_operator.observability import AllocationOutcome, BlockingReason, CELStats, Metrics

from .builders import (
    FEATURES,
    NS,
    claim,
    deliver,
    device_class,
    new_state,
    node,
    pod,
    resource_slice,
)
from .builders import settings as base_settings
from .test_scheduler import WatchedWorld, eventually

U, A = AllocationOutcome.UNSCHEDULABLE, AllocationOutcome.ABORTED


def _request(usable: int, needed: int, *groups: tuple[Reason, int]) -> RequestExplanation:
    rejected = tuple(RejectionGroup(reason=r, detail="", count=n) for r, n in groups)
    considered = usable + sum(n for _, n in groups)
    return RequestExplanation(
        claim="ns/c",
        request="gpu",
        considered=considered,
        usable=usable,
        needed=needed,
        rejected=rejected,
    )


def _explained(
    *requests: RequestExplanation, pools: tuple[PoolProblem, ...] = (), aborted: bool = False
) -> Explanation:
    return Explanation(
        node="n1", summary="", requests=requests, pools=pools, steps=3, aborted=aborted
    )


@pytest.mark.parametrize(
    ("explanation", "expected"),
    [
        pytest.param(
            _explained(_request(0, 1, (Reason.IN_USE, 2), (Reason.TAINT, 1))),
            (U, BlockingReason.IN_USE),
            id="largest-group",
        ),
        pytest.param(
            _explained(_request(0, 1, (Reason.CLASS_SELECTOR, 7), (Reason.IN_USE, 2))),
            (U, BlockingReason.IN_USE),
            id="other-classes-are-no-headline",
        ),
        pytest.param(
            _explained(_request(2, 1), _request(0, 1, (Reason.CLASS_SELECTOR, 4))),
            (U, BlockingReason.CLASS_SELECTOR),
            id="first-short-request",
        ),
        pytest.param(
            _explained(_request(1, 1), _request(1, 1)),
            (U, BlockingReason.CONSTRAINT),
            id="each-fits-alone",
        ),
        pytest.param(
            _explained(_request(0, 1), pools=(PoolProblem(pool="d/p", problem="incomplete"),)),
            (U, BlockingReason.INCOMPLETE_POOL),
            id="incomplete-pool",
        ),
        pytest.param(_explained(_request(0, 1)), (U, BlockingReason.NO_DEVICES), id="no-devices"),
        pytest.param(
            _explained(_request(1, 3)), (U, BlockingReason.NO_DEVICES), id="too-few-devices"
        ),
        pytest.param(
            _explained(_request(0, 1, (Reason.POLICY, 1))),
            (U, BlockingReason.POLICY),
            id="policy-veto",
        ),
        pytest.param(
            _explained(_request(0, 1, (Reason.SELECTOR_ERROR, 1))),
            (U, BlockingReason.CEL_ERROR),
            id="selector-error",
        ),
        pytest.param(
            _explained(_request(1, 1), aborted=True),
            (A, BlockingReason.SEARCH_BUDGET),
            id="budget-spent",
        ),
    ],
)
def test_blocking_reason(
    explanation: Explanation, expected: tuple[AllocationOutcome, BlockingReason]
) -> None:
    assert blocking_reason(explanation) == expected


def test_every_rejection_reason_has_a_label() -> None:
    for reason in Reason:
        assert blocking_reason(_explained(_request(0, 1, (reason, 1))))[0] is U


def test_input_errors_are_cel_errors_only_when_caused_by_cel() -> None:
    plain = errors.AllocationInputError('device class "gpu" not found')
    assert input_error_reason(plain) is BlockingReason.INVALID_OBJECT
    try:
        raise errors.AllocationInputError("class x: selector #0") from errors.CELRuntimeError("no")
    except errors.AllocationInputError as exc:
        assert input_error_reason(exc) is BlockingReason.CEL_ERROR


def _attempts(found: dict[tuple[str, tuple[tuple[str, str], ...]], float]) -> dict[str, float]:
    return {
        f"{dict(labels)['outcome']}/{dict(labels)['reason']}": count
        for (series, labels), count in found.items()
        if series == "dra_operator_allocation_attempts_total"
    }


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.looptime
async def test_a_run_is_counted_per_attempt_binding_and_cel_evaluation() -> None:
    world = WatchedWorld()
    world.put("classes", device_class())
    world.put("classes", device_class("broken", "device.attributes['x'].missing == 1"))
    world.put("nodes", node("n1"))
    world.put("slices", resource_slice("n1", 1))
    for name, class_name in (("a", "gpu"), ("b", "gpu"), ("bad", "broken")):
        world.put("claims", claim(name, class_name=class_name))
    world.put("pods", pod("bad", claims=["bad"]))
    metrics = Metrics()
    selectors = CELSelectors(FEATURES)
    settings = dataclasses.replace(base_settings(), selectors=selectors, metrics=metrics)
    metrics.track_cel(functools.partial(cel_stats, selectors, settings.selection))
    scheduler = Scheduler(new_state(), settings, world)
    world.scheduler = scheduler
    deliver(world, scheduler)
    task = asyncio.create_task(scheduler.run())
    try:
        # The broken selector fails on the free device: fatal for the claim (upstream's rule).
        await eventually(lambda: len(world.events) == 1)
        world.put("pods", pod("a", claims=["a"]))
        await eventually(lambda: world.get("pods", NS, "a")["spec"].get("nodeName") == "n1")
        await scheduler.wait_for_writes()
        world.put("pods", pod("b", claims=["b"]))
        await eventually(lambda: any(e.involved.name == "b" for e in world.events))
    finally:
        scheduler.shut_down()
        await task
    found = scrape(metrics)
    attempts = _attempts(found)
    assert attempts["allocated/"] == 1
    assert attempts["unschedulable/in_use"] >= 1
    assert attempts["error/cel_error"] >= 1
    # Decided again once the device is in use, the broken class is only a rejection reason.
    assert set(attempts) - {"unschedulable/cel_error"} == {
        "allocated/",
        "unschedulable/in_use",
        "error/cel_error",
    }
    assert found[("dra_operator_pod_binding_duration_seconds_count", ())] == 0  # no timestamp
    queue = (("name", names.SCHEDULER_QUEUE),)
    assert found[("workqueue_adds_total", queue)] >= 3
    assert found[("dra_operator_cel_evaluation_errors_total", ())] == 1  # then served cached
    assert found[("dra_operator_cel_compilations_total", ())] == 2
    assert found[("dra_operator_cel_evaluations_total", ())] == 2  # one device, two classes
    # Repeats are answered by the scheduler's selection memo before they reach the evaluator,
    # and count as cache hits.
    assert found[("dra_operator_cel_cache_hits_total", ())] >= 1


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.looptime
async def test_a_binding_is_timed_from_the_pods_creation() -> None:
    world = WatchedWorld()
    world.put("classes", device_class())
    world.put("nodes", node("n1"))
    world.put("slices", resource_slice("n1", 1))
    world.put("claims", claim("c"))
    raw = pod("p", claims=["c"])
    raw["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    world.put("pods", raw)
    metrics = Metrics()
    scheduler = Scheduler(new_state(), dataclasses.replace(base_settings(), metrics=metrics), world)
    world.scheduler = scheduler
    deliver(world, scheduler)
    task = asyncio.create_task(scheduler.run())
    try:
        await eventually(lambda: world.get("pods", NS, "p")["spec"].get("nodeName") == "n1")
    finally:
        scheduler.shut_down()
        await task
    found = scrape(metrics)
    assert found[("dra_operator_pod_binding_duration_seconds_count", ())] == 1
    assert found[("dra_operator_pod_binding_duration_seconds_sum", ())] > 600  # years, in fact


def _device(name: str) -> Device:
    return Device(name=name)


def test_selector_results_are_cached_per_device_and_counted() -> None:
    selectors = CELSelectors(FEATURES)
    first, second = _device("gpu-0"), _device("gpu-1")
    assert selectors("device.driver == 'd'", "d", first)
    assert selectors("device.driver == 'd'", "d", first)
    assert not selectors("device.driver == 'd'", "e", second)
    for _ in range(2):
        with pytest.raises(errors.CELRuntimeError):
            selectors("device.attributes['x'].missing == 1", "d", first)
    for _ in range(2):
        with pytest.raises(errors.CELCompileError):
            selectors("device.drivr", "d", first)
    assert selectors.stats() == CELStats(
        compilations=4,  # two good expressions once, the bad one on every lookup
        compilation_errors=2,
        evaluations=3,
        evaluation_errors=1,
        cache_hits=2,
        cache_misses=3,
    )
