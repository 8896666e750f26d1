"""Work-queue metrics under client-go's names, so upstream dashboards read our queues too.

client-go's queue calls its metrics at four points, and so must ours (`controllers.WorkQueue`):

* `added(key)` from `add`, *after* the "already waiting" check, so a merged add is not counted,
  but an add while the key is being processed is (it will run again);
* `got(key)` from `get`, when a worker takes the key;
* `done(key)` from `done`, when the worker releases it;
* `retried()` from `add_after`, on every delayed add (client-go counts each `AddAfter` as a
  retry, requeue-after included, not only the rate-limited ones).

`unfinished_work_seconds` and `longest_running_processor_seconds` are computed when scraped from
the start times of the keys being processed, where client-go refreshes them every 500 ms.

Not thread-safe: like the queue, call it from the event-loop thread only. The clock must be the
one the scrape uses too; it defaults to `time.monotonic`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Final

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry

QUEUE_BUCKETS: Final = tuple(1e-8 * 10.0**exponent for exponent in range(10))
"""client-go's `ExponentialBuckets(10e-9, 10, 10)`: 10 ns to 10 s."""


class QueueMetrics:
    """The recorder of one named queue; get it from `Metrics.workqueue(name)`."""

    __slots__ = (
        "_add_times",
        "_adds",
        "_clock",
        "_depth",
        "_latency",
        "_retries",
        "_started",
        "_work",
        "name",
    )

    def __init__(self, name: str, families: _QueueFamilies, clock: Callable[[], float]) -> None:
        self.name = name
        self._clock = clock
        self._depth = families.depth.labels(name=name)
        self._adds = families.adds.labels(name=name)
        self._latency = families.latency.labels(name=name)
        self._work = families.work.labels(name=name)
        self._retries = families.retries.labels(name=name)
        self._add_times: dict[Hashable, float] = {}
        self._started: dict[Hashable, float] = {}

    def added(self, key: Hashable) -> None:
        self._adds.inc()
        self._depth.inc()
        self._add_times.setdefault(key, self._clock())

    def got(self, key: Hashable) -> None:
        now = self._clock()
        self._depth.dec()
        self._started[key] = now
        added = self._add_times.pop(key, None)
        if added is not None:
            self._latency.observe(now - added)

    def done(self, key: Hashable) -> None:
        started = self._started.pop(key, None)
        if started is not None:
            self._work.observe(self._clock() - started)

    def retried(self) -> None:
        self._retries.inc()

    def unfinished(self) -> tuple[float, float]:
        """Seconds of work in progress, summed and of the longest-running key."""
        now = self._clock()
        ages = [now - started for started in self._started.values()]
        return sum(ages), max(ages, default=0.0)


class _QueueFamilies:
    """The seven metric families, one set per registry, shared by every queue's recorder."""

    def __init__(self, registry: CollectorRegistry) -> None:
        name = ("name",)
        self.depth = Gauge("workqueue_depth", "Current depth of workqueue", name, registry=registry)
        self.adds = Counter(
            "workqueue_adds_total",
            "Total number of adds handled by workqueue",
            name,
            registry=registry,
        )
        self.latency = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested.",
            name,
            registry=registry,
            buckets=QUEUE_BUCKETS,
        )
        self.work = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            name,
            registry=registry,
            buckets=QUEUE_BUCKETS,
        )
        self.retries = Counter(
            "workqueue_retries_total",
            "Total number of retries handled by workqueue",
            name,
            registry=registry,
        )


class _UnfinishedWork(Collector):
    """The two gauges client-go sets periodically, computed at scrape time instead."""

    def __init__(self, queues: dict[str, QueueMetrics]) -> None:
        self._queues = queues

    def describe(self) -> list[GaugeMetricFamily]:
        """The families without samples, so the registry refuses a second set of them."""
        return list(self._families())

    def collect(self) -> Iterator[GaugeMetricFamily]:
        unfinished, longest = self._families()
        for name, queue in sorted(self._queues.items()):
            total, oldest = queue.unfinished()
            unfinished.add_metric((name,), total)
            longest.add_metric((name,), oldest)
        yield unfinished
        yield longest

    @staticmethod
    def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of "
            "stuck threads by observing the rate at which this increases.",
            labels=("name",),
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels=("name",),
        )
        return unfinished, longest


class WorkQueues:
    """Every queue's recorder in one registry; one queue name, one recorder."""

    def __init__(self, registry: CollectorRegistry, clock: Callable[[], float]) -> None:
        self._families = _QueueFamilies(registry)
        self._clock = clock
        self._queues: dict[str, QueueMetrics] = {}
        registry.register(_UnfinishedWork(self._queues))

    def queue(self, name: str) -> QueueMetrics:
        """The recorder for queue `name`, created on first use (upstream: `resource_claim`)."""
        if not name:
            raise ValueError("workqueue metrics: the queue name must not be empty")
        recorder = self._queues.get(name)
        if recorder is None:
            recorder = self._queues[name] = QueueMetrics(name, self._families, self._clock)
        return recorder
