"""Scenario 3: connection faults between the operator and the API server, during a burst.

The operator reaches the session's API server only through the tests' `FaultProxy`. While
the test creates pods in waves (and deletes a few bound ones) straight at the server, the
proxy injects, in a seeded random order, a few seconds at a time with a healed second in
between: every connection reset (and new ones refused), every connection stalled (a half-open
peer: open, silent), and added latency on every chunk. After the last fault heals, every live
pod must be bound once, every deleted pod's claim gone, and `verify` clean. Reported: faults
injected, connections reset, and how long after the last heal the burst was done.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from tests.chaos.conftest import Operators, Proxies
from tests.chaos.harness import Burst, record, scale
from tests.chaos.proxy import FaultProxy

from dra_operator import controlplane

pytestmark = pytest.mark.controlplane

FAULTS = ("cut", "stall", "latency")


async def inject(proxy: FaultProxy, faults: int, rng: random.Random) -> list[str]:
    """`faults` faults of 1-4 s each, a healed 0.5-1.5 s after each; the faults, in order."""
    done = []
    for _ in range(faults):
        fault = rng.choice(FAULTS)
        if fault == "cut":
            proxy.cut()
        elif fault == "stall":
            proxy.stall()
        else:
            proxy.latency(rng.uniform(0.05, 0.5))
        done.append(fault)
        await asyncio.sleep(rng.uniform(1.0, 4.0))
        proxy.heal()
        await asyncio.sleep(rng.uniform(0.5, 1.5))
    return done


async def test_cut_stalled_and_slow_connections_during_a_burst(
    control_plane: controlplane.ControlPlaneState,
    shared_burst: Callable[..., Awaitable[Burst]],
    proxies: Proxies,
    operators: Operators,
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    pods, faults, seed = scale(40, 200), scale(6, 30), random.randrange(1 << 30)
    burst = await shared_burst(nodes=4, devices_per_node=pods // 4)
    proxy = await proxies(control_plane.server)
    kubeconfig = proxy.kubeconfig(control_plane.operator_kubeconfig, tmp_path / "proxied")
    operators(kubeconfig, burst.namespace).start("chaos")
    waves = 4
    per_wave = pods // waves

    async def create_and_delete() -> None:
        for wave in range(waves):
            await burst.create(wave * per_wave, per_wave)
            await asyncio.sleep(1.0)
            bound = [p["metadata"]["name"] for p in await burst.pods() if p["spec"].get("nodeName")]
            await burst.delete(bound[:1])

    injected, _ = await asyncio.gather(
        inject(proxy, faults, random.Random(seed)), create_and_delete()
    )
    healed = time.monotonic()
    figures = await burst.check(control_plane)
    record(
        record_property,
        "connection-faults",
        runs=1,
        seed=seed,
        faults=len(injected),
        fault_kinds={kind: injected.count(kind) for kind in FAULTS},
        connections_reset=proxy.resets,
        done_after_last_heal_s=round(time.monotonic() - healed, 2),
        **figures,
    )
