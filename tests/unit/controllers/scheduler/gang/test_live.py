"""Gang scheduling in the live scheduler, end to end over the stores and queues against the
fake server `World`: the gang's writes happen only when it fits whole."""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from dra_operator import names
from dra_operator.cluster import ObjectKey, Store
from dra_operator.controllers.scheduler import Scheduler
from dra_operator.controllers.scheduler.gang import Gangs
from dra_operator.model import PodGroup, parse_pod_group

from ..builders import (
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
from ..test_scheduler import WatchedWorld, eventually

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.looptime]


class GroupWorld(WatchedWorld):
    """The fake server with PodGroup status patches recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.patches: list[tuple[ObjectKey, Mapping[str, Any]]] = []

    async def patch_group_status(self, key: ObjectKey, patch: Mapping[str, Any]) -> None:
        self.patches.append((key, copy.deepcopy(dict(patch))))


def _group(min_count: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": NS, "uid": "g-uid", "resourceVersion": "1"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}, **spec},
    }


def _member(name: str) -> dict[str, Any]:
    raw = pod(name, claims=[f"{name}-gpu"])
    raw["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    return raw


@contextlib.asynccontextmanager
async def running(
    world: GroupWorld, group: dict[str, Any], *, release: int = 37
) -> AsyncIterator[Scheduler]:
    groups: Store[PodGroup] = Store("podgroups", parse_pod_group)
    groups.apply("ADDED", group)
    gangs = Gangs(groups, world, release=release)
    scheduler = Scheduler(new_state(), settings(), world, gangs=gangs)
    world.scheduler = scheduler
    deliver(world, scheduler)
    task = asyncio.create_task(scheduler.run())
    try:
        yield scheduler
    finally:
        scheduler.shut_down()
        await task


def _gang_world(members: int, devices: int) -> GroupWorld:
    world = GroupWorld()
    world.put("classes", device_class())
    world.put("nodes", node("n1"))
    world.put("slices", resource_slice("n1", devices))
    for i in range(members):
        world.put("claims", claim(f"p{i}-gpu"))
        world.put("pods", _member(f"p{i}"))
    return world


def _bound(world: GroupWorld) -> list[str]:
    return sorted(
        key.name
        for (kind, key), raw in world.objects.items()
        if kind == "pods" and raw["spec"].get("nodeName")
    )


def _allocated(world: GroupWorld) -> list[str]:
    return sorted(
        key.name
        for (kind, key), raw in world.objects.items()
        if kind == "claims" and raw.get("status", {}).get("allocation")
    )


async def test_a_gang_of_four_with_room_for_three_holds_nothing_until_room_is_freed() -> None:
    world = _gang_world(4, devices=3)
    async with running(world, _group(4)) as scheduler:
        await eventually(lambda: len({e.involved.name for e in world.events}) == 4)
        await scheduler.wait_for_writes()
        assert _bound(world) == [] and _allocated(world) == []
        assert not scheduler.state.ledger.snapshot().exclusive
        texts = {e.involved.name: e.message for e in world.events}
        assert texts["p3"].startswith("0/1 nodes are available")
        # The cycle's text, then PodGroupPostFilter's: DynamicResources found nothing to free
        # (Unschedulable) and DefaultPreemption no lower-priority pod (its status ends it).
        assert texts["p0"] == (
            "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, "
            "pod group preemption: No preemption victims found for incoming preemptor"
        )
        assert {e.reason for e in world.events} == {names.EVENT_FAILED_SCHEDULING}
        condition = world.patches[-1][1]["status"]["conditions"][0]
        assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")

        world.put("slices", resource_slice("n1", 4))
        await eventually(lambda: len(_bound(world)) == 4)
        await scheduler.wait_for_writes()
    assert _allocated(world) == ["p0-gpu", "p1-gpu", "p2-gpu", "p3-gpu"]
    condition = world.patches[-1][1]["status"]["conditions"][0]
    assert (condition["status"], condition["reason"]) == ("True", "Scheduled")


async def test_post_filter_deallocates_a_claim_allocated_for_a_node_that_is_gone() -> None:
    """PodGroupPostFilter: p0's claim, allocated for node n2 (not in the cluster) and reserved
    for nobody, is deallocated by the failed cycle; the next cycle places the gang on n1."""
    world = _gang_world(2, devices=2)
    stale = copy.deepcopy(world.objects[("claims", ObjectKey(NS, "p0-gpu"))])
    stale["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "d", "pool": "n2", "device": "dev-0"}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
                ]
            },
        }
    }
    world.put("claims", stale)
    async with running(world, _group(2)) as scheduler:
        await eventually(lambda: len(_bound(world)) == 2)
        await scheduler.wait_for_writes()
    failed = [e for e in world.events if e.reason == names.EVENT_FAILED_SCHEDULING]
    texts = {e.involved.name: e.message for e in reversed(failed)}  # each member's first
    assert texts["p0"].startswith("0/1 nodes are available")
    assert texts["p1"] == (  # not tried: the cycle stopped at p0 (PlacementFeasible)
        "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, "
        "pod group preemption: No preemption victims found for incoming preemptor"
    )
    held = world.objects[("claims", ObjectKey(NS, "p0-gpu"))]["status"]["allocation"]
    assert held["devices"]["results"][0]["pool"] != "n2"


async def test_on_1_36_every_member_is_tried_and_the_condition_is_podgroupscheduled() -> None:
    world = _gang_world(4, devices=3)
    async with running(world, _group(4), release=36) as scheduler:
        await eventually(lambda: len({e.involved.name for e in world.events}) == 4)
        await scheduler.wait_for_writes()
        assert _bound(world) == [] and _allocated(world) == []
        texts = {e.involved.name: e.message for e in world.events}
        assert texts["p0"] == "waiting for minCount pods from a gang to be scheduled"
        assert texts["p3"].startswith("0/1 nodes are available")
        condition = world.patches[-1][1]["status"]["conditions"][0]
        assert condition["type"] == "PodGroupScheduled"
        assert (condition["status"], condition["message"]) == ("False", "")

        world.put("slices", resource_slice("n1", 4))
        await eventually(lambda: len(_bound(world)) == 4)
        await scheduler.wait_for_writes()
    condition = world.patches[-1][1]["status"]["conditions"][0]
    assert (condition["type"], condition["status"]) == ("PodGroupScheduled", "True")


async def test_a_shared_claim_is_allocated_once_and_reserved_for_every_member() -> None:
    world = GroupWorld()
    world.put("classes", device_class())
    world.put("nodes", node("n1"))
    world.put("slices", resource_slice("n1", 1))
    world.put("claims", claim("shared"))
    for i in range(3):
        raw = pod(f"p{i}", claims=["shared"])
        raw["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        world.put("pods", raw)
    async with running(world, _group(3)) as scheduler:
        await eventually(lambda: len(_bound(world)) == 3)
        await scheduler.wait_for_writes()
    stored = world.get("claims", NS, "shared")
    assert len(stored["status"]["allocation"]["devices"]["results"]) == 1
    assert sorted(r["name"] for r in stored["status"]["reservedFor"]) == ["p0", "p1", "p2"]
    assert [c for c in world.calls if c.startswith("update")] == [f"update {NS}/shared"]


async def test_a_gang_short_of_pods_waits_without_an_event() -> None:
    world = _gang_world(2, devices=3)
    async with running(world, _group(3)) as scheduler:
        await scheduler.wait_for_writes()
        await asyncio.sleep(1)
        assert _bound(world) == [] and world.events == []
        world.put("claims", claim("p2-gpu"))
        world.put("pods", _member("p2"))
        await eventually(lambda: len(_bound(world)) == 3)


async def test_a_composite_group_is_reported_as_not_supported() -> None:
    world = _gang_world(1, devices=1)
    group = _group(1, parentCompositePodGroupName="top")
    async with running(world, group) as scheduler:
        await eventually(lambda: bool(world.events))
        await scheduler.wait_for_writes()
    assert _bound(world) == []
    assert world.events[0].message == (
        "PodGroup default/g belongs to CompositePodGroup top: composite pod groups are not "
        "supported by dra-operator"
    )


async def test_a_gang_waits_silently_until_its_members_claims_exist() -> None:
    world = _gang_world(1, devices=2)
    late = pod("late", templates={"gpu": None})  # its claim is not generated yet
    late["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    late = world.put("pods", late)
    async with running(world, _group(2)) as scheduler:
        await scheduler.wait_for_writes()
        await asyncio.sleep(1)
        assert _bound(world) == [] and world.events == [] and world.patches == []
        world.put("claims", claim("late-gpu", owner=late))
        recorded = copy.deepcopy(world.get("pods", NS, "late"))
        recorded["status"] = {
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "late-gpu"}]
        }
        world.put("pods", recorded)
        await eventually(lambda: _bound(world) == ["late", "p0"])
