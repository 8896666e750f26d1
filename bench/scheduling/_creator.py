"""When the bench may create its next pod: at once, or at a fixed rate.

As fast as possible (no rate), every pod is created as soon as one of the bench's concurrent
requests is free, so the pods' arrival follows how fast the API server answers, which differs
from system to system. At a fixed rate (`--rate`, scheduler_perf's throughput tests and
ClusterLoader2's tuning sets create at a set QPS) the k-th pod is created at `start + k / rate`
on every system alike; a creator that falls behind (the API server slower than the rate)
creates the late pods at once and the measured creation rate tells.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Sequence

__all__ = ["Pacer", "creation_rate"]


class Pacer:
    """Hands out creation slots `1 / rate` seconds apart from the first; none: no waiting."""

    def __init__(self, rate: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        if rate is not None and rate <= 0:
            raise ValueError(f"rate must be positive, got {rate}")
        self.rate = rate
        self._clock = clock
        self._start: float | None = None
        self._issued = 0

    def next_slot(self) -> float:
        """The moment (on the clock) the next creation may start; taking it uses it up."""
        now = self._clock()
        if self.rate is None:
            return now
        if self._start is None:
            self._start = now
        slot = self._start + self._issued / self.rate
        self._issued += 1
        return slot

    async def wait(self) -> None:
        """Sleep until the next slot."""
        delay = self.next_slot() - self._clock()
        if delay > 0:
            await asyncio.sleep(delay)


def creation_rate(moments: Sequence[float]) -> float:
    """Pods created per second between the first and the last creation (NaN under two)."""
    if len(moments) < 2:
        return math.nan
    span = max(moments) - min(moments)
    return (len(moments) - 1) / span if span > 0 else math.inf
