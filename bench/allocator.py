"""Our allocator against upstream's Go allocator on the same scenarios, in one run.

    .venv/bin/python -m bench.allocator [--rounds 5] [--go-benchtime 1s] [--runs 10]
        [--min-time 1] [--scenarios a,b] [--markdown FILE]

Scenarios (`bench.allocator_scenarios`) are oracle "allocate" requests written into a temporary
folder; the Go benchmark reads them through DRA_ORACLE_SCENARIOS, so both sides run the very
same files. `--scenarios` picks some by file stem.

Method, for a machine shared with other work: tests/oracle's benchmarks are compiled once
(`go test -c`); then each scenario gets `--rounds` rounds, and each round measures upstream
(`BenchmarkAllocate/<scenario>/full`, NewAllocator + Allocate: Go's mean ns/claim over
`--go-benchtime`) and ours (the mean µs per claim of `allocate()`: pool gathering, search,
results, over at least `--runs` calls and `--min-time` seconds) back to back, Go first in odd
rounds and ours first in even ones. A row reports the median of each side over the rounds, the
median and the low–high range of the per-round ratios, both outcomes (upstream may hit its 10 s
filter timeout on adversarial input: then one round is enough), and the 1-minute load average
when the row started and ended. Progress goes to stderr; the Markdown table for
docs/benchmarks.md to stdout (a rich table before it on a terminal).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from bench.allocator_scenarios import ROOT, write_scenarios
from rich.console import Console
from rich.table import Table

from dra_operator.allocator import Allocation, CELSelectors, Features, Ledger, Node, allocate
from dra_operator.cel import SelectorCache
from dra_operator.errors import AllocationInputError
from dra_operator.model import (
    FrozenMap,
    parse_device_class,
    parse_resource_claim,
    parse_resource_slice,
)

ORACLE = ROOT / "tests" / "oracle"
# How the oracle words upstream's filter timeout (the scheduler's text, tests/oracle/allocate.go).
GO_TIMEOUT = "timed out trying to allocate devices"
_KEYS = {
    "adminAccess": "admin_access",
    "prioritizedList": "prioritized_list",
    "partitionableDevices": "partitionable_devices",
    "deviceTaints": "device_taints",
    "deviceBindingAndStatus": "device_binding_and_status",
    "consumableCapacity": "consumable_capacity",
    "listTypeAttributes": "list_type_attributes",
}


# -- measuring ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GoRound:
    """One run of upstream's benchmark on one scenario: Go's mean over `-test.benchtime`."""

    us_per_claim: float
    allocated: bool
    error: str | None = None  # upstream's error text, e.g. its filter timeout

    @property
    def outcome(self) -> str:
        if self.error is not None:
            return self.error
        return "allocated" if self.allocated else "not allocated"

    @property
    def timed_out(self) -> bool:
        return self.error is not None and GO_TIMEOUT in self.error


@dataclass(frozen=True, slots=True)
class OursRound:
    """Our allocator on one scenario for one round: the mean call, as Go's ns/op is a mean
    (pauses for garbage collection included on both sides)."""

    us_per_claim: float
    outcome: str
    steps: int


_GO_RESULT = re.compile(
    r"^BenchmarkAllocate/(?P<name>\S+)/full(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+"
    r"(?P<allocated>[\d.]+) allocated\s+(?P<ns>[\d.]+) ns/claim",
    re.MULTILINE,
)
_GO_ERROR = re.compile(r"^\s+\S+:\d+: (?P<name>\S+): upstream error: (?P<text>.*)$", re.MULTILINE)


def parse_go(output: str, name: str) -> GoRound | None:
    """The "full" result for `name` in `-test.v` benchmark output; None when it has none."""
    result = next((m for m in _GO_RESULT.finditer(output) if m["name"] == name), None)
    if result is None:
        return None
    error = next((m["text"] for m in _GO_ERROR.finditer(output) if m["name"] == name), None)
    return GoRound(
        us_per_claim=float(result["ns"]) / 1000,
        allocated=float(result["allocated"]) > 0,
        error=error,
    )


def build_go_benchmark(folder: Path) -> Path:
    """Compile tests/oracle's benchmarks once, so no measurement waits for the Go linker."""
    if shutil.which("go") is None:
        raise SystemExit("go is not installed: the upstream side (tests/oracle) needs it")
    binary = folder / "oracle.test"
    done = subprocess.run(
        ["go", "test", "-c", "-o", str(binary), "."],
        cwd=ORACLE,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"go test -c in {ORACLE} failed:\n{done.stdout}{done.stderr}")
    return binary


