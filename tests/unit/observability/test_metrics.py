"""The Metrics facade.

Covers: each typed call lands in the upstream-named or `dra_operator_` series with the right
labels; a failed attempt needs a reason; upstream's buckets; registries of two operators stay
apart; no `_created` series; the scrape-time gauges (leader status, cache sizes, CEL hit ratio)
and a failing source.
"""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.unit.observability.scrape import scrape, value

from dra_operator.observability import (
    AllocationOutcome,
    BlockingReason,
    CELStats,
    Health,
    HookFailure,
    Metrics,
    RetryReason,
    Role,
)


@pytest.mark.parametrize(
    ("call", "series", "labels"),
    [
        pytest.param(
            lambda m: m.claim_created(ok=True, admin_access=False),
            "resourceclaim_controller_creates_total",
            {"status": "success", "admin_access": "false"},
            id="claim-created",
        ),
        pytest.param(
            lambda m: m.claim_created(ok=False, admin_access=True),
            "resourceclaim_controller_creates_total",
            {"status": "failure", "admin_access": "true"},
            id="claim-create-failed-with-admin-access",
        ),
        pytest.param(
            lambda m: m.device_nomination("expired"),
            "dra_operator_device_nominations_total",
            {"outcome": "expired"},
            id="device-nomination-expired",
        ),
        pytest.param(
            lambda m: m.preemption_attempted(),
            "scheduler_preemption_attempts_total",
            {},
            id="preemption-attempted",
        ),
        pytest.param(
            lambda m: m.pod_evicted(seconds_after_due=0.2),
            "device_taint_eviction_controller_pod_deletions_total",
            {},
            id="pod-evicted",
        ),
        pytest.param(
            lambda m: m.allocation_attempted(
                AllocationOutcome.UNSCHEDULABLE, seconds=0.01, steps=5, reason=BlockingReason.TAINT
            ),
            "dra_operator_allocation_attempts_total",
            {"outcome": "unschedulable", "reason": "taint"},
            id="unschedulable-with-reason",
        ),
        pytest.param(
            lambda m: m.allocation_attempted(
                AllocationOutcome.ALLOCATED, seconds=0.01, steps=5, reason=BlockingReason.TAINT
            ),
            "dra_operator_allocation_attempts_total",
            {"outcome": "allocated", "reason": ""},
            id="allocated-drops-the-reason",
        ),
        pytest.param(
            lambda m: m.allocation_attempted(
                AllocationOutcome.ABORTED,
                seconds=2.0,
                steps=10**6,
                reason=BlockingReason.SEARCH_BUDGET,
            ),
            "dra_operator_allocation_duration_seconds_count",
            {"outcome": "aborted"},
            id="decision-latency-by-outcome",
        ),
        pytest.param(
            lambda m: m.pod_bound(seconds_since_creation=3.0),
            "dra_operator_pod_binding_duration_seconds_count",
            {},
            id="pod-bound",
        ),
        pytest.param(
            lambda m: m.api_conflict("ResourceClaim"),
            "dra_operator_api_conflicts_total",
            {"kind": "ResourceClaim"},
            id="api-conflict",
        ),
        pytest.param(
            lambda m: m.api_retried("Pod", RetryReason.TOO_MANY_REQUESTS),
            "dra_operator_api_retries_total",
            {"kind": "Pod", "reason": "too_many_requests"},
            id="api-retry",
        ),
        pytest.param(
            lambda m: m.hook_called("example:Hook", "score_node"),
            "dra_operator_hook_calls_total",
            {"hook": "example:Hook", "point": "score_node"},
            id="hook-called",
        ),
        pytest.param(
            lambda m: m.hook_failed("example:Hook", "filter_device", HookFailure.TIMEOUT),
            "dra_operator_hook_failures_total",
            {"hook": "example:Hook", "point": "filter_device", "reason": "timeout"},
            id="hook-timed-out",
        ),
        pytest.param(
            lambda m: m.reconciled("claims", "terminal_error"),
            "dra_operator_reconciles_total",
            {"controller": "claims", "result": "terminal_error"},
            id="reconciled",
        ),
    ],
)
def test_each_call_counts_once_in_its_series(call, series, labels) -> None:
    metrics = Metrics()
    call(metrics)
    assert value(metrics, series, **labels) == 1.0


def test_allocation_attempted_observes_latency_and_steps() -> None:
    metrics = Metrics()
    metrics.allocation_attempted(AllocationOutcome.ALLOCATED, seconds=0.003, steps=17)
    metrics.allocation_attempted(AllocationOutcome.ALLOCATED, seconds=0.001, steps=3)
    page = scrape(metrics)
    assert page[("dra_operator_allocation_duration_seconds_sum", (("outcome", "allocated"),))] == (
        pytest.approx(0.004)
    )
    assert page[("dra_operator_allocation_search_steps_sum", ())] == 20.0
    assert page[("dra_operator_allocation_search_steps_bucket", (("le", "4.0"),))] == 1.0


@pytest.mark.parametrize(
    "outcome",
    [AllocationOutcome.UNSCHEDULABLE, AllocationOutcome.ABORTED, AllocationOutcome.ERROR],
    ids=lambda outcome: outcome.value,
)
def test_an_attempt_that_did_not_allocate_needs_a_reason(outcome: AllocationOutcome) -> None:
    with pytest.raises(ValueError, match=f"a {outcome.value} attempt needs a blocking reason"):
        Metrics().allocation_attempted(outcome, seconds=0.1, steps=1)


