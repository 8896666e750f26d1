"""Smoke test of `python -m bench.allocator`: one round of one scenario on both sides.

Runs the script as docs/benchmarks.md tells a reader to (the Go benchmark binary built with
`go test -c`, then both sides on the same scenario file) at tiny settings, and checks the
Markdown row's shape and outcomes, never its timings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "match-attribute-heavy"


@pytest.mark.timeout(600)
def test_one_round_of_one_scenario_on_both_sides() -> None:
    if shutil.which("go") is None:
        reason = "go is not installed, so the upstream side of bench.allocator cannot run"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.allocator",
            "--rounds=1",
            f"--scenarios={SCENARIO}",
            "--go-benchtime=3x",
            "--runs=3",
            "--min-time=0",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=590,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith(f"| {SCENARIO} |")]
    assert len(rows) == 1, done.stdout
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    name, rounds, ours_us, upstream_us, ratio, spread, ours, upstream, load = cells
    assert (name, rounds, spread) == (SCENARIO, "1", "—")
    assert float(ours_us.replace(",", "")) > 0
    assert float(upstream_us.replace(",", "")) > 0
    assert float(ratio) > 0
    assert ours.startswith("allocated (")
    assert upstream == "allocated"
    assert "→" in load
    assert f"{SCENARIO} round 1/1" in done.stderr
