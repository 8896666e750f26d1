"""Smoke test of the end-to-end benchmark (bench/scheduling): one tiny workload, all systems.

Runs the same code as `make bench-e2e` / `make bench-scale` (fresh control planes with audit
logs, upstream kube-scheduler + kube-controller-manager, `dra-operator run`, the limit system)
on one node with ten devices, and checks the result table's invariants, never its timings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.scheduling import ALL_SYSTEMS, rows, run
from tests.support.skipping import skip_or_fail

from dra_operator import controlplane

pytestmark = pytest.mark.controlplane


@pytest.fixture
def binaries() -> None:
    found = controlplane.find_binaries()
    for name in ("etcd", "kube-apiserver", "kubectl", "kube-scheduler", "kube-controller-manager"):
        if not found.has(name):
            skip_or_fail(f"{name} missing in {found.directory}: run `make controlplane`")


@pytest.mark.timeout(300)
async def test_tiny_fill_on_every_system(binaries: None, tmp_path: Path) -> None:
    results, profile = await run(["a"], 0.05, tmp_path, systems=ALL_SYSTEMS)
    assert profile is None
    assert [(r.phase, r.system) for r in results] == [("a", s) for s in ALL_SYSTEMS]
    for r in results:
        assert (r.pods, r.bound) == (10, 10), r
        assert r.verify_exit == 0, r.verify_output
        assert r.throughput > 0
        assert r.p50_ms <= r.p90_ms <= r.p99_ms
        # Each pod needs at least its claim, its allocation and its binding written.
        assert 3 * r.bound <= r.writes <= r.requests, r
        assert r.peak_rss_mib > 0
    (ours,) = [r for r in results if r.system == "ours"]
    assert ours.max_stall_ms >= 0  # read from the operator's log (0: no stall of 50 ms)
    assert [row[1] for row in rows(results)] == [
        "ours",
        "upstream",
        "limit",
        "ours/upstream",
        "ours/limit",
    ]
    assert not any(p.exists() for p in tmp_path.glob("*/controlplane/state.json"))


@pytest.mark.timeout(600)
async def test_tiny_steady_state_at_a_fixed_rate_on_every_system(
    binaries: None, tmp_path: Path
) -> None:
    """Workload s (fill to 90 %, then churn) with the fill created at a fixed rate."""
    results, _ = await run(
        ["s"],
        0.1,  # 2 nodes × 8 devices: 14 pods fill, 2 devices left for the churn
        tmp_path,
        systems=ALL_SYSTEMS,
        rate=20.0,
        churn_rate=2.0,
        churn_seconds=3.0,
    )
    assert [(r.phase, r.system) for r in results] == [
        (phase, system) for system in ALL_SYSTEMS for phase in ("s-fill", "s-churn")
    ]
    for r in results:
        pods, rate = (14, 20.0) if r.phase == "s-fill" else (6, 2.0)
        assert (r.pods, r.bound, r.rate) == (pods, pods, rate), r
        assert r.verify_exit == 0, r.verify_output
        assert r.created_per_s > 0
        assert r.p50_ms <= r.p90_ms <= r.p99_ms
        assert r.setup_seconds > 0
        assert r.apiserver_peak_rss_mib > 0 and r.etcd_peak_rss_mib > 0
        assert r.etcd_db_mib > 0
        assert {"kube-apiserver", "etcd"} <= {name for name, _ in r.process_peak_rss_mib}
    assert not any(p.exists() for p in tmp_path.glob("*/controlplane/state.json"))
