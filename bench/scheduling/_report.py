"""The result table: per phase, ours, upstream and the limit side by side, and the ratios
ours/upstream and ours/limit.

The same rows go to the terminal (rich) and, with `--markdown FILE`, to a Markdown table for
docs/benchmarks.md with the command, the machine and the date above it.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from bench.scheduling._runner import PhaseResult
from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = ["machine", "markdown", "print_table", "process_peaks", "rows"]

_Metric = tuple[str, Callable[[PhaseResult], float], str]
_METRICS: tuple[_Metric, ...] = (
    ("pods/s", lambda r: r.throughput, "{:.1f}"),
    ("p50 ms", lambda r: r.p50_ms, "{:.0f}"),
    ("p90 ms", lambda r: r.p90_ms, "{:.0f}"),
    ("p99 ms", lambda r: r.p99_ms, "{:.0f}"),
    ("created/s", lambda r: r.created_per_s, "{:.1f}"),
    ("API req/pod", lambda r: r.requests_per_pod, "{:.1f}"),
    ("writes/pod", lambda r: r.writes_per_pod, "{:.2f}"),
    ("CPU s", lambda r: r.cpu_seconds, "{:.1f}"),
    ("peak RSS MiB", lambda r: r.peak_rss_mib, "{:.0f}"),
    ("apiserver CPU s", lambda r: r.apiserver_cpu_seconds, "{:.1f}"),
    ("apiserver RSS MiB", lambda r: r.apiserver_peak_rss_mib, "{:.0f}"),
    ("etcd RSS MiB", lambda r: r.etcd_peak_rss_mib, "{:.0f}"),
    ("etcd DB MiB", lambda r: r.etcd_db_mib, "{:.1f}"),
)
HEADERS = ("phase", "system", "bound", *(m[0] for m in _METRICS), "verify")


def _fmt(value: float, pattern: str) -> str:
    return "—" if math.isnan(value) else pattern.format(value)


_SYSTEMS = ("ours", "upstream", "limit")
RATIOS = ("ours/upstream", "ours/limit")


def ratio(a: float, b: float) -> float:
    """a / b, NaN when either is missing or b is zero."""
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan


def rows(results: Sequence[PhaseResult]) -> list[tuple[str, ...]]:
    """Per phase a row per system, then ours/upstream and ours/limit; phases in run order."""
    by_phase: dict[str, dict[str, PhaseResult]] = {}
    for result in results:
        by_phase.setdefault(result.phase, {})[result.system] = result
    table: list[tuple[str, ...]] = []
    for phase, systems in by_phase.items():
        for name in _SYSTEMS:
            r = systems.get(name)
            if r is None:
                continue
            table.append(
                (
                    phase,
                    name,
                    f"{r.bound}/{r.pods}",
                    *(_fmt(get(r), pattern) for _, get, pattern in _METRICS),
                    str(r.verify_exit),
                )
            )
        ours = systems.get("ours")
        for label in RATIOS:
            other = systems.get(label.partition("/")[2])
            if ours is None or other is None:
                continue
            cells = [_fmt(ratio(get(ours), get(other)), "{:.2f}×") for _, get, _ in _METRICS]
            table.append((phase, label, "", *cells, ""))
    return table


def print_table(results: Sequence[PhaseResult], console: Console, title: str) -> None:
    table = Table(title=title)
    for header in HEADERS:
        table.add_column(header, justify="left" if header in ("phase", "system") else "right")
    for row in rows(results):
        style = "dim" if row[1] in RATIOS else None
        table.add_row(*row, style=style)
    console.print(table)
    for system, peaks in process_peaks(results).items():
        listed = ", ".join(f"{name} {mib:.0f}" for name, mib in peaks.items())
        console.print(f"peak RSS MiB, {system}: {listed}")
    for r in results:
        if r.note:
            console.print(f"[yellow]{r.phase}/{r.system}: {escape(r.note)}[/]")
        if r.verify_exit:
            console.print(f"[red]verify {r.phase}/{r.system} exit {r.verify_exit}[/]")
            text = r.verify_output
            if len(text) > 3000:  # long pod lists: the start names the problem, the end counts
                text = f"{text[:2000]}\n…\n{text.splitlines()[-1]}"
            console.print(text, markup=False, highlight=False)


def machine() -> str:
    """nproc, CPU model, kernel and load average, for the record."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs ({model}), Linux {platform.release()}, "
        f"Python {platform.python_version()}, load average at start {load}"
    )


def markdown(results: Sequence[PhaseResult], command: str, host: str) -> str:
    """The Markdown block for docs/benchmarks.md."""
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"Command: `{command}`  ",
        f"Machine: {host}  ",
        f"Date: {date}",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "|".join("---" if h in ("phase", "system") else "---:" for h in HEADERS) + "|",
    ]
    for row in rows(results):
        cells = [f"*{c}*" if row[1] in RATIOS and c else c for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    by_process = process_peaks(results)
    if by_process:
        lines += ["", "Peak RSS by process, MiB (the largest of the system's runs):  "]
        for system, peaks in by_process.items():
            listed = ", ".join(f"{name} {mib:.0f}" for name, mib in peaks.items())
            lines.append(f"{system}: {listed}  ")
    return "\n".join(lines) + "\n"


def process_peaks(results: Sequence[PhaseResult]) -> dict[str, dict[str, float]]:
    """Per system, each process's largest peak RSS over the phases (VmHWM is per process
    lifetime, and every workload starts a fresh control plane)."""
    found: dict[str, dict[str, float]] = {}
    for r in results:
        peaks = found.setdefault(r.system, {})
        for name, mib in r.process_peak_rss_mib:
            peaks[name] = max(peaks.get(name, 0.0), mib)
    return {system: peaks for system, peaks in found.items() if peaks}
