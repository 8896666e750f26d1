"""bench/scheduling's pure parts: percentiles, py-spy profiles, audit counting, workloads,
tables, the limit system's plan, the fixed-rate creator's slots, the sizes' settings."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from bench.scheduling import WORKLOADS, PhaseResult, build, parse_collapsed, percentile, rows
from bench.scheduling._creator import Pacer, creation_rate
from bench.scheduling._report import markdown, process_peaks
from bench.scheduling._runner import exited, longest_stall, partial_groups
from bench.scheduling._scale import HEADERS, SizedResult, summary_rows, workloads_for
from bench.scheduling._system import ProcessSample, apiserver_args, count_requests, etcd_db_mib
from bench.scheduling._tracker import claim_names
from bench.scheduling._workloads import ZONE, placement_faults
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


def test_the_steady_state_workload_fills_to_90_percent_then_churns_at_its_rate() -> None:
    small = build("s", 0.05, churn_rate=2.0, churn_seconds=3.0)
    assert len(small.nodes) == 1
    assert [len(s["spec"]["devices"]) for s in small.slices] == [8]
    fill, churn = small.phases
    assert (fill.name, fill.pods, fill.rate, fill.churn) == ("s-fill", 7, None, False)
    assert (churn.name, churn.pods, churn.rate) == ("s-churn", 6, 2.0)
    assert churn.churn and churn.keep_previous and churn.in_flight is None
    big = build("s", 5000 / 20)
    assert len(big.nodes) == len(set(big.nodes)) == 5000
    assert big.phases[0].pods == 36_000  # 90 % of 5,000 × 8
    assert big.phases[1].pods == 300  # 5 pods/s for 60 s


def test_the_pacer_hands_out_slots_at_its_rate_and_none_without_one() -> None:
    now = [100.0]
    paced = Pacer(4.0, clock=lambda: now[0])
    assert [paced.next_slot() for _ in range(3)] == [100.0, 100.25, 100.5]
    now[0] = 200.0  # a creator far behind gets its late slots at once: they lie in the past
    assert paced.next_slot() == 100.75
    free = Pacer(None, clock=lambda: now[0])
    assert [free.next_slot(), free.next_slot()] == [200.0, 200.0]
    with pytest.raises(ValueError, match="positive"):
        Pacer(0.0)


def test_creation_rate_counts_intervals_between_first_and_last() -> None:
    assert creation_rate([10.0, 10.5, 11.0, 12.0]) == 1.5
    assert math.isnan(creation_rate([3.0]))


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param(100, list(WORKLOADS), id="small-every-workload"),
        pytest.param(1000, ["a", "b", "e", "h", "i", "p", "s"], id="scheduler-perf-500-node-set"),
        pytest.param(5000, ["s"], id="steady-state-only"),
    ],
)
def test_workloads_for_a_size(nodes: int, expected: list[str]) -> None:
    assert workloads_for(nodes, list(WORKLOADS)) == expected


def test_large_clusters_get_more_requests_in_flight(tmp_path: Path) -> None:
    small, large = apiserver_args(tmp_path, 500), apiserver_args(tmp_path, 5000)
    assert "--audit-log-format=json" in small
    assert not any("inflight" in a for a in small)
    assert "--max-requests-inflight=1600" in large
    assert "--max-mutating-requests-inflight=800" in large


def test_etcd_db_size_is_nan_when_etcd_does_not_answer() -> None:
    assert math.isnan(etcd_db_mib("http://127.0.0.1:9"))


def test_summary_and_markdown_report_p50_requests_and_every_process_peak() -> None:
    ours = _result(
        "ours",
        p50_ms=7.0,
        apiserver_peak_rss_mib=900.0,
        process_peak_rss_mib=(("dra-operator", 250.0), ("kube-apiserver", 900.0)),
    )
    upstream = _result(
        "upstream",
        process_peak_rss_mib=(("kube-scheduler", 300.0), ("kube-controller-manager", 200.0)),
    )
    (row,) = summary_rows([SizedResult(5000, ours), SizedResult(5000, upstream)])
    assert row[HEADERS.index("p50 ms ours")] == "7"
    assert row[HEADERS.index("API req/pod ours")] == "6.0"
    assert row[HEADERS.index("apiserver RSS MiB ours")] == "900"
    assert row[HEADERS.index("apiserver RSS MiB ours") + 1] == "—"
    assert process_peaks([ours, upstream]) == {
        "ours": {"dra-operator": 250.0, "kube-apiserver": 900.0},
        "upstream": {"kube-scheduler": 300.0, "kube-controller-manager": 200.0},
    }
    text = markdown([ours, upstream], "cmd", "host")
    assert "ours: dra-operator 250, kube-apiserver 900" in text


def test_summary_keeps_phases_in_run_order_within_a_size() -> None:
    results = [
        SizedResult(200, _result("ours", phase="s-fill")),
        SizedResult(200, _result("ours", phase="s-churn")),
        SizedResult(20, _result("ours", phase="s-fill")),
        SizedResult(20, _result("ours", phase="s-churn")),
    ]
    got = [(row[1], row[0]) for row in summary_rows(results)]
    assert got == [("20", "s-fill"), ("20", "s-churn"), ("200", "s-fill"), ("200", "s-churn")]


def test_a_component_gone_when_sampled_is_named() -> None:
    samples = {
        "kube-scheduler": ProcessSample(0.0, 0.0),
        "kube-controller-manager": ProcessSample(3.0, 155.0),
    }
    assert exited(samples) == ["kube-scheduler"]


def test_the_gang_workload_groups_pods_by_eight_and_counts_groups_bound_in_part() -> None:
    workload = build("p", 1.0)
    (phase,) = workload.phases
    assert phase.pods == 200 and phase.pods % 8 == 0
    groups = workload.pod_groups(phase.pods, "ns")
    assert len(groups) == 25
    assert groups[0]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 8}}
    assert workload.pod(9, "ns", "s")["spec"]["schedulingGroup"] == {"podGroupName": "gang-0001"}
    whole = [f"pod-{i:05d}" for i in range(16)]
    assert partial_groups(workload, whole, 0, phase.pods) == 0
    assert partial_groups(workload, [*whole, "pod-00016"], 0, phase.pods) == 1


def test_the_spread_workload_keeps_replicas_apart_and_names_a_broken_placement() -> None:
    workload = build("i", 25)  # 500 nodes, 400 pods as scheduler_perf's anti-affinity case
    (phase,) = workload.phases
    assert (len(workload.nodes), phase.pods) == (500, 400)
    pod = workload.pod(3, "ns", "s")
    assert pod["metadata"]["labels"] == {"app": "spread"}
    (term,) = pod["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    (spread,) = pod["spec"]["topologySpreadConstraints"]
    assert (spread["maxSkew"], spread["topologyKey"]) == (1, ZONE)
    zones = {labels[ZONE] for labels in workload.node_labels.values()}
    assert len(zones) == 3
    by_zone = sorted(workload.nodes, key=lambda n: workload.node_labels[n][ZONE])
    one_per_zone = {"pod-0": by_zone[0], "pod-1": by_zone[-1], "pod-2": by_zone[250]}
    assert placement_faults(workload, one_per_zone) == ""
    same_zone = {"pod-0": by_zone[0], "pod-1": by_zone[1], "pod-2": by_zone[1]}
    assert placement_faults(workload, same_zone) == "1 nodes with two pods, zone skew 3"
    assert placement_faults(build("a", 1), same_zone) == ""
