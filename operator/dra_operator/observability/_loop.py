"""How long the event loop was held: the delay every watch event and write waits behind.

Everything the operator does runs on one asyncio loop, so a long synchronous stretch (a
decision, a big list parsed) delays every watch, write and probe. `watch_loop_stalls` sleeps
`interval` over and over; how much later than asked each sleep ends is how long something held
the loop. Every `window` seconds it logs `loop.stall` with the longest delay seen, when that
reached `threshold` (the benchmark reads these lines).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from dra_operator.observability._logging import LogEvent, get_logger

_log = get_logger(__name__)


async def watch_loop_stalls(
    *,
    interval: float = 0.02,
    window: float = 5.0,
    threshold: float = 0.05,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] | None = None,
) -> None:
    """Log the longest loop stall of each `window` that reached `threshold`; runs until
    cancelled. `clock` defaults to the loop's."""
    clock = clock if clock is not None else asyncio.get_running_loop().time
    worst = 0.0
    opened = clock()
    while True:
        asked = clock() + interval
        await sleep(interval)
        now = clock()
        worst = max(worst, now - asked)
        if now - opened >= window:
            if worst >= threshold:
                _log.info(LogEvent.LOOP_STALL, max_ms=round(worst * 1000, 1), window_s=window)
            worst, opened = 0.0, now