def test_pod_evicted_observes_upstreams_buckets() -> None:
    metrics = Metrics()
    metrics.pod_evicted(seconds_after_due=0.03)
    family = "device_taint_eviction_controller_pod_deletion_duration_seconds"
    page = scrape(metrics)
    bounds = sorted(
        float(dict(labels)["le"]) for name, labels in page if name == f"{family}_bucket"
    )
    assert bounds == [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240, float("inf")]
    assert page[(f"{family}_bucket", (("le", "0.025"),))] == 0.0
    assert page[(f"{family}_bucket", (("le", "0.1"),))] == 1.0


def test_record_cel_adds_counts_and_ratio() -> None:
    metrics = Metrics()
    assert value(metrics, "dra_operator_cel_cache_hit_ratio") == 0.0
    metrics.record_cel(CELStats(compilations=2, compilation_errors=1, cache_misses=1))
    metrics.record_cel(CELStats(evaluations=4, evaluation_errors=1, cache_hits=3))
    page = scrape(metrics)
    assert page[("dra_operator_cel_compilations_total", ())] == 2.0
    assert page[("dra_operator_cel_compilation_errors_total", ())] == 1.0
    assert page[("dra_operator_cel_evaluations_total", ())] == 4.0
    assert page[("dra_operator_cel_evaluation_errors_total", ())] == 1.0
    assert page[("dra_operator_cel_cache_hit_ratio", ())] == 0.75


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        pytest.param(Role.STARTING, 0.0, id="starting"),
        pytest.param(Role.STANDBY, 0.0, id="standby"),
        pytest.param(Role.LEADER, 1.0, id="leader"),
    ],
)
def test_leader_status_follows_health(role: Role, expected: float) -> None:
    health = Health()
    metrics = Metrics(health=health)
    health.set_role(role)
    assert value(metrics, "dra_operator_leader_status") == expected


def test_leader_status_is_zero_without_health() -> None:
    assert value(Metrics(), "dra_operator_leader_status") == 0.0


def test_cache_sizes_are_read_at_scrape_time() -> None:
    metrics = Metrics()
    pods = ["a", "b"]
    metrics.track_cache("Pod", pods.__len__)
    assert value(metrics, "dra_operator_cache_objects", kind="Pod") == 2.0
    pods.append("c")
    assert value(metrics, "dra_operator_cache_objects", kind="Pod") == 3.0


def test_a_kind_is_tracked_once() -> None:
    metrics = Metrics()
    metrics.track_cache("Pod", lambda: 0)
    with pytest.raises(ValueError, match="cache Pod is already tracked"):
        metrics.track_cache("Pod", lambda: 0)


def test_a_failing_source_loses_only_its_samples() -> None:
    def broken() -> int:
        raise RuntimeError("cache gone")

    metrics = Metrics()
    metrics.track_cache("Pod", broken)
    metrics.track_cache("ResourceClaim", lambda: 4)
    page = scrape(metrics)
    assert ("dra_operator_cache_objects", (("kind", "Pod"),)) not in page
    assert page[("dra_operator_cache_objects", (("kind", "ResourceClaim"),))] == 4.0


def test_two_operators_count_apart() -> None:
    first, second = Metrics(), Metrics()
    first.api_conflict("Pod")
    assert value(first, "dra_operator_api_conflicts_total", kind="Pod") == 1.0
    assert value(second, "dra_operator_api_conflicts_total", kind="Pod") is None


def test_the_page_has_no_created_series() -> None:
    metrics = Metrics()
    metrics.claim_created(ok=True, admin_access=False)
    metrics.pod_bound(seconds_since_creation=1.0)
    names = {
        sample.name
        for family in text_string_to_metric_families(metrics.render().decode())
        for sample in family.samples
    }
    assert names
    assert not [name for name in names if name.endswith("_created")]


def test_cel_totals_are_added_as_deltas_at_each_scrape_and_across_sources() -> None:
    metrics = Metrics()
    totals = {"first": CELStats(evaluations=3, cache_hits=1, cache_misses=3)}
    metrics.track_cel(lambda: totals["first"])
    assert value(metrics, "dra_operator_cel_evaluations_total") == 3
    totals["first"] = CELStats(evaluations=5, cache_hits=4, cache_misses=5, evaluation_errors=1)
    assert value(metrics, "dra_operator_cel_evaluations_total") == 5  # not 3 + 5
    totals["first"] = CELStats(evaluations=6, cache_hits=4, cache_misses=6, evaluation_errors=1)
    # The next leadership term's evaluator counts from zero; the old one's tail is kept.
    metrics.track_cel(lambda: CELStats(evaluations=2, cache_misses=2, compilations=1))
    found = scrape(metrics)
    assert found[("dra_operator_cel_evaluations_total", ())] == 8
    assert found[("dra_operator_cel_evaluation_errors_total", ())] == 1
    assert found[("dra_operator_cel_compilations_total", ())] == 1
    assert found[("dra_operator_cel_cache_hit_ratio", ())] == 4 / (4 + 8)


def test_a_failing_cel_source_loses_only_its_own_counts() -> None:
    metrics = Metrics()

    def broken() -> CELStats:
        raise RuntimeError("gone")

    metrics.track_cel(broken)
    assert value(metrics, "dra_operator_cel_evaluations_total") == 0
    assert value(metrics, "dra_operator_leader_status") == 0


def test_preempted_observes_the_victim_count_in_upstreams_buckets() -> None:
    metrics = Metrics()
    metrics.preempted(3)
    assert value(metrics, "scheduler_preemption_victims_count") == 1.0
    assert value(metrics, "scheduler_preemption_victims_bucket", le="2.0") == 0.0
    assert value(metrics, "scheduler_preemption_victims_bucket", le="4.0") == 1.0
