"""Scenario 5: kill storms. The operator SIGKILLed again and again while a burst is scheduled.

The pods come in waves, one per kill, each kill a seeded random 0.1-3 s after its wave was
created, so that it lands mid-burst. One replica: SIGKILLed (scheduler and claims controller
both running), each time started again under a new identity, which must wait out the dead
holder's Lease. Two replicas: the leader is SIGKILLed repeatedly under load and the standby
takes over, while a fresh replica comes up as the new standby. Either way every pod ends bound
once, one generated claim per pod, `verify` clean. Reported: kills, and the leader takeover
times (from a kill until a live replica holds the Lease) and first-write times (from a kill
until the operator's visible progress grows again, where work was left).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable

import pytest
from tests.chaos.conftest import Operators
from tests.chaos.harness import Burst, OperatorProcess, record, scale
from tests.integration.test_operator_process import holder
from tests.support.operator import wait_for

from dra_operator import controlplane
from dra_operator.kube import Client

pytestmark = pytest.mark.controlplane


def stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"max": round(max(values), 2), "mean": round(sum(values) / len(values), 2)}


async def test_sigkill_storm_on_one_replica(
    control_plane: controlplane.ControlPlaneState,
    admin_api: Client,
    shared_burst: Callable[..., Awaitable[Burst]],
    operators: Operators,
    record_property: Callable[[str, object], None],
) -> None:
    pods, kills, seed = scale(40, 200), scale(4, 20), random.randrange(1 << 30)
    rng = random.Random(seed)
    burst = await shared_burst(nodes=4, devices_per_node=pods // 4)
    group = operators(control_plane.operator_kubeconfig, burst.namespace)
    current = group.start("gen-0")
    per_wave = pods // kills
    first_writes: list[float] = []
    for generation in range(1, kills + 1):
        await burst.create((generation - 1) * per_wave, per_wave)
        await asyncio.sleep(rng.uniform(0.1, 3.0))
        OperatorProcess.kill(current)
        killed, before = time.monotonic(), await burst.progress()
        current = group.start(f"gen-{generation}")
        if before < 2 * len(burst.created):  # work is left: time its resumption
            await burst.wait_progress(before)
            first_writes.append(time.monotonic() - killed)
    figures = await burst.check(control_plane)
    record(
        record_property,
        "kill-storm-one-replica",
        runs=1,
        seed=seed,
        faults=kills,
        first_write_after_kill_s=stats(first_writes),
        **figures,
    )


async def test_leader_sigkilled_repeatedly_with_a_standby(
    control_plane: controlplane.ControlPlaneState,
    admin_api: Client,
    shared_burst: Callable[..., Awaitable[Burst]],
    operators: Operators,
    record_property: Callable[[str, object], None],
) -> None:
    pods, changes, seed = scale(40, 200), scale(3, 10), random.randrange(1 << 30)
    rng = random.Random(seed)
    burst = await shared_burst(nodes=4, devices_per_node=pods // 4)
    group = operators(control_plane.operator_kubeconfig, burst.namespace)
    replicas = {name: group.start(name) for name in ("r-0", "r-1")}
    per_wave = pods // changes
    takeovers: list[float] = []
    for change in range(changes):
        await burst.create(change * per_wave, per_wave)
        await asyncio.sleep(rng.uniform(0.1, 3.0))
        leader = await wait_for(lambda: holder(admin_api, burst.namespace), what="a leader")
        OperatorProcess.kill(replicas.pop(leader))
        killed = time.monotonic()
        successor = f"r-{change + 2}"
        replicas[successor] = group.start(successor)

        async def taken_over(dead: str = leader) -> str | None:
            current = await holder(admin_api, burst.namespace)
            return current if current in replicas and current != dead else None

        await wait_for(taken_over, timeout=120, what="a standby to take the Lease over")
        takeovers.append(time.monotonic() - killed)
    figures = await burst.check(control_plane)
    record(
        record_property,
        "kill-storm-two-replicas",
        runs=1,
        seed=seed,
        faults=changes,
        leader_takeover_s=stats(takeovers),
        **figures,
    )
