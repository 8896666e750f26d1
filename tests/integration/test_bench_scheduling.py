"""Smoke test of the end-to-end benchmark (bench/scheduling): one tiny workload, both systems.

Runs the same code as `make bench-e2e` (fresh control planes with audit logs, upstream
kube-scheduler + kube-controller-manager, then `dra-operator run`) on one node with ten
devices, and checks the result table's invariants, never its timings.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bench.scheduling import SYSTEMS, rows, run

from dra_operator import controlplane

pytestmark = pytest.mark.controlplane


@pytest.fixture
def binaries() -> None:
    found = controlplane.find_binaries()
    for name in ("etcd", "kube-apiserver", "kubectl", "kube-scheduler", "kube-controller-manager"):
        if not found.has(name):
            message = f"{name} missing in {found.directory}: run `make controlplane`"
            if os.environ.get("CI") == "true":
                pytest.fail(message, pytrace=False)
            pytest.skip(message)


@pytest.mark.timeout(240)
async def test_tiny_fill_on_both_systems(binaries: None, tmp_path: Path) -> None:
    results, profile = await run(["a"], 0.05, tmp_path)
    assert profile is None
    assert [(r.phase, r.system) for r in results] == [("a", s) for s in SYSTEMS]
    for r in results:
        assert (r.pods, r.bound) == (10, 10), r
        assert r.verify_exit == 0, r.verify_output
        assert r.throughput > 0
        assert r.p50_ms <= r.p90_ms <= r.p99_ms
        # Each pod needs at least its claim, its allocation and its binding written.
        assert 3 * r.bound <= r.writes <= r.requests, r
        assert r.peak_rss_mib > 0
    assert [row[1] for row in rows(results)] == ["ours", "upstream", "ours/upstream"]
    assert not any(p.exists() for p in tmp_path.glob("*/controlplane/state.json"))
