"""The keyed work queue and its workers.

Covers: merging of identical keys; one key never held by two workers, and a key added while
being processed runs again afterwards; per-key exponential backoff (5 ms doubling to 1,000 s)
and its reset on success; `requeue_after`; terminal errors counted and dropped; unexpected
exceptions reported once and retried; delayed adds keeping the earliest due time; shutdown
and cancellation; the work-queue metrics at client-go's four points. Time is the loop clock
under looptime: nothing sleeps for real.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

import pytest
from tests.unit.observability.scrape import scrape

from dra_operator import errors
from dra_operator.controllers import (
    SHUTDOWN,
    Controller,
    Outcome,
    RateLimiter,
    Result,
    WorkQueue,
)
from dra_operator.observability import Metrics

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.looptime]

Step = Callable[[str], Result]


def now() -> float:
    return asyncio.get_running_loop().time()


class Script:
    """A reconciler that runs scripted steps per call and records when each call started."""

    def __init__(self, *steps: Step, until: int) -> None:
        self.steps = list(steps)
        self.calls: list[tuple[str, float]] = []
        self.until = until
        self.finished = asyncio.Event()

    async def __call__(self, key: str) -> Result:
        self.calls.append((key, now()))
        if len(self.calls) >= self.until:
            self.finished.set()
        step = self.steps.pop(0) if self.steps else ok
        return step(key)

    def gaps(self) -> list[float]:
        times = [t for _, t in self.calls]
        return [round(b - a, 6) for a, b in itertools.pairwise(times)]


def ok(_: str) -> Result:
    return Result()


def fail(_: str) -> Result:
    raise RuntimeError("boom")


def terminal(_: str) -> Result:
    raise errors.TerminalError("cannot ever work")


def later(seconds: float) -> Step:
    return lambda _: Result(requeue_after=seconds)


async def drive(controller: Controller[str], script: Script) -> None:
    """Run `controller` until the script saw enough calls, then shut down cleanly."""
    async with asyncio.TaskGroup() as group:
        group.create_task(controller.run())
        await script.finished.wait()
        controller.shut_down()


async def test_identical_keys_merge_while_queued() -> None:
    script = Script(until=2)
    controller = Controller("test", script)
    for _ in range(3):
        controller.enqueue("a")
    controller.enqueue("b")
    await drive(controller, script)
    assert [key for key, _ in script.calls] == ["a", "b"]
    assert controller.outcomes == {Outcome.SUCCESS: 2}


async def test_without_a_priority_keys_run_in_the_order_they_became_ready() -> None:
    queue: WorkQueue[str] = WorkQueue()
    for key in ("c", "a", "b", "a"):
        queue.add(key)
    assert [await queue.get() for _ in range(3)] == ["c", "a", "b"]


async def test_a_priority_runs_higher_first_then_in_the_order_they_became_ready() -> None:
    ranks = {"low": -5, "mid-1": 0, "mid-2": 0, "high": 100}
    queue: WorkQueue[str] = WorkQueue(priority=ranks.__getitem__)
    for key in ("low", "mid-1", "high", "mid-2"):
        queue.add(key)
    assert await queue.get() == "high"
    queue.add("high")  # added while processing: ready again once done, ahead of all
    queue.done("high")
    assert [await queue.get() for _ in range(4)] == ["high", "mid-1", "mid-2", "low"]


async def test_a_key_ready_again_queues_behind_its_priority_not_at_its_first_place() -> None:
    queue: WorkQueue[str] = WorkQueue(priority=lambda _: 0)
    queue.add("a")
    queue.add("b")
    assert await queue.get() == "a"
    queue.add("a")
    queue.done("a")  # upstream's timestamp is when the pod entered the queue again
    queue.add("c")
    assert [await queue.get() for _ in range(3)] == ["b", "a", "c"]


async def test_key_added_while_processing_runs_again_after_and_never_concurrently() -> None:
    release = asyncio.Event()
    running: set[str] = set()
    overlaps: list[str] = []
    calls: list[str] = []
    finished = asyncio.Event()

    async def reconcile(key: str) -> Result:
        if key in running:
            overlaps.append(key)
        running.add(key)
        calls.append(key)
        if len(calls) == 1:
            await release.wait()
        running.discard(key)
        if len(calls) == 2:
            finished.set()
        return Result()

    controller = Controller("test", reconcile, workers=4)
    controller.enqueue("a")
    async with asyncio.TaskGroup() as group:
        group.create_task(controller.run())
        while not calls:
            await asyncio.sleep(0)
        controller.enqueue("a")  # while the first worker still holds it
        controller.enqueue("a")
        await asyncio.sleep(1)
        assert calls == ["a"]  # no second worker picked it up
        release.set()
        await finished.wait()
        controller.shut_down()
    assert calls == ["a", "a"]
    assert overlaps == []


async def test_errors_back_off_exponentially_per_key() -> None:
    script = Script(fail, fail, fail, fail, ok, until=5)
    seen: list[tuple[str, Outcome, str]] = []
    controller = Controller("test", script, observe=lambda k, o, e: seen.append((k, o, repr(e))))
    controller.enqueue("a")
    await drive(controller, script)
    assert script.gaps() == [0.005, 0.01, 0.02, 0.04]
    assert controller.outcomes == {Outcome.ERROR: 4, Outcome.SUCCESS: 1}
    assert seen[0] == ("a", Outcome.ERROR, "RuntimeError('boom')")
    assert seen[-1] == ("a", Outcome.SUCCESS, "None")
    assert controller.queue.failures("a") == 0


async def test_success_resets_the_backoff() -> None:
    script = Script(fail, fail, ok, fail, until=4)
    controller = Controller("test", script)
    controller.enqueue("a")
    async with asyncio.TaskGroup() as group:
        group.create_task(controller.run())
        while len(script.calls) < 3:
            await asyncio.sleep(0.001)
        controller.enqueue("a")  # a fresh change after the success
        await script.finished.wait()
        controller.shut_down()
    assert script.gaps()[:2] == [0.005, 0.01]
    assert controller.queue.failures("a") == 1  # the last failure starts from scratch


async def test_unexpected_exception_is_reported_once_with_its_traceback() -> None:
    script = Script(fail, until=2)
    reports: list[BaseException | None] = []
    controller = Controller("test", script, observe=lambda k, o, e: reports.append(e))
    controller.enqueue("a")
    await drive(controller, script)
    assert len(reports) == 2
    error = reports[0]
    assert isinstance(error, RuntimeError)
    assert error.__traceback__ is not None
    assert reports[1] is None


async def test_requeue_after_runs_the_key_again_later() -> None:
    script = Script(later(30), ok, until=2)
    controller = Controller("test", script)
    controller.enqueue("a")
    await drive(controller, script)
    assert script.gaps() == [30]
    assert controller.outcomes == {Outcome.REQUEUE_AFTER: 1, Outcome.SUCCESS: 1}


async def test_terminal_error_is_counted_and_not_retried() -> None:
    script = Script(terminal, until=2)
    reports: list[tuple[str, Outcome]] = []
    controller = Controller("test", script, observe=lambda k, o, e: reports.append((k, o)))
    controller.enqueue("a")
    controller.enqueue("b")
    await drive(controller, script)
    await asyncio.sleep(2000)  # longer than any backoff: "a" never comes back
    assert [key for key, _ in script.calls] == ["a", "b"]
    assert reports == [("a", Outcome.TERMINAL), ("b", Outcome.SUCCESS)]
    assert controller.queue.failures("a") == 0


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        pytest.param(10.0, 5.0, 5.0, id="earlier-wins"),
        pytest.param(5.0, 10.0, 5.0, id="later-ignored"),
        pytest.param(10.0, 0.0, 0.0, id="immediate-add-cancels-the-wait"),
    ],
)
async def test_delayed_add_keeps_the_earliest_due_time(
    first: float, second: float, expected: float
) -> None:
    queue: WorkQueue[str] = WorkQueue()
    start = now()
    queue.add_after("a", first)
    queue.add_after("a", second)
    assert await queue.get() == "a"
    assert now() - start == pytest.approx(expected)
    queue.done("a")
    await asyncio.sleep(first + 1)
    assert len(queue) == 0
    assert queue.waiting == 0


async def test_delayed_add_of_a_queued_key_does_nothing() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.add_after("a", 5)
    assert queue.waiting == 0
    assert len(queue) == 1


async def test_shutdown_releases_blocked_getters_and_drops_later_adds() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add_after("late", 5)
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await asyncio.sleep(0)
    queue.shut_down()
    assert await asyncio.gather(*getters) == [SHUTDOWN] * 3
    queue.add("a")
    queue.add_after("b", 1)
    assert (len(queue), queue.waiting) == (0, 0)
    assert await queue.get() is SHUTDOWN


async def test_shutdown_lets_the_current_reconcile_finish() -> None:
    started = asyncio.Event()
    finished: list[str] = []

    async def reconcile(key: str) -> Result:
        started.set()
        await asyncio.sleep(10)
        finished.append(key)
        return Result()

    controller = Controller("test", reconcile, workers=2)
    controller.enqueue("a")
    controller.enqueue("b")
    async with asyncio.TaskGroup() as group:
        group.create_task(controller.run())
        await started.wait()
        controller.shut_down()
    assert sorted(finished) == ["a", "b"]


async def test_cancelling_run_cancels_the_reconcile_in_progress() -> None:
    cancelled = asyncio.Event()

    async def reconcile(key: str) -> Result:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return Result()

    controller = Controller("test", reconcile)
    controller.enqueue("a")
    runner = asyncio.create_task(controller.run())
    await asyncio.sleep(1)
    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await runner
    assert cancelled.is_set()
    assert controller.outcomes == {}


async def test_a_cancelled_getter_passes_its_wakeup_on() -> None:
    queue: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.add("a")  # wakes `first` ...
    first.cancel()  # ... which is cancelled before it runs
    assert await second == "a"


async def test_backoff_doubles_from_5ms_and_caps_at_1000s() -> None:
    limiter: RateLimiter[str] = RateLimiter()
    delays = [limiter.when("a") for _ in range(100)]
    assert delays[:4] == [0.005, 0.01, 0.02, 0.04]
    assert max(delays) == 1000.0
    assert delays[-1] == 1000.0
    assert delays == sorted(delays)
    assert limiter.when("b") == 0.005  # per key
    limiter.forget("a")
    assert limiter.when("a") == 0.005


async def test_a_controller_keeps_the_queue_it_is_given_even_while_empty() -> None:
    queue: WorkQueue[str] = WorkQueue(priority=lambda _: 0)
    assert Controller("c", Script(until=1), queue=queue).queue is queue


async def test_controller_needs_a_worker() -> None:
    async def reconcile(key: str) -> Result:
        return Result()

    with pytest.raises(ValueError, match="controller c: workers must be at least 1, not 0"):
        Controller("c", reconcile, workers=0)


async def test_the_queue_records_client_gos_four_points() -> None:
    metrics = Metrics()
    queue: WorkQueue[str] = WorkQueue(metrics=metrics.workqueue("q"))
    queue.add("a")
    queue.add("a")  # merged: not an add
    queue.add("b")
    key = await queue.get()
    queue.add(key)  # added while processing: counted, runs again
    queue.done(key)
    queue.add_after("c", 0.5)
    queue.add_after("d", 0)  # a delayed add due now is a retry too
    found = scrape(metrics)
    assert found[("workqueue_adds_total", (("name", "q"),))] == 4
    assert found[("workqueue_depth", (("name", "q"),))] == 3  # b, a again, d
    assert found[("workqueue_retries_total", (("name", "q"),))] == 2
    assert found[("workqueue_work_duration_seconds_count", (("name", "q"),))] == 1
    assert found[("workqueue_queue_duration_seconds_count", (("name", "q"),))] == 1


async def test_a_controller_passes_its_recorder_to_its_queue() -> None:
    metrics = Metrics()
    controller: Controller[str] = Controller("c", Script(until=1), metrics=metrics.workqueue("c"))
    controller.enqueue("k")
    assert scrape(metrics)[("workqueue_adds_total", (("name", "c"),))] == 1
