"""The operator's metrics: one registry per operator, written through typed methods.

`Metrics` owns a `CollectorRegistry` of its own, never prometheus-client's global one, so tests
and two operators in one process do not share counters. Callers never spell a metric or label
name: each method says what happened (`claim_created`, `allocation_attempted`, `api_conflict`) and
maps it to the metrics upstream dashboards know, or to ours under `dra_operator_`.

Names, labels, types and buckets are upstream's where upstream has the metric (v1.36.4:
kube-controller-manager's resourceclaim and device-taint-eviction controllers, client-go's
workqueue). deploy/monitoring's alerts and dashboard are written against these names.
docs/metrics.md lists every metric; a unit test keeps it equal to the registry.

Not done here: deciding when something happened, timing it (callers pass seconds), or exposing
the page (`_server`). prometheus-client's metrics are thread-safe; the work-queue recorders and
the scrape-time collectors are meant for the loop thread.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.registry import CollectorRegistry

from dra_operator.model import ResourceClaim
from dra_operator.observability._collectors import CacheSizes, LeaderStatus, ResourceClaims
from dra_operator.observability._health import Health
from dra_operator.observability._labels import (
    AllocationOutcome,
    BlockingReason,
    CELStats,
    HookFailure,
    RetryReason,
    bool_label,
)
from dra_operator.observability._logging import LogEvent, get_logger
from dra_operator.observability._workqueue import QueueMetrics, WorkQueues

_log = get_logger(__name__)

CONTENT_TYPE: Final = CONTENT_TYPE_PLAIN_0_0_4
"""The exposition format `/metrics` serves: Prometheus text 0.0.4, as Kubernetes components."""

EVICTION_BUCKETS: Final = (0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240)
VICTIM_BUCKETS: Final = (1, 2, 4, 8, 16, 32, 64)
"""kube-scheduler's `ExponentialBuckets(1, 2, 7)` for the victims of one preemption."""
"""Upstream's `pod_deletion_duration_seconds` buckets: 5 ms to 4 min."""

DECISION_BUCKETS: Final = (
    *(1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5),
    *(1.0, 2.5, 5.0, 10.0),
)
"""Allocator run time: 100 µs (one small claim) to 10 s (a search budget running out)."""

BINDING_BUCKETS: Final = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
"""Pod creation to binding: 10 ms to 10 min, past which a pod is stuck, not slow."""

STEP_BUCKETS: Final = tuple(float(4**power) for power in range(13))
"""Search steps per decision, powers of four from 1 to about 16.8 million."""


class _CacheHitRatio:
    """`dra_operator_cel_cache_hit_ratio`, from the hit and miss counters at scrape time."""

    NAME = "dra_operator_cel_cache_hit_ratio"

    def __init__(self, hits: Counter, misses: Counter) -> None:
        self._hits = hits
        self._misses = misses

    def describe(self) -> list[GaugeMetricFamily]:
        return [self._family()]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        hits, misses = _value(self._hits), _value(self._misses)
        family = self._family()
        family.add_metric((), hits / (hits + misses) if hits + misses else 0.0)
        yield family

    def _family(self) -> GaugeMetricFamily:
        return GaugeMetricFamily(
            self.NAME,
            "CEL selector-result cache hits over lookups since start (0 before any lookup); "
            "prefer a rate() of the hit and miss counters for recent behaviour.",
            labels=(),
        )


def _value(counter: Counter) -> float:
    for metric in counter.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total"):
                return sample.value
    return 0.0


