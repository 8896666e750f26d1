"""bench/scheduling's pure parts: percentiles, py-spy profiles, audit counting, workloads,
tables, the limit system's plan."""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

import pytest
from bench.scheduling import WORKLOADS, PhaseResult, build, parse_collapsed, percentile, rows
from bench.scheduling._runner import longest_stall
from bench.scheduling._scale import HEADERS, SizedResult, summary_rows
from bench.scheduling._system import count_requests
from bench.scheduling._tracker import claim_names
from bench.scheduling.limit import plan


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        pytest.param([], 0.5, math.nan, id="empty"),
        pytest.param([5.0], 0.99, 5.0, id="one"),
        pytest.param([float(i) for i in range(1, 101)], 0.5, 50.0, id="p50-of-100"),
        pytest.param([float(i) for i in range(1, 101)], 0.99, 99.0, id="p99-of-100"),
        pytest.param([3.0, 1.0, 2.0], 0.9, 3.0, id="unsorted"),
    ],
)
def test_percentile(values: list[float], q: float, expected: float) -> None:
    got = percentile(values, q)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_profile_counts_self_at_the_leaf_and_cumulative_once_per_stack() -> None:
    lines = [
        "main (app.py:1);work (app.py:5);work (app.py:7) 3",
        "main (app.py:1);idle (app.py:9) 1",
        "garbage",
    ]
    profile = parse_collapsed(lines)
    assert profile.total == 4
    assert profile.top("self", 1) == [("work (app.py)", 3, 0.75)]
    # `main` is under every sample: left out of the cumulative list as uninformative.
    assert dict((f, c) for f, c, _ in profile.top("cumulative", 5)) == {
        "work (app.py)": 3,
        "idle (app.py)": 1,
    }


def _event(user: str, agent: str, verb: str, at: str) -> str:
    return json.dumps(
        {
            "user": {"username": user},
            "userAgent": agent,
            "verb": verb,
            "requestReceivedTimestamp": at,
        }
    )


@pytest.mark.parametrize(
    ("ours", "expected"),
    [
        pytest.param(True, (2, 1), id="ours-by-identity"),
        pytest.param(False, (2, 2), id="upstream-by-user-agent"),
    ],
)
def test_count_requests(ours: bool, expected: tuple[int, int]) -> None:
    inside, outside = "2026-11-22T05:00:01.000000Z", "2026-11-22T05:10:00.000000Z"
    lines = [
        _event("dra-operator", "kopf/1.45", "list", inside),
        _event("dra-operator", "dra-operator", "create", inside),
        _event("dra-operator", "dra-operator", "create", outside),
        _event("admin", "kube-scheduler/v1.36.4 (linux/amd64)", "create", inside),
        _event("admin", "kube-controller-manager/v1.36.4 (linux/amd64)", "patch", inside),
        _event("admin", "dra-bench", "create", inside),
        "not json",
    ]
    start = 1_795_323_600.0  # 2026-11-22T05:00:00Z
    got = count_requests(lines, ours, start, start + 60)
    assert (got.total, got.writes) == expected


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(
            {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}},
            ["shared"],
            id="by-name",
        ),
        pytest.param(
            {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}},
            None,
            id="template-not-generated-yet",
        ),
        pytest.param(
            {
                "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]},
                "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-x"}]},
            },
            ["p-x"],
            id="template-generated",
        ),
    ],
)
def test_claim_names(pod: dict[str, Any], expected: list[str] | None) -> None:
    assert claim_names(pod) == expected


@pytest.mark.parametrize("key", sorted(WORKLOADS))
def test_workloads_scale_and_stay_within_their_devices(key: str) -> None:
    small, default = build(key, 0.05), build(key, 1)
    assert len(small.nodes) == 1
    assert len(default.nodes) == 20
    assert all(p.pods > 0 for p in default.phases)
    assert all(p.preallocate <= len(default.device_order) for p in default.phases)
    pod = default.pod(7, "ns", "sched")
    assert pod["spec"]["schedulerName"] == "sched"
    assert pod["metadata"]["name"] == "pod-00007"
    slice_names = [s["metadata"]["name"] for s in default.slices]
    assert len(set(slice_names)) == len(slice_names)


def _result(system: str, phase: str = "a", **values: float) -> PhaseResult:
    base: dict[str, Any] = dict(
        phase=phase,
        system=system,
        pods=100,
        bound=100,
        seconds=10.0,
        throughput=10.0,
        p50_ms=1.0,
        p90_ms=2.0,
        p99_ms=3.0,
        requests=600,
        writes=500,
        cpu_seconds=1.0,
        peak_rss_mib=100.0,
        apiserver_cpu_seconds=1.0,
        verify_exit=0,
        verify_output="",
    )
    return PhaseResult(**(base | values))


def test_rows_give_ours_against_upstream_and_the_limit() -> None:
    results = [
        _result("upstream", throughput=20.0),
        _result("ours"),
        _result("limit", throughput=40.0),
    ]
    table = rows(results)
    assert [r[1] for r in table] == ["ours", "upstream", "limit", "ours/upstream", "ours/limit"]
    assert table[3][3] == "0.50×" and table[4][3] == "0.25×"


def test_summary_across_sizes_reports_cpu_per_pod_and_the_longest_stall() -> None:
    results = [
        SizedResult(500, _result("ours", cpu_seconds=2.0, max_stall_ms=40.0)),
        SizedResult(500, _result("upstream", cpu_seconds=1.0)),
        SizedResult(20, _result("ours")),
    ]
    (small, big) = summary_rows(results)
    assert small[1] == "20" and big[1] == "500"
    assert big[HEADERS.index("CPU ms/pod ours")] == "20.0"
    assert big[HEADERS.index("CPU ms/pod ours") + 1] == "10.0"
    assert big[HEADERS.index("max loop stall ms")] == "40"
    assert small[HEADERS.index("limit")] == "—"


def test_longest_stall_reads_the_operators_log_lines_in_the_window() -> None:
    def line(when: str, ms: float) -> str:
        return json.dumps({"event": "loop.stall", "max_ms": ms, "timestamp": when})

    lines = [
        line("2026-11-24T06:00:00Z", 500.0),  # before the phase
        line("2026-11-24T06:00:12Z", 80.0),
        line("2026-11-24T06:00:24Z", 120.0),  # within 5 s after its end: covers the end
        '{"event": "other"}',
    ]
    start = datetime.fromisoformat("2026-11-24T06:00:10Z").timestamp()
    assert longest_stall(lines, start, start + 10) == 120.0
    assert longest_stall([], start, start + 10) == 0.0


def test_the_limit_plan_is_every_allocation_first_fit_order_would_make() -> None:
    workload = build("e", 0.1)  # 2 nodes × 10 devices, half of them rejected by the selector
    (template,) = workload.templates
    slots = plan(workload.nodes, workload.slices, workload.classes, template)
    assert [node for node, _ in slots] == ["node-000"] * 5 + ["node-001"] * 5
    devices = [a["devices"]["results"][0]["device"] for _, a in slots[:5]]
    assert devices == ["gpu-0", "gpu-2", "gpu-4", "gpu-6", "gpu-8"]
    shared = plan(*(lambda w: (w.nodes, w.slices, w.classes, w.templates[0]))(build("h", 0.05)))
    assert len(shared) == 10  # 2 NICs × 100G / 20G
    assert len({a["devices"]["results"][0]["shareID"] for _, a in shared}) == 10
