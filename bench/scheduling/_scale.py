"""The benchmark at several cluster sizes: one table across sizes, and a plot.

`--sizes 20,100,500` runs the chosen workloads at each node count (a size of 500 or more runs
only a, b, e, h and s, the workloads scheduler_perf runs at 500 nodes and the steady state;
2,000 and more only s, as ClusterLoader2 runs dra-steady-state at 5,000 nodes), every system
side by side in one run. The summary row of a phase at a size gives what the issue's goals
compare: pods/s, p50 and p99 of each system, ours/upstream and ours/limit, the CPU
milliseconds each spent per pod, API requests per pod, the peak RSS of the components and of
the API server, plus the longest event-loop stall the operator logged in the phase.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.scheduling._report import ratio
from bench.scheduling._runner import PhaseResult
from rich.console import Console
from rich.table import Table

__all__ = ["BIG_SIZE_WORKLOADS", "SizedResult", "plot", "scale_markdown", "summary_rows"]

BIG_SIZE = 500
BIG_SIZE_WORKLOADS = ("a", "b", "e", "h", "i", "p", "s")
HUGE_SIZE = 2000
HUGE_SIZE_WORKLOADS = ("s",)
NODES_PER_SCALE = 20


@dataclass(frozen=True, slots=True)
class SizedResult:
    nodes: int
    result: PhaseResult


HEADERS = (
    "phase",
    "nodes",
    "pods",
    "pods/s ours",
    "upstream",
    "limit",
    "ours/upstream",
    "ours/limit",
    "p50 ms ours",
    "upstream",
    "p99 ms ours",
    "upstream",
    "ours/upstream",
    "CPU ms/pod ours",
    "upstream",
    "limit",
    "API req/pod ours",
    "upstream",
    "limit",
    "peak RSS MiB ours",
    "upstream",
    "apiserver RSS MiB ours",
    "upstream",
    "max loop stall ms",
    "verify",
)


def workloads_for(nodes: int, keys: Sequence[str]) -> list[str]:
    """The workloads of `keys` that run at `nodes` nodes."""
    if nodes >= HUGE_SIZE:
        return [k for k in keys if k in HUGE_SIZE_WORKLOADS]
    return [k for k in keys if nodes < BIG_SIZE or k in BIG_SIZE_WORKLOADS]


def _cpu_ms(r: PhaseResult | None) -> float:
    return r.cpu_seconds * 1000 / r.bound if r is not None and r.bound else math.nan


def _get(r: PhaseResult | None, field: str) -> float:
    return float(getattr(r, field)) if r is not None else math.nan


def _f(value: float, pattern: str = "{:.1f}") -> str:
    return "—" if math.isnan(value) else pattern.format(value)


def summary_rows(results: Sequence[SizedResult]) -> list[tuple[str, ...]]:
    """One row per phase and size, phases in run order, sizes ascending."""
    grouped: dict[tuple[str, int], dict[str, PhaseResult]] = {}
    for sized in results:
        grouped.setdefault((sized.result.phase, sized.nodes), {})[sized.result.system] = (
            sized.result
        )
    table = []
    for (phase, nodes), systems in sorted(grouped.items(), key=lambda kv: kv[0][1]):
        ours, up, lim = (systems.get(n) for n in ("ours", "upstream", "limit"))
        pods = next(iter(systems.values())).pods
        verify = "/".join(str(r.verify_exit) for r in systems.values())
        table.append(
            (
                phase,
                str(nodes),
                str(pods),
                _f(_get(ours, "throughput")),
                _f(_get(up, "throughput")),
                _f(_get(lim, "throughput")),
                _f(ratio(_get(ours, "throughput"), _get(up, "throughput")), "{:.2f}×"),
                _f(ratio(_get(ours, "throughput"), _get(lim, "throughput")), "{:.2f}×"),
                _f(_get(ours, "p50_ms"), "{:.0f}"),
                _f(_get(up, "p50_ms"), "{:.0f}"),
                _f(_get(ours, "p99_ms"), "{:.0f}"),
                _f(_get(up, "p99_ms"), "{:.0f}"),
                _f(ratio(_get(ours, "p99_ms"), _get(up, "p99_ms")), "{:.2f}×"),
                _f(_cpu_ms(ours)),
                _f(_cpu_ms(up)),
                _f(_cpu_ms(lim)),
                _f(_get(ours, "requests_per_pod")),
                _f(_get(up, "requests_per_pod")),
                _f(_get(lim, "requests_per_pod")),
                _f(_get(ours, "peak_rss_mib"), "{:.0f}"),
                _f(_get(up, "peak_rss_mib"), "{:.0f}"),
                _f(_get(ours, "apiserver_peak_rss_mib"), "{:.0f}"),
                _f(_get(up, "apiserver_peak_rss_mib"), "{:.0f}"),
                _f(_get(ours, "max_stall_ms"), "{:.0f}"),
                verify,
            )
        )
    return table


def print_summary(results: Sequence[SizedResult], console: Console) -> None:
    table = Table(title="By cluster size (ours, upstream = kube-scheduler + KCM, limit)")
    for header in HEADERS:
        table.add_column(header, justify="left" if header == "phase" else "right")
    for row in summary_rows(results):
        table.add_row(*row)
    console.print(table)


def scale_markdown(results: Sequence[SizedResult]) -> str:
    lines = [
        "| " + " | ".join(HEADERS) + " |",
        "|" + "|".join("---" if h == "phase" else "---:" for h in HEADERS) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in summary_rows(results)]
    return "\n".join(lines) + "\n"


_PLOTTED: tuple[tuple[str, Callable[[PhaseResult], float]], ...] = (
    ("CPU ms per pod", _cpu_ms),
    ("p99 creation → done, ms", lambda r: r.p99_ms),
    ("pods/s", lambda r: r.throughput),
    ("peak RSS MiB (components)", lambda r: r.peak_rss_mib),
)


def plot(results: Sequence[SizedResult], path: Path) -> None:
    """Per-pod CPU, p99, pods/s and peak RSS against node count, one line per system and
    phase (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, grid = pyplot.subplots(2, 2, figsize=(12, 9))
    axes = list(grid.flat)
    lines: dict[tuple[str, str], list[tuple[int, PhaseResult]]] = {}
    for sized in results:
        r = sized.result
        lines.setdefault((r.phase, r.system), []).append((sized.nodes, r))
    styles = {"ours": "-o", "upstream": "--s", "limit": ":^"}
    for (phase, system), points in sorted(lines.items()):
        points.sort(key=lambda p: p[0])
        xs = [p[0] for p in points]
        for axis, (_, get) in zip(axes, _PLOTTED, strict=True):
            ys = [get(p[1]) for p in points]
            axis.plot(xs, ys, styles.get(system, "-"), label=f"{phase} {system}")
    for axis, (title, _) in zip(axes, _PLOTTED, strict=True):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("nodes")
        axis.set_title(title)
        axis.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=6, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
