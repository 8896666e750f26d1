"""`python -m bench.scheduling`: every chosen workload on both systems, then the table.

    .venv/bin/python -m bench.scheduling [--scale 1] [--workloads a,c] [--systems ours,upstream]
        [--rate 50] [--markdown FILE] [--profile] [--out DIR]
    .venv/bin/python -m bench.scheduling --sizes 20,100,500 --systems upstream,ours,limit \
        [--plot FILE.png] [--markdown FILE]     # `make bench-scale`
    .venv/bin/python -m bench.scheduling --sizes 5000 --workloads s --rate 20 \
        --churn-rate 5 --churn-seconds 300      # `make bench-steady`

With `--sizes`, each node count runs in turn (500 and more: only a, b, e, h, i, p, s; 2,000 and
more: only s), and a table across sizes follows the per-size tables (bench/scheduling/_scale.py).
`--rate` creates pods at a fixed rate instead of as fast as the API server answers
(bench/scheduling/_creator.py); the churn of `s` always runs at `--churn-rate`.

Runs are sequential (the machine has two cores): for each workload upstream first, then ours,
each on a fresh control plane that is torn down afterwards, also on Ctrl-C or an error.
Logs, audit logs and profiles stay in --out (a new folder under /tmp by default).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.scheduling._profile import Profile, parse_collapsed
from bench.scheduling._report import machine, markdown, print_table
from bench.scheduling._runner import PhaseResult, run_workload
from bench.scheduling._scale import (
    NODES_PER_SCALE,
    SizedResult,
    plot,
    print_summary,
    scale_markdown,
    workloads_for,
)
from bench.scheduling._workloads import CHURN_RATE, CHURN_SECONDS, WORKLOADS, build
from rich.console import Console
from rich.markup import escape

__all__ = ["main", "run"]

SYSTEMS = ("upstream", "ours")
ALL_SYSTEMS = ("upstream", "ours", "limit")
"""`limit` (bench.scheduling.limit) runs only workloads of one template without placement
constraints (not c, not i): it knows nothing of affinity or spread."""
UPSTREAM_QPS = 5000


async def run(
    keys: list[str],
    scale: float,
    out: Path,
    *,
    systems: tuple[str, ...] = SYSTEMS,
    profile: bool = False,
    upstream_qps: int = UPSTREAM_QPS,
    rate: float | None = None,
    churn_rate: float = CHURN_RATE,
    churn_seconds: float = CHURN_SECONDS,
    console: Console | None = None,
    after_each: Callable[[list[PhaseResult]], None] | None = None,
) -> tuple[list[PhaseResult], Profile | None]:
    """Run `keys` × `systems`; the results in run order and the merged profile of ours.

    `rate`: the fixed creation rate in pods/s (None: as fast as possible); `churn_rate` and
    `churn_seconds` shape workload s. `after_each` is given the results so far after each
    workload on each system."""

    def say(text: str) -> None:
        if console is not None:
            console.print(text)

    results: list[PhaseResult] = []
    merged = Profile() if profile else None
    for key in keys:
        workload = build(key, scale, churn_rate=churn_rate, churn_seconds=churn_seconds)
        for system in systems:
            if system == "limit" and (len(workload.templates) != 1 or workload.placement):
                continue
            run_dir = out / f"{key}-{system}"
            spy = run_dir / "py-spy" if profile and system == "ours" else None
            started = time.monotonic()
            say(f"[bold]{key}[/] {workload.title} — {system} ({len(workload.nodes)} nodes)")
            phases = await run_workload(
                workload, system, run_dir, profile=spy, upstream_qps=upstream_qps, rate=rate
            )
            results.extend(phases)
            if phases:
                say(f"  set-up: {phases[0].setup_seconds:.1f} s")
            for r in phases:
                say(
                    f"  {r.phase}: {r.bound}/{r.pods} bound, {r.throughput:.1f} pods/s "
                    f"(created {r.created_per_s:.1f}/s), p50 {r.p50_ms:.0f} ms, "
                    f"p99 {r.p99_ms:.0f} ms, verify {r.verify_exit} "
                    f"({time.monotonic() - started:.0f} s with set-up)"
                )
                if r.note:
                    say(f"  [yellow]{escape(r.note)}[/]")
            if after_each is not None:
                after_each(list(results))
            if spy is not None and merged is not None:
                single = Profile()
                for raw in sorted(spy.glob("*.txt")):
                    lines = raw.read_text().splitlines()
                    parse_collapsed(lines, single)
                    parse_collapsed(lines, merged)
                (run_dir / "top-functions.txt").write_text(single.render())
    return results, merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scheduling", description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="1 = 20 nodes")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="e.g. a,c")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"of {','.join(ALL_SYSTEMS)}")
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--profile", action="store_true", help="ours under py-spy")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--upstream-qps",
        type=int,
        default=UPSTREAM_QPS,
        help="client QPS and burst of kube-scheduler and KCM, as scheduler_perf sets them "
        "(0: their defaults, KCM 20/30)",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="create pods at this many per second (0: as fast as the API server answers)",
    )
    parser.add_argument(
        "--churn-rate", type=float, default=CHURN_RATE, help="workload s: pods/s after the fill"
    )
    parser.add_argument(
        "--churn-seconds", type=float, default=CHURN_SECONDS, help="workload s: churn duration"
    )
    parser.add_argument("--sizes", default=None, help="node counts, e.g. 20,100,500")
    parser.add_argument("--plot", type=Path, default=None, help="PNG of CPU/pod and p99 by size")
    args = parser.parse_args(argv)
    keys = [k.strip() for k in args.workloads.split(",") if k.strip()]
    unknown = [k for k in keys if k not in WORKLOADS]
    systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    if unknown or not set(systems) <= set(ALL_SYSTEMS):
        parser.error(f"unknown workloads or systems: {unknown or systems}")
    if args.rate < 0 or args.churn_rate <= 0 or args.churn_seconds <= 0:
        parser.error("--rate must be ≥ 0, --churn-rate and --churn-seconds > 0")
    shape = {
        "rate": args.rate or None,
        "churn_rate": args.churn_rate,
        "churn_seconds": args.churn_seconds,
    }
    out = args.out or Path(tempfile.mkdtemp(prefix="dra-bench-e2e-"))
    console = Console(width=None if sys.stdout.isatty() else 220)
    host = machine()
    command = "python -m bench.scheduling " + shlex.join(argv if argv is not None else sys.argv[1:])
    console.print(f"{host}\nlogs in {out}")
    if args.sizes:
        return _by_size(args, keys, systems, out, console, command, host, shape)
    try:
        results, profile = asyncio.run(
            run(
                keys,
                args.scale,
                out,
                systems=systems,
                profile=args.profile,
                upstream_qps=args.upstream_qps,
                console=console,
                **shape,
            )
        )
    except KeyboardInterrupt:  # every control plane started so far is already down
        console.print("interrupted")
        return 130
    print_table(results, console, f"End-to-end scheduling, scale {args.scale:g}")
    if profile is not None:
        text = profile.render()
        (out / "top-functions.txt").write_text(text)
        console.print(text, markup=False, highlight=False)
    if args.markdown:
        args.markdown.write_text(markdown(results, command, host))
        console.print(f"Markdown table written to {args.markdown}")
    return 1 if any(r.verify_exit or r.bound < r.pods for r in results) else 0


def _by_size(
    args: argparse.Namespace,
    keys: list[str],
    systems: tuple[str, ...],
    out: Path,
    console: Console,
    command: str,
    host: str,
    shape: dict[str, Any],
) -> int:
    """Every size in turn, each size's table, then the table across sizes and the plot."""
    sized: list[SizedResult] = []
    sections: list[str] = []

    def write(nodes: int, results: list[PhaseResult]) -> None:
        """The markdown so far: after every workload, so a run stopped late keeps what it did."""
        if args.markdown:
            done = sized + [SizedResult(nodes, r) for r in results]
            section = f"### {nodes} nodes\n\n" + markdown(results, command, machine())
            args.markdown.write_text(scale_markdown(done) + "\n" + "\n".join([*sections, section]))

    for nodes in (int(n) for n in args.sizes.split(",") if n.strip()):
        console.print(f"[bold]{nodes} nodes[/] ({host.rpartition(', ')[0]})")
        try:
            results, _ = asyncio.run(
                run(
                    workloads_for(nodes, keys),
                    nodes / NODES_PER_SCALE,
                    out / f"{nodes}-nodes",
                    systems=systems,
                    upstream_qps=args.upstream_qps,
                    console=console,
                    after_each=functools.partial(write, nodes),
                    **shape,
                )
            )
        except KeyboardInterrupt:
            console.print("interrupted")
            return 130
        print_table(results, console, f"End-to-end scheduling, {nodes} nodes")
        write(nodes, results)
        sized += [SizedResult(nodes, r) for r in results]
        sections.append(f"### {nodes} nodes\n\n" + markdown(results, command, machine()))
        if args.plot:
            plot(sized, args.plot)
    print_summary(sized, console)
    if args.markdown:
        console.print(f"Markdown tables written to {args.markdown}")
    failed = any(s.result.verify_exit or s.result.bound < s.result.pods for s in sized)
    return 1 if failed else 0
