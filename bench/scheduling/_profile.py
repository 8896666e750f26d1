"""Top functions of the operator from py-spy's raw (collapsed-stack) output.

py-spy (pinned in constraints.txt as a dev extra) samples the operator process from outside
at 100 Hz without changing its code or its timing much, which an in-process profiler
(cProfile, pyinstrument) would not; idle time in the event loop is left out by py-spy itself.
Each raw line is `frame;frame;...;frame count` with frames `function (file:line)`. Self time
counts the leaf frame; cumulative time counts every function once per stack.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

__all__ = ["Profile", "parse_collapsed"]

_EVERYWHERE = 0.95
_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>.*?)(?::\d+)?\)$")


def _function(frame: str) -> str:
    """`name (path:line)` → `name (short/path)`, lines merged."""
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    path = m["file"]
    for marker in ("site-packages/", "/operator/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{m['func']} ({path})"


class Profile:
    """Sample counts per function, self and cumulative."""

    def __init__(self) -> None:
        self.total = 0
        self.self_samples: Counter[str] = Counter()
        self.cumulative: Counter[str] = Counter()

    def add(self, stack: list[str], count: int) -> None:
        functions = [_function(f) for f in stack]
        self.total += count
        if functions:
            self.self_samples[functions[-1]] += count
        for name in set(functions):
            self.cumulative[name] += count

    def top(self, kind: str, n: int) -> list[tuple[str, int, float]]:
        """(function, samples, share of all samples) for the n largest by `kind`.

        Cumulative leaves out the frames under every sample (the CLI, asyncio.run, the event
        loop), which say nothing about where the time goes.
        """
        counter = self.self_samples if kind == "self" else self.cumulative
        found = [(f, c, c / self.total) for f, c in counter.most_common() if self.total]
        if kind != "self":
            found = [entry for entry in found if entry[2] < _EVERYWHERE]
        return found[:n]

    def render(self, n: int = 25) -> str:
        out = [f"{self.total} samples (100 Hz, busy threads only)"]
        for kind in ("self", "cumulative"):
            out.append(f"\ntop {n} by {kind} time:")
            for function, count, share in self.top(kind, n):
                out.append(f"  {share:6.1%} {count:7d}  {function}")
        return "\n".join(out) + "\n"


def parse_collapsed(lines: Iterable[str], into: Profile | None = None) -> Profile:
    """Add py-spy raw lines to `into` (a new Profile by default)."""
    profile = into or Profile()
    for line in lines:
        stack, _, count = line.rstrip().rpartition(" ")
        if stack and count.isdigit():
            profile.add(stack.split(";"), int(count))
    return profile
