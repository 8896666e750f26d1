"""Client for the scheduler oracle in tests/oracle/scheduler (kube-scheduler v1.37.2's framework).

The oracle runs the default profile's PreFilter, Filter (every node) and PreScore/Score (the
feasible nodes) on one scenario per request, over the same JSON-lines protocol as the allocator
oracle (tests/oracle/scheduler/README.md), so one process judges a thousand scenarios.

Without Go it cannot be built: tests that need it skip locally and fail under CI=true.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.support.oracle import JSON, Oracle

BUILD_SCRIPT = Path(__file__).resolve().parents[1] / "oracle" / "scheduler" / "build.sh"


class SchedulerOracle(Oracle):
    """One running `dra-scheduler-oracle serve`."""

    def schedule(self, scenario: Mapping[str, Any]) -> JSON:
        """kube-scheduler's verdicts on `scenario` (nodes, pods, namespaces, persistentVolumes,
        persistentVolumeClaims, storageClasses, csiNodes, csiDrivers, pod, config):
        `prefilter`, `filter` per node, `scoreStatus` (only when PreScore or Score failed),
        `scores` per plugin and node (normalized, before weight) and `total` per node (the
        weighted sum)."""
        return self.request({"op": "schedule", **scenario})

    def preempt(self, scenario: Mapping[str, Any]) -> JSON:
        """kube-scheduler's DefaultPreemption on `scenario` (a `schedule` scenario plus
        podDisruptionBudgets and offset): the Filter verdicts, `potentialNodes`, `victims` per
        potential node (pods, numPDBViolations, status), `eligible`, `offset`,
        `numCandidates`, the dry run's `candidates`, the `chosen` node and the PostFilter
        `status` (tests/oracle/scheduler/README.md)."""
        return self.request({"op": "preempt", **scenario})

    def profile(self, config: Mapping[str, Any] | None = None) -> JSON:
        """`{"kubernetes": release, "plugins": {point: [{"name", "weight"?}]}}` of the profile."""
        request: JSON = {"op": "version"}
        if config is not None:
            request["config"] = dict(config)
        return self.request(request)


def build_scheduler_oracle() -> Path | None:
    """The oracle binary, built or found in its cache by its build.sh; None without Go."""
    if shutil.which("go") is None:
        return None
    done = subprocess.run(["bash", str(BUILD_SCRIPT)], stdout=subprocess.PIPE, check=False)
    if done.returncode != 0:
        pytest.fail(
            f"building the scheduler oracle failed ({BUILD_SCRIPT}, exit {done.returncode})"
        )
    return Path(done.stdout.decode().strip().splitlines()[-1])


def running_scheduler_oracle() -> Iterator[SchedulerOracle]:
    """For a fixture: yields a running oracle; skips without Go locally, fails under CI=true,
    where a skipped differential test would hide a disagreement."""
    binary = build_scheduler_oracle()
    if binary is None:
        reason = (
            "go is not installed, so the scheduler oracle (tests/oracle/scheduler) cannot be built"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    with SchedulerOracle(binary) as running:
        yield running
