"""The event-loop stall watch: the longest late wake-up of each window is logged, small ones not."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from dra_operator.observability import watch_loop_stalls


async def test_the_longest_stall_of_each_window_is_logged_once() -> None:
    clock = [0.0]
    late = iter([0.0, 0.3, 0.01] + [0.0] * 250 + [0.04] + [0.0] * 1000)

    async def sleep(seconds: float) -> None:
        clock[0] += seconds + next(late)
        if clock[0] > 16:
            raise asyncio.CancelledError

    with capture_logs() as logs, pytest.raises(asyncio.CancelledError):
        await watch_loop_stalls(interval=0.02, window=5.0, sleep=sleep, clock=lambda: clock[0])
    stalls = [entry for entry in logs if entry["event"] == "loop.stall"]
    assert [entry["max_ms"] for entry in stalls] == [300.0]  # 40 ms is under the threshold