def go_round(binary: Path, scenario: Path, benchtime: str) -> GoRound:
    """Upstream's NewAllocator + Allocate ("full") on one scenario, as the test binary times it.

    `-test.v` makes the benchmark's log lines, which carry upstream's error text, appear.
    """
    name = scenario.stem
    done = subprocess.run(
        [
            str(binary),
            "-test.run",
            "^$",
            "-test.bench",
            f"^BenchmarkAllocate$/^{re.escape(name)}$/^full$",
            "-test.benchtime",
            benchtime,
            "-test.timeout",
            "30m",
            "-test.v",
        ],
        cwd=ORACLE,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "DRA_ORACLE_SCENARIOS": str(scenario.parent)},
    )
    found = parse_go(done.stdout, name)
    if done.returncode != 0 or found is None:
        raise SystemExit(
            f"upstream benchmark of {name} failed (exit {done.returncode}):\n"
            f"{done.stdout}{done.stderr}"
        )
    return found


class Ours:
    """Our allocator on one scenario; the request is parsed once, as the Go side decodes once.

    The compiled-selector cache lives as long as the scenario (the scheduler keeps it too);
    each call gets a fresh evaluator and search, like upstream's NewAllocator.
    """

    def __init__(self, path: Path) -> None:
        request = json.loads(path.read_text())
        self.features = Features(**{_KEYS[k]: v for k, v in request["features"].items()})
        self.classes = [parse_device_class(c) for c in request["classes"]]
        self.slices = [parse_resource_slice(s) for s in request["slices"]]
        self.claims = [parse_resource_claim(c) for c in request["claims"]]
        allocated = [parse_resource_claim(c) for c in request["allocated"]]
        meta = request["node"]["metadata"]
        self.node = Node(name=meta["name"], labels=FrozenMap(meta.get("labels") or {}))
        self.ledger = Ledger.from_claims(
            allocated, consumable_capacity=self.features.consumable_capacity
        )
        self.cache = SelectorCache()
        self.call()  # compiles the selectors, as upstream's benchmark allocates once untimed

    def call(self) -> Allocation:
        return allocate(
            self.claims,
            classes=self.classes,
            slices=self.slices,
            node=self.node,
            features=self.features,
            selectors=CELSelectors(self.features, self.cache),
            ledger=self.ledger,
        )

    def round(self, runs: int, min_time: float) -> OursRound:
        """At least `runs` calls and at least `min_time` seconds (like Go's -test.benchtime),
        so that a short burst of load cannot cover the whole round."""
        timings: list[float] = []
        got: Allocation | AllocationInputError | None = None
        until = time.perf_counter() + min_time
        while len(timings) < runs or time.perf_counter() < until:
            started = time.perf_counter()
            try:
                got = self.call()
            except AllocationInputError as err:
                got = err
            timings.append(time.perf_counter() - started)
        us = statistics.fmean(timings) * 1e6 / max(len(self.claims), 1)
        if isinstance(got, Allocation):
            summary = got.explanation.summary if got.explanation else "not allocated"
            return OursRound(us, "allocated" if got.is_allocated else summary, got.steps)
        return OursRound(us, f"error: {got}", 0)


@dataclass(slots=True)
class Row:
    """Every round of one scenario, and the machine's load around them."""

    name: str
    go: list[GoRound] = field(default_factory=list)
    ours: list[OursRound] = field(default_factory=list)
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average at start and end

    @property
    def ratios(self) -> list[float]:
        return [o.us_per_claim / g.us_per_claim for o, g in zip(self.ours, self.go, strict=True)]

    @property
    def stopped_early(self) -> bool:
        """One round was enough: upstream ran into its filter timeout."""
        return any(g.timed_out for g in self.go)


def measure(
    name: str,
    go: Callable[[], GoRound],
    ours: Callable[[], OursRound],
    rounds: int,
    say: Callable[[str], None] = lambda _: None,
) -> Row:
    """`rounds` rounds of both sides back to back; Go first in even rounds, ours in odd ones.

    Alternating the order makes a rising or falling load hit both sides alike. Once upstream
    times out, a further round would only cost another 20 s to learn the same thing.
    """
    row = Row(name, load=(os.getloadavg()[0], 0.0))
    for i in range(rounds):
        if i % 2 == 0:
            g = go()
            o = ours()
        else:
            o = ours()
            g = go()
        row.go.append(g)
        row.ours.append(o)
        say(
            f"{name} round {i + 1}/{rounds}: ours {o.us_per_claim:,.0f} µs/claim, "
            f"upstream {g.us_per_claim:,.0f}, ratio {_ratio(row.ratios[-1])}"
        )
        if g.timed_out:
            break
    row.load = (row.load[0], os.getloadavg()[0])
    return row


