"""`kube.Backoff`: client-go's doubling delay, capped, and back to the start after a success."""

from __future__ import annotations

import asyncio

import pytest

from dra_operator import kube


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.looptime
async def test_the_delay_doubles_to_its_cap_and_resets() -> None:
    loop = asyncio.get_running_loop()
    backoff = kube.Backoff(0.5, 3.0)
    slept = []
    for _ in range(5):
        start = loop.time()
        await backoff.wait()
        slept.append(round(loop.time() - start, 3))
    assert slept == [0.5, 1.0, 2.0, 3.0, 3.0]
    backoff.reset()
    assert backoff.delay == 0.5
