"""Work-queue metrics under client-go's names.

Covers: depth/adds/latency/work duration at client-go's four call points, measured with an
injected clock; retries; unfinished work and the longest-running processor at scrape time;
client-go's buckets; one recorder per name; the empty name refused.
"""

from __future__ import annotations

import pytest
from tests.unit.observability.scrape import scrape, value

from dra_operator.observability import Metrics


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_key_through_the_queue() -> None:
    clock = FakeClock()
    metrics = Metrics(clock=clock)
    queue = metrics.workqueue("resource_claim")
    queue.added("ns/a")
    queue.added("ns/b")
    assert value(metrics, "workqueue_depth", name="resource_claim") == 2.0
    clock.now += 0.5
    queue.got("ns/a")
    clock.now += 2.0
    queue.done("ns/a")
    page = scrape(metrics)
    labels = (("name", "resource_claim"),)
    assert page[("workqueue_adds_total", labels)] == 2.0
    assert page[("workqueue_depth", labels)] == 1.0
    assert page[("workqueue_queue_duration_seconds_sum", labels)] == 0.5
    assert page[("workqueue_work_duration_seconds_sum", labels)] == 2.0


def test_the_first_add_sets_the_queue_time() -> None:
    """client-go keeps the earliest add time of a key re-added while processing."""
    clock = FakeClock()
    metrics = Metrics(clock=clock)
    queue = metrics.workqueue("q")
    queue.added("k")
    clock.now += 1.0
    queue.added("k")
    clock.now += 1.0
    queue.got("k")
    assert value(metrics, "workqueue_queue_duration_seconds_sum", name="q") == 2.0


def test_unfinished_work_is_measured_when_scraped() -> None:
    clock = FakeClock()
    metrics = Metrics(clock=clock)
    queue = metrics.workqueue("q")
    for key in ("a", "b"):
        queue.added(key)
    queue.got("a")
    clock.now += 3.0
    queue.got("b")
    clock.now += 1.0
    assert value(metrics, "workqueue_unfinished_work_seconds", name="q") == 5.0
    assert value(metrics, "workqueue_longest_running_processor_seconds", name="q") == 4.0
    queue.done("a")
    queue.done("b")
    assert value(metrics, "workqueue_unfinished_work_seconds", name="q") == 0.0
    assert value(metrics, "workqueue_longest_running_processor_seconds", name="q") == 0.0


def test_retries_count_every_delayed_add() -> None:
    metrics = Metrics()
    queue = metrics.workqueue("q")
    queue.retried()
    queue.retried()
    assert value(metrics, "workqueue_retries_total", name="q") == 2.0


def test_done_without_got_observes_nothing() -> None:
    metrics = Metrics()
    metrics.workqueue("q").done("never-taken")
    assert value(metrics, "workqueue_work_duration_seconds_count", name="q") == 0.0


def test_buckets_are_client_gos() -> None:
    metrics = Metrics()
    metrics.workqueue("q")
    bounds = sorted(
        float(dict(labels)["le"])
        for name, labels in scrape(metrics)
        if name == "workqueue_work_duration_seconds_bucket"
    )
    expected = [1e-8 * 10**exponent for exponent in range(10)] + [float("inf")]
    assert bounds == pytest.approx(expected)


def test_one_recorder_per_name() -> None:
    metrics = Metrics()
    assert metrics.workqueue("q") is metrics.workqueue("q")
    assert metrics.workqueue("q") is not metrics.workqueue("other")


def test_the_name_must_not_be_empty() -> None:
    with pytest.raises(ValueError, match="the queue name must not be empty"):
        Metrics().workqueue("")