# -- reporting ---------------------------------------------------------------------------------

COLUMNS = (
    "scenario",
    "rounds",
    "ours µs/claim",
    "upstream µs/claim",
    "ratio ours/upstream",
    "ratio low–high",
    "ours",
    "upstream",
    "load",
)


def _ratio(value: float) -> str:
    """Two decimals; two significant digits below 0.01 (adversarial rows), never an exponent."""
    if value >= 0.01 or value <= 0:
        return f"{value:.2f}"
    return f"{value:.{1 - math.floor(math.log10(value))}f}"


def cells(row: Row) -> list[str]:
    """One table row: medians over the rounds, the ratio's median and spread, the outcomes."""
    ratios = row.ratios
    o, g = row.ours[-1], row.go[-1]
    rounds = f"{len(ratios)} (upstream timeout)" if row.stopped_early else str(len(ratios))
    spread = f"{_ratio(min(ratios))}–{_ratio(max(ratios))}" if len(ratios) > 1 else "—"
    return [
        row.name,
        rounds,
        f"{statistics.median(r.us_per_claim for r in row.ours):,.0f}",
        f"{statistics.median(r.us_per_claim for r in row.go):,.0f}",
        _ratio(statistics.median(ratios)),
        spread,
        f"{o.outcome} ({o.steps} step{'' if o.steps == 1 else 's'})",
        g.outcome,
        f"{row.load[0]:.1f} → {row.load[1]:.1f}",
    ]


def markdown(rows: list[Row], settings: str) -> str:
    lines = [
        f"| {' | '.join(COLUMNS)} |",
        "|---|---:|---:|---:|---:|---:|---|---|---:|",
        *(f"| {' | '.join(cells(row))} |" for row in rows),
        "",
        settings,
    ]
    if any(row.stopped_early for row in rows):
        lines.append(
            "Rows marked (upstream timeout) ran one round only: upstream hit its filter "
            "timeout, which another round would only repeat."
        )
    return "\n".join(lines)


def print_rich(rows: list[Row], settings: str) -> None:
    table = Table(*COLUMNS, title="our allocator against upstream's", caption=settings)
    for row in rows:
        table.add_row(*cells(row))
    Console().print(table)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds per scenario")
    parser.add_argument("--go-benchtime", default="1s", help="Go's -test.benchtime per round")
    parser.add_argument("--runs", type=int, default=10, help="ours: at least this many calls")
    parser.add_argument("--min-time", type=float, default=1.0, help="ours: and this long (s)")
    parser.add_argument("--scenarios", default="", help="e.g. consumable-capacity,… (all)")
    parser.add_argument("--markdown", type=Path, help="also write the Markdown table here")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    say = partial(print, file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="dra-bench-") as tmp:
        folder = Path(tmp)
        scenarios = write_scenarios(folder)
        chosen = [s.strip() for s in args.scenarios.split(",") if s.strip()] or list(scenarios)
        unknown = sorted(set(chosen) - set(scenarios))
        if unknown:
            parser.error(f"unknown scenarios {unknown}; known: {', '.join(scenarios)}")
        say(f"building the upstream benchmark binary in {ORACLE} …")
        binary = build_go_benchmark(folder)
        load = os.getloadavg()[0]
        rows = []
        for name in scenarios:
            if name in chosen:
                ours = Ours(scenarios[name])
                rows.append(
                    measure(
                        name,
                        partial(go_round, binary, scenarios[name], args.go_benchtime),
                        partial(ours.round, args.runs, args.min_time),
                        args.rounds,
                        say,
                    )
                )
    settings = (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"load average (1 min) {load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end; "
        f"per round upstream -test.benchtime {args.go_benchtime}, ours at least {args.runs} "
        f"calls and {args.min_time:g} s."
    )
    if sys.stdout.isatty():
        print_rich(rows, settings)
    table = markdown(rows, settings)
    print(table)
    if args.markdown is not None:
        args.markdown.write_text(table + "\n")


if __name__ == "__main__":
    main()
