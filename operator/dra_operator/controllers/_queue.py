"""Keyed work queues and the workers that drain them, in controller-runtime's shape.

Event handlers only map watch events to keys and `add` them; workers call `reconcile(key)`,
which reads the current state from the caches (level-based: it never sees the event). The queue
promises what controller-runtime's does:

* identical keys merge: a key waiting in the queue is queued once however often it is added;
* keys run in the order they became ready, unless the queue has a `priority`: then a key of
  higher priority runs first, and equal priorities in that order (the scheduler's queue,
  kube-scheduler's PrioritySort);
* a key is never handed to two workers at once: adding a key that is being processed marks it
  dirty, and it is queued again when its worker is done, so no change is lost;
* a delayed add (`add_after`, rate-limited retries) keeps the *earliest* due time when the key
  is already waiting, and does nothing when the key is already queued to run now;
* errors back off per key, exponentially from 5 ms to 1,000 s (controller-runtime's default
  per-item limiter); success forgets the key's failures.

`Controller.run` owns N workers in a TaskGroup. One switch, `_settle`, turns each outcome into a
queue action and reports it once through the caller's `observe` hook (which logs the error with
its traceback and counts the outcome): an unexpected exception is Python's "panic", caught at
the worker boundary and retried with backoff; `TerminalError` is counted and dropped.

An optional `QueueRecorder` (`observability.Metrics.workqueue(name)`) is called at client-go's
four points: `add` after the merge check, `get`, `done`, and every `add_after` (a retry).

Time is the event loop's clock (`loop.time`, `loop.call_at`), so tests drive it with
`looptime` and never sleep. Not thread-safe: use it from the loop thread only. It does not do
the token-bucket overall rate limit client-go adds to the per-item one (10 qps, burst 100): the
operator's writes are bounded by the API client instead.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import heapq
import itertools
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from dra_operator import errors

K = TypeVar("K", bound=Hashable)

BASE_DELAY = 0.005
"""Seconds before the first retry of a failed key (controller-runtime's default)."""

MAX_DELAY = 1000.0
"""Cap of the per-key exponential backoff, in seconds (controller-runtime's default)."""


@dataclass(frozen=True, slots=True)
class Result:
    """What a successful reconcile asks for; `requeue_after` in seconds, None for nothing."""

    requeue_after: float | None = None


class Outcome(enum.Enum):
    """How one reconcile ended; the values are controller-runtime's metric labels."""

    SUCCESS = "success"
    REQUEUE_AFTER = "requeue_after"
    ERROR = "error"
    TERMINAL = "terminal_error"


Reconciler = Callable[[K], Awaitable[Result]]
Observer = Callable[[K, Outcome, BaseException | None], None]


class QueueRecorder(Protocol):
    """The work-queue metrics, called at client-go's four points (`Metrics.workqueue(name)`)."""

    def added(self, key: Hashable) -> None: ...

    def got(self, key: Hashable) -> None: ...

    def done(self, key: Hashable) -> None: ...

    def retried(self) -> None: ...


class RateLimiter(Generic[K]):
    """Per-key exponential backoff: `BASE_DELAY * 2**failures`, capped at `MAX_DELAY`."""

    __slots__ = ("_base", "_failures", "_max")

    def __init__(self, base: float = BASE_DELAY, maximum: float = MAX_DELAY) -> None:
        self._base = base
        self._max = maximum
        self._failures: dict[K, int] = {}

    def when(self, key: K) -> float:
        """The delay before the next retry of `key`; counts one more failure."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        # Past 2**1024 a float overflows; the cap is reached long before that.
        if failures >= 64:
            return self._max
        return min(self._base * 2.0**failures, self._max)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    def failures(self, key: K) -> int:
        return self._failures.get(key, 0)


class _Shutdown:
    """Returned by `WorkQueue.get` once the queue is shut down and empty."""


SHUTDOWN = _Shutdown()


class WorkQueue(Generic[K]):
    """A deduplicating queue of keys with delayed adds; see the module docstring for the rules.

    `priority(key)` is read each time the key becomes ready (added, or done while dirty); the
    ready keys are a heap of (-priority, the order they became ready, key).
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[K] | None = None,
        *,
        metrics: QueueRecorder | None = None,
        priority: Callable[[K], int] | None = None,
    ) -> None:
        self._metrics = metrics
        self._priority = priority
        self._queue: list[tuple[int, int, K]] = []
        self._arrivals = itertools.count()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiting: dict[K, tuple[float, asyncio.TimerHandle]] = {}
        self._limiter: RateLimiter[K] = rate_limiter or RateLimiter()
        self._getters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._shutting_down = False

    def __len__(self) -> int:
        """Keys ready to run now (the workqueue `depth` metric)."""
        return len(self._queue)

    @property
    def waiting(self) -> int:
        """Keys scheduled for later."""
        return len(self._waiting)

    @property
    def is_shut_down(self) -> bool:
        return self._shutting_down

    def add(self, key: K) -> None:
        """Queue `key` to run now, unless it is already queued; ignored after shutdown."""
        if self._shutting_down or key in self._dirty:
            return
        self._cancel_waiting(key)
        if self._metrics is not None:
            self._metrics.added(key)
        self._dirty.add(key)
        if key not in self._processing:
            self._push(key)

    def add_after(self, key: K, delay: float) -> None:
        """Queue `key` after `delay` seconds; an earlier due time already set wins."""
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retried()  # client-go counts every delayed add, due now or not
        if delay <= 0:
            self.add(key)
            return
        if key in self._dirty:
            return  # it runs (again) soon anyway, and will see the then-current state
        loop = asyncio.get_running_loop()
        due = loop.time() + delay
        current = self._waiting.get(key)
        if current is not None:
            if current[0] <= due:
                return
            current[1].cancel()
        self._waiting[key] = (due, loop.call_at(due, self._fire, key))

    def add_rate_limited(self, key: K) -> None:
        """Queue `key` after its backoff delay, and count one more failure for it."""
        self.add_after(key, self._limiter.when(key))

    def forget(self, key: K) -> None:
        """Reset the backoff of `key`; call it when `key` was reconciled without error."""
        self._limiter.forget(key)

    def failures(self, key: K) -> int:
        return self._limiter.failures(key)

    async def get(self) -> K | _Shutdown:
        """The next key, marked as processing until `done`; `SHUTDOWN` once shut down."""
        while not self._queue and not self._shutting_down:
            getter = asyncio.get_running_loop().create_future()
            self._getters.append(getter)
            try:
                await getter
            except asyncio.CancelledError:
                if getter.done() and not getter.cancelled() and self._queue:
                    self._wake()  # pass on the wakeup this getter took but cannot use
                raise
            finally:
                if getter in self._getters:
                    self._getters.remove(getter)
        if self._shutting_down:
            self._wake(all_getters=True)
            return SHUTDOWN
        _, _, key = heapq.heappop(self._queue)
        self._dirty.discard(key)
        self._processing.add(key)
        if self._metrics is not None:
            self._metrics.got(key)
        return key

    def done(self, key: K) -> None:
        """Release `key`; if it was added while processing, queue it again."""
        self._processing.discard(key)
        if self._metrics is not None:
            self._metrics.done(key)
        if key in self._dirty and not self._shutting_down:
            self._push(key)

    def shut_down(self) -> None:
        """Stop handing out keys: waiting timers are cancelled, blocked `get`s return."""
        self._shutting_down = True
        for _, handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
        self._wake(all_getters=True)

    def _push(self, key: K) -> None:
        """`key` is ready: into the heap behind every key of its priority, and a getter woken."""
        rank = -self._priority(key) if self._priority is not None else 0
        heapq.heappush(self._queue, (rank, next(self._arrivals), key))
        self._wake()

    def _fire(self, key: K) -> None:
        self._waiting.pop(key, None)
        self.add(key)

    def _cancel_waiting(self, key: K) -> None:
        entry = self._waiting.pop(key, None)
        if entry is not None:
            entry[1].cancel()

    def _wake(self, *, all_getters: bool = False) -> None:
        """Wake one blocked `get` (all of them on shutdown), as asyncio.Queue does."""
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                if not all_getters:
                    return