class _WithoutCreated:
    """The registry minus the `_created` series prometheus-client adds and upstream lacks."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for metric in self._registry.collect():
            created = metric.name + "_created"
            trimmed = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            trimmed.samples = [s for s in metric.samples if s.name != created]
            yield trimmed


class Metrics:
    """Every metric of one operator; see docs/metrics.md for the names and the calls."""

    def __init__(
        self,
        *,
        health: Health | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self._workqueues = WorkQueues(r, clock)
        self._claims = ResourceClaims()
        self._caches = CacheSizes()
        for collector in (self._claims, self._caches, LeaderStatus(health)):
            r.register(collector)

        # kube-controller-manager's resourceclaim controller: the 1.37 name (shared with
        # kube-scheduler, hence the owner labels) and the 1.36 one, kept for dashboards
        self._creates = Counter(
            "dynamic_resource_allocation_resourceclaim_creates_total",
            "Number of ResourceClaims creation requests, categorized by creation status, admin "
            "access, and owning API group and kind (either Pod or scheduling.k8s.io/PodGroup)",
            ("status", "admin_access", "owner_api_group", "owner_api_kind"),
            registry=r,
        )
        self._creates_136 = Counter(
            "resourceclaim_controller_creates_total",
            "Number of ResourceClaims creation requests, categorized by creation status and "
            "admin access",
            ("status", "admin_access"),
            registry=r,
        )
        # kube-scheduler's DynamicResources plugin: the claim for extended resources
        self._scheduler_creates = Counter(
            "scheduler_resourceclaim_creates_total",
            "Number of ResourceClaims creation requests within scheduler",
            ("status",),
            registry=r,
        )
        # kube-controller-manager's device taint eviction controller
        self._deletions = Counter(
            "device_taint_eviction_controller_pod_deletions_total",
            "Total number of Pods deleted by DeviceTaintEvictionController since its start.",
            registry=r,
        )
        self._deletion_latency = Histogram(
            "device_taint_eviction_controller_pod_deletion_duration_seconds",
            "Latency, in seconds, between the time when a device taint effect has been "
            "activated and a Pod's deletion via DeviceTaintEvictionController.",
            registry=r,
            buckets=EVICTION_BUCKETS,
        )
        # kube-scheduler's DefaultPreemption
        self._preemption_attempts = Counter(
            "scheduler_preemption_attempts_total",
            "Total preemption attempts in the cluster till now",
            registry=r,
        )
        self._preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims for preemption initiated by a single pod",
            registry=r,
            buckets=VICTIM_BUCKETS,
        )
        # ours
        self._nominations = Counter(
            "dra_operator_device_nominations_total",
            "Devices nominated to a preemptor in the ledger (KEP-5690), by outcome: held when "
            "nominated, adopted when a new leader held its predecessor's again; bound, deleted, "
            "expired or lost when the nomination ended.",
            ["outcome"],
            registry=r,
        )
        self._attempts = Counter(
            "dra_operator_allocation_attempts_total",
            "Allocation attempts (a claim set on a candidate node, or a standalone claim), by "
            "outcome and, when not allocated, the blocking reason.",
            ("outcome", "reason"),
            registry=r,
        )
        self._decision = Histogram(
            "dra_operator_allocation_duration_seconds",
            "Seconds the allocator spent on one decision, by outcome.",
            ("outcome",),
            registry=r,
            buckets=DECISION_BUCKETS,
        )
        self._steps = Histogram(
            "dra_operator_allocation_search_steps",
            "Search steps the allocator took for one decision.",
            registry=r,
            buckets=STEP_BUCKETS,
        )
        self._binding = Histogram(
            "dra_operator_pod_binding_duration_seconds",
            "Seconds from a pod's creation to its binding by the operator's scheduler.",
            registry=r,
            buckets=BINDING_BUCKETS,
        )
        self._conflicts = Counter(
            "dra_operator_api_conflicts_total",
            "API writes refused with a conflict (409), by object kind.",
            ("kind",),
            registry=r,
        )
        self._retries = Counter(
            "dra_operator_api_retries_total",
            "API requests sent again, by object kind and reason.",
            ("kind", "reason"),
            registry=r,
        )
        self._relists = Counter(
            "dra_operator_watch_relists_total",
            "Times a watch listed its resource again after the initial sync (after 410 Gone "
            "or a broken stream), by resource.",
            ("resource",),
            registry=r,
        )
        self._cel_compilations = Counter(
            "dra_operator_cel_compilations_total", "CEL expressions compiled.", registry=r
        )
        self._cel_compilation_errors = Counter(
            "dra_operator_cel_compilation_errors_total",
            "CEL expressions that failed to compile.",
            registry=r,
        )
        self._cel_evaluations = Counter(
            "dra_operator_cel_evaluations_total",
            "CEL selector evaluations against a device (cache misses).",
            registry=r,
        )
        self._cel_evaluation_errors = Counter(
            "dra_operator_cel_evaluation_errors_total",
            "CEL selector evaluations that ended in a runtime error.",
            registry=r,
        )
        self._cel_hits = Counter(
            "dra_operator_cel_cache_hits_total",
            "Selector results served from the CEL result cache.",
            registry=r,
        )
        self._cel_misses = Counter(
            "dra_operator_cel_cache_misses_total",
            "Selector results not in the CEL result cache.",
            registry=r,
        )
        r.register(_CacheHitRatio(self._cel_hits, self._cel_misses))
        self._cel_source: Callable[[], CELStats] | None = None
        self._cel_seen = CELStats()
        self._hook_calls = Counter(
            "dra_operator_hook_calls_total",
            "Extension hook calls, by hook and hook point.",
            ("hook", "point"),
            registry=r,
        )
        self._hook_failures = Counter(
            "dra_operator_hook_failures_total",
            "Extension hook calls that raised or ran out of time, by hook, point and reason.",
            ("hook", "point", "reason"),
            registry=r,
        )
        self._reconciles = Counter(
            "dra_operator_reconciles_total",
            "Reconciles finished, by controller and result.",
            ("controller", "result"),
            registry=r,
        )
        self._upstream = Gauge(
            "dra_operator_upstream_component",
            "1 while an upstream component (kube-scheduler, kube-controller-manager, the "
            "routing admission policy) is seen beside the operator, else 0.",
            ("component",),
            registry=r,
        )
        self._foreign = Counter(
            "dra_operator_foreign_allocations_total",
            "Claims another scheduler allocated while the operator's scheduler ran, by the "
            "field manager that wrote the allocation.",
            ("manager",),
            registry=r,
        )
        self._unsafe = Gauge(
            "dra_operator_unsafe_configuration",
            "1 while the operator runs in a configuration docs/coexistence.md calls unsafe "
            "(devices may be allocated twice), by reason, else 0.",
            ("reason",),
            registry=r,
        )

    # -- exposition ------------------------------------------------------------------------

    def render(self) -> bytes:
        """The `/metrics` page in `CONTENT_TYPE`; runs the scrape-time callbacks."""
        self._take_cel()
        return generate_latest(_WithoutCreated(self.registry))

    # -- sources read at scrape time -------------------------------------------------------

    def count_claims(self, claims: Callable[[], Iterable[ResourceClaim]]) -> None:
        """Feed `dynamic_resource_allocation_resource_claims` (and its 1.36 name) from the
        claim cache."""
        self._claims.source = claims

    def track_cache(self, kind: str, size: Callable[[], int]) -> None:
        """Report `size()` as `dra_operator_cache_objects{kind}`; one source per kind."""
        if kind in self._caches.sources:
            raise ValueError(f"metrics: cache {kind} is already tracked")
        self._caches.sources[kind] = size

    def track_cel(self, totals: Callable[[], CELStats]) -> None:
        """Add what `totals()` counted since the previous scrape to the CEL counters.

        `totals` returns running totals from zero (the scheduler's evaluator counts in plain
        integers, so its hot path calls no metric). A new source (the next leadership term's
        evaluator) replaces the old one after the old one's last counts are taken.
        """
        self._take_cel()
        self._cel_source = totals
        self._cel_seen = CELStats()

    def _take_cel(self) -> None:
        if self._cel_source is None:
            return
        try:
            now = self._cel_source()
        except Exception:
            _log.exception(LogEvent.METRICS_SOURCE_FAILED, metric="dra_operator_cel_*")
            return
        seen, self._cel_seen = self._cel_seen, now
        self.record_cel(
            CELStats(
                **{
                    field.name: max(getattr(now, field.name) - getattr(seen, field.name), 0)
                    for field in dataclasses.fields(CELStats)
                }
            )
        )

    def workqueue(self, name: str) -> QueueMetrics:
        """The `workqueue_*{name}` recorder for one queue; see its module for where to call."""
        return self._workqueues.queue(name)

    # -- claims controller -----------------------------------------------------------------

    def claim_created(self, *, ok: bool, admin_access: bool) -> None:
        """A create request for a claim from a pod's template returned (`ok`) or failed."""
        status = "success" if ok else "failure"
        admin = bool_label(admin_access)
        self._creates.labels(
            status=status, admin_access=admin, owner_api_group="", owner_api_kind="Pod"
        ).inc()
        self._creates_136.labels(status=status, admin_access=admin).inc()

    # -- scheduler -------------------------------------------------------------------------

    def extended_claim_created(self, *, ok: bool) -> None:
        """A create request for a pod's claim for extended resources returned or failed: the
        1.36 scheduler's counter, and 1.37's shared one (as the scheduler labels it there)."""
        status = "success" if ok else "failure"
        self._scheduler_creates.labels(status=status).inc()
        self._creates.labels(
            status=status, admin_access="false", owner_api_group="", owner_api_kind="Pod"
        ).inc()

    def allocation_attempted(
        self,
        outcome: AllocationOutcome,
        *,
        seconds: float,
        steps: int,
        reason: BlockingReason | None = None,
    ) -> None:
        """One attempt; `reason` is required unless allocated, and ignored when allocated."""
        if outcome is AllocationOutcome.ALLOCATED:
            label = ""
        elif reason is None:
            raise ValueError(f"metrics: a {outcome.value} attempt needs a blocking reason")
        else:
            label = reason.value
        self._attempts.labels(outcome=outcome.value, reason=label).inc()
        self._decision.labels(outcome=outcome.value).observe(seconds)
        self._steps.observe(steps)

    def pod_bound(self, *, seconds_since_creation: float) -> None:
        self._binding.observe(seconds_since_creation)

    # -- eviction --------------------------------------------------------------------------

    def pod_evicted(self, *, seconds_after_due: float) -> None:
        """A pod was deleted; `seconds_after_due` counts from its eviction time."""
        self._deletions.inc()
        self._deletion_latency.observe(seconds_after_due)

    # -- preemption ------------------------------------------------------------------------

    def preemption_attempted(self) -> None:
        """DefaultPreemption's PostFilter ran for a pod that fits nowhere."""
        self._preemption_attempts.inc()

    def preempted(self, victims: int) -> None:
        """A preemption was carried out with `victims` pods evicted."""
        self._preemption_victims.observe(victims)

    def device_nomination(self, outcome: str) -> None:
        """A preemptor's devices were nominated (`held`, or `adopted` from an earlier leader)
        or their nomination ended (`bound`, `deleted`, `expired`, `lost`)."""
        self._nominations.labels(outcome=outcome).inc()

    # -- API writes ------------------------------------------------------------------------

    def api_conflict(self, kind: str) -> None:
        """A write of a `kind` object (`ResourceClaim`, `Pod`...) got 409 Conflict."""
        self._conflicts.labels(kind=kind).inc()

    def api_retried(self, kind: str, reason: RetryReason) -> None:
        self._retries.labels(kind=kind, reason=reason.value).inc()

    def watch_relisted(self, resource: str) -> None:
        self._relists.labels(resource=resource).inc()

    # -- CEL, hooks, controllers -----------------------------------------------------------

    def record_cel(self, stats: CELStats) -> None:
        """Add the CEL work of one allocator run (or compile) to the counters."""
        self._cel_compilations.inc(stats.compilations)
        self._cel_compilation_errors.inc(stats.compilation_errors)
        self._cel_evaluations.inc(stats.evaluations)
        self._cel_evaluation_errors.inc(stats.evaluation_errors)
        self._cel_hits.inc(stats.cache_hits)
        self._cel_misses.inc(stats.cache_misses)

    def hook_called(self, hook: str, point: str) -> None:
        """`hook` is the configured name (`module:attr`), `point` the method (`score_node`)."""
        self._hook_calls.labels(hook=hook, point=point).inc()

    def hook_failed(self, hook: str, point: str, reason: HookFailure) -> None:
        self._hook_failures.labels(hook=hook, point=point, reason=reason.value).inc()

    def reconciled(self, controller: str, result: str) -> None:
        """One reconcile ended; `result` is `controllers.Outcome`'s value."""
        self._reconciles.labels(controller=controller, result=result).inc()

    # -- coexistence -----------------------------------------------------------------------

    def upstream_seen(self, component: str, *, running: bool) -> None:
        """Whether `component` (a Lease holder or the routing policy) is there now."""
        self._upstream.labels(component=component).set(1 if running else 0)

    def unsafe_configuration(self, reason: str, *, unsafe: bool) -> None:
        """Whether the configuration named by `reason` holds now (docs/coexistence.md)."""
        self._unsafe.labels(reason=reason).set(1 if unsafe else 0)

    def foreign_allocation(self, manager: str) -> None:
        """Another field manager (`manager`) allocated a claim while our scheduler ran."""
        self._foreign.labels(manager=manager).inc()
