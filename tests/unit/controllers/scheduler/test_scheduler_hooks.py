"""The scheduler with hooks, end to end over real stores against the fake server `World`.

Covers: a `before_allocate` refusal becomes the pod's FailedScheduling event and leaves the
claim unallocated, until a change lets the hook agree; `after_allocate` sees the written
allocation once the writes are done; `score_device` changes the device chosen; a hook that
raises under `ignore` changes nothing and under `refuse` blocks with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator

import pytest

from dra_operator import names
from dra_operator.controllers.scheduler import Governor, Scheduler
from dra_operator.hooks import DeviceInfo, FailureMode, Guard, HookSet, LoadedHook
from dra_operator.model import AllocationResult, ResourceClaim

from .builders import (
    NS,
    claim,
    deliver,
    device_class,
    new_state,
    node,
    pod,
    resource_slice,
    settings,
)
from .test_scheduler import WatchedWorld, eventually

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.looptime]


class NeedsLabel:
    """Refuses claims without the label `ok=yes`; records what it saw after allocation."""

    def __init__(self) -> None:
        self.allocated: list[tuple[ResourceClaim, AllocationResult]] = []

    async def before_allocate(self, claim: ResourceClaim) -> str | None:
        return None if claim.metadata.labels.get("ok") == "yes" else "the claim is not ok"

    async def after_allocate(self, claim: ResourceClaim, result: AllocationResult) -> None:
        self.allocated.append((claim, result))


class LastFirst:
    def score_device(self, info: DeviceInfo) -> float:
        return float(info.id.device.rpartition("-")[2])


class Raises:
    async def before_allocate(self, claim: ResourceClaim) -> str | None:
        raise RuntimeError("boom")


@contextlib.asynccontextmanager
async def running(world: WatchedWorld, *hooks: LoadedHook) -> AsyncIterator[Scheduler]:
    governor = Governor(HookSet(hooks, Guard()))
    scheduler = Scheduler(new_state(), settings(), world, governor=governor)
    world.scheduler = scheduler
    deliver(world, scheduler)
    task = asyncio.create_task(scheduler.run())
    try:
        yield scheduler
    finally:
        scheduler.shut_down()
        await task


def _scene(devices: int = 2) -> WatchedWorld:
    world = WatchedWorld()
    world.put("classes", device_class())
    world.put("nodes", node("n1"))
    world.put("slices", resource_slice("n1", devices))
    return world


def _failed(world: WatchedWorld, name: str) -> list[str]:
    return [
        e.message
        for e in world.events
        if e.involved.name == name and e.reason == names.EVENT_FAILED_SCHEDULING
    ]


def _device(world: WatchedWorld, name: str) -> str | None:
    allocation = world.get("claims", NS, name).get("status", {}).get("allocation")
    if allocation is None:
        return None
    device: str = allocation["devices"]["results"][0]["device"]
    return device


async def test_a_refusal_is_reported_and_lifted_by_a_change() -> None:
    world = _scene()
    world.put("claims", claim("c"))
    world.put("pods", pod("p", claims=["c"]))
    hook = NeedsLabel()
    async with running(world, LoadedHook(name="quota", target=hook)) as scheduler:
        await eventually(lambda: bool(_failed(world, "p")))
        assert _failed(world, "p") == ["Allocation refused by hook quota: the claim is not ok."]
        assert _device(world, "c") is None
        assert not world.get("pods", NS, "p")["spec"].get("nodeName")

        labelled = copy.deepcopy(world.get("claims", NS, "c"))
        labelled["metadata"]["labels"] = {"ok": "yes"}
        world.put("claims", labelled)
        await eventually(lambda: world.get("pods", NS, "p")["spec"].get("nodeName") == "n1")
        await scheduler.wait_for_writes()
    ((seen, result),) = hook.allocated
    assert seen.metadata.name == "c" and seen.status.allocation == result
    assert [r.device for r in result.devices.results] == ["gpu-0"]


async def test_score_device_changes_the_chosen_device() -> None:
    world = _scene(devices=3)
    world.put("claims", claim("c"))
    world.put("pods", pod("p", claims=["c"]))
    async with running(world, LoadedHook(name="last", target=LastFirst())) as scheduler:
        await eventually(lambda: _device(world, "c") is not None)
        await scheduler.wait_for_writes()
    assert _device(world, "c") == "gpu-2"


@pytest.mark.parametrize(
    ("mode", "bound", "events"),
    [
        pytest.param(FailureMode.IGNORE, True, [], id="ignore"),
        pytest.param(
            FailureMode.REFUSE,
            False,
            ["Allocation refused by hook raises: the hook failed (error)."],
            id="refuse",
        ),
    ],
)
async def test_a_raising_hook_is_treated_per_its_failure_mode(
    mode: FailureMode, bound: bool, events: list[str]
) -> None:
    world = _scene()
    world.put("claims", claim("c"))
    world.put("pods", pod("p", claims=["c"]))
    hook = LoadedHook(name="raises", target=Raises(), failure_mode=mode)
    async with running(world, hook) as scheduler:
        await eventually(lambda: bool(_failed(world, "p")) or _device(world, "c") is not None)
        await scheduler.wait_for_writes()
    assert (_device(world, "c") is not None) == bound
    assert _failed(world, "p") == events