class Controller(Generic[K]):
    """A work queue plus the workers that reconcile its keys.

    `observe(key, outcome, error)` is called once per reconcile, after the queue action; it is
    where errors get logged (with `error.__traceback__`) and outcomes counted. It must not raise.
    """

    def __init__(
        self,
        name: str,
        reconcile: Reconciler[K],
        *,
        workers: int = 1,
        observe: Observer[K] | None = None,
        queue: WorkQueue[K] | None = None,
        metrics: QueueRecorder | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"controller {name}: workers must be at least 1, not {workers}")
        self.name = name
        self.queue: WorkQueue[K] = queue if queue is not None else WorkQueue(metrics=metrics)
        self._reconcile = reconcile
        self._workers = workers
        self._observe = observe
        self.outcomes: collections.Counter[Outcome] = collections.Counter()

    def enqueue(self, key: K) -> None:
        self.queue.add(key)

    async def run(self) -> None:
        """Run the workers until `shut_down`; each finishes the key it holds, then exits.

        Cancelling `run` cancels the reconciles in progress instead.
        """
        async with asyncio.TaskGroup() as group:
            for index in range(self._workers):
                group.create_task(self._work(), name=f"{self.name}-worker-{index}")

    def shut_down(self) -> None:
        self.queue.shut_down()

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            if isinstance(key, _Shutdown):
                return
            try:
                result: Result | BaseException = await self._reconcile(key)
            except asyncio.CancelledError:
                self.queue.done(key)
                raise
            except Exception as exc:
                result = exc
            self._settle(key, result)

    def _settle(self, key: K, result: Result | BaseException) -> None:
        """The one switch from a reconcile's outcome to a queue action."""
        error: BaseException | None = None
        if isinstance(result, errors.TerminalError):
            self.queue.forget(key)
            outcome, error = Outcome.TERMINAL, result
        elif isinstance(result, BaseException):
            self.queue.add_rate_limited(key)
            outcome, error = Outcome.ERROR, result
        elif result.requeue_after is not None:
            self.queue.forget(key)
            self.queue.add_after(key, result.requeue_after)
            outcome = Outcome.REQUEUE_AFTER
        else:
            self.queue.forget(key)
            outcome = Outcome.SUCCESS
        # done() after the re-add: a rate-limited key that was also added while processing
        # runs again at once, and the error still counted towards its backoff.
        self.queue.done(key)
        self.outcomes[outcome] += 1
        if self._observe is not None:
            self._observe(key, outcome, error)
