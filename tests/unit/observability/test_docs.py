"""docs/metrics.md matches the registry.

Covers: the table lists exactly the families the registry exports, with their types and label
names (read from samples, after every recording call has been made once); every family is in
the table of when the running operator records it.
"""

from __future__ import annotations

import re
from pathlib import Path

from dra_operator.model import ObjectMeta, ResourceClaim
from dra_operator.observability import (
    AllocationOutcome,
    CELStats,
    Health,
    HookFailure,
    Metrics,
    RetryReason,
)

DOC = Path(__file__).resolve().parents[3] / "docs" / "metrics.md"
Row = tuple[str, str, frozenset[str]]


def documented() -> set[Row]:
    """Rows of the "The metrics" table: (name, type, label names)."""
    section = DOC.read_text().split("## The metrics", 1)[1].split("\n## ", 1)[0]
    rows: set[Row] = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        labels = frozenset(re.findall(r"`([a-z_]+)`", cells[2]))
        rows.add((cells[0].strip("`"), cells[1], labels))
    return rows


def exercised() -> Metrics:
    """A Metrics object with a sample in every family."""
    metrics = Metrics(health=Health())
    metrics.count_claims(lambda: [ResourceClaim(metadata=ObjectMeta(name="c", namespace="n"))])
    metrics.track_cache("Pod", lambda: 1)
    queue = metrics.workqueue("resource_claim")
    queue.added("k")
    queue.got("k")
    queue.done("k")
    queue.retried()
    metrics.claim_created(ok=True, admin_access=False)
    metrics.allocation_attempted(AllocationOutcome.ALLOCATED, seconds=0.001, steps=1)
    metrics.pod_bound(seconds_since_creation=1.0)
    metrics.extended_claim_created(ok=True)
    metrics.pod_evicted(seconds_after_due=1.0)
    metrics.preemption_attempted()
    metrics.preempted(2)
    metrics.device_nomination("held")
    metrics.api_conflict("Pod")
    metrics.api_retried("Pod", RetryReason.CONFLICT)
    metrics.watch_relisted("pods")
    metrics.record_cel(CELStats(compilations=1))
    metrics.hook_called("h", "score_node")
    metrics.hook_failed("h", "score_node", HookFailure.ERROR)
    metrics.reconciled("claims", "success")
    metrics.upstream_seen("kube-scheduler", running=True)
    metrics.unsafe_configuration("kube-scheduler-without-routing", unsafe=False)
    metrics.foreign_allocation("kube-scheduler")
    return metrics


def registered(metrics: Metrics) -> set[Row]:
    rows: set[Row] = set()
    for family in metrics.registry.collect():
        assert family.samples, f"{family.name} has no sample: make a call for it in exercised()"
        name = family.name + "_total" if family.type == "counter" else family.name
        labels = frozenset(key for s in family.samples for key in s.labels if key != "le")
        rows.add((name, family.type, labels))
    return rows


def test_the_table_lists_every_metric_with_its_type_and_labels() -> None:
    rows = documented()
    assert len(rows) > 20
    assert rows == registered(exercised())


def test_every_metric_says_when_the_running_operator_records_it() -> None:
    section = DOC.read_text().split("## When the running operator records them", 1)[1]
    named = re.findall(r"`([a-z_]+)(\*?)`", section.split("\n## ", 1)[0])
    exact = {name for name, star in named if not star}
    prefixes = tuple(name for name, star in named if star)
    missing = [
        name
        for name, _, _ in registered(exercised())
        if name not in exact and not name.startswith(prefixes)
    ]
    assert missing == []
