"""bench.scheduling: end-to-end DRA scheduling, dra-operator against kube-scheduler + KCM.

The workloads a–h on a fresh local control plane per system and workload, at one scale
or at several node counts with the limit system beside ours and upstream; see
docs/benchmarks.md §End-to-end scheduling and §Scale for how to read the tables.
"""

from bench.scheduling._cli import ALL_SYSTEMS, SYSTEMS, main, run
from bench.scheduling._profile import Profile, parse_collapsed
from bench.scheduling._report import machine, markdown, rows
from bench.scheduling._runner import PhaseResult, percentile, run_workload
from bench.scheduling._workloads import WORKLOADS, Phase, Workload, build

__all__ = [
    "ALL_SYSTEMS",
    "SYSTEMS",
    "WORKLOADS",
    "Phase",
    "PhaseResult",
    "Profile",
    "Workload",
    "build",
    "machine",
    "main",
    "markdown",
    "parse_collapsed",
    "percentile",
    "rows",
    "run",
    "run_workload",
]
