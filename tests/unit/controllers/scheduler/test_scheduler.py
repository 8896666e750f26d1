"""The scheduler end to end over real stores and queues, against the fake server `World`.

The world plays every write back through the stores as the watch would, soon after the write
(`call_soon`), so decisions run while writes and watch events are still in flight. Asserted is
the state of the world (allocations, bindings, events), never call timings.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import pytest

from dra_operator import errors, names
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import Scheduler, Settings, State, WorkKey

from .builders import (
    NS,
    World,
    claim,
    deliver,
    device_class,
    new_state,
    node,
    pod,
    resource_slice,
    settings,
)

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.looptime]


class WatchedWorld(World):
    """Every write is delivered to the scheduler's stores on the next loop iteration."""

    def __init__(self) -> None:
        super().__init__()
        self.scheduler: Scheduler | None = None

    def put(self, kind: str, raw: dict[str, Any]) -> dict[str, Any]:
        stored = super().put(kind, raw)
        if self.scheduler is not None:
            asyncio.get_running_loop().call_soon(deliver, self, self.scheduler)
        return stored

    def delete(self, kind: str, namespace: str, name: str) -> None:
        del self.objects[(kind, ObjectKey(namespace, name))]
        if self.scheduler is not None:
            asyncio.get_running_loop().call_soon(deliver, self, self.scheduler)


@contextlib.asynccontextmanager
async def running(
    world: WatchedWorld, chosen: Settings | None = None, state: State | None = None
) -> AsyncIterator[Scheduler]:
    scheduler = Scheduler(state or new_state(), chosen or settings(), world)
    world.scheduler = scheduler
    deliver(world, scheduler)
    task = asyncio.create_task(scheduler.run())
    try:
        yield scheduler
    finally:
        scheduler.shut_down()
        await task


async def eventually(condition: Callable[[], bool]) -> None:
    """Wait (on the loop's fake clock) until `condition` holds; fail after a long while."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never held")


def _node_of(world: World, name: str) -> str | None:
    found: str | None = world.get("pods", NS, name)["spec"].get("nodeName")
    return found


def _status(world: World, name: str) -> Mapping[str, Any]:
    status: Mapping[str, Any] = world.get("claims", NS, name).get("status", {})
    return status


def _allocated_devices(world: World) -> list[tuple[str, str]]:
    return [
        (r["pool"], r["device"])
        for (kind, _), raw in world.objects.items()
        if kind == "claims"
        for r in raw.get("status", {}).get("allocation", {}).get("devices", {}).get("results", [])
    ]


def _cluster(world: World, **devices: int) -> None:
    world.put("classes", device_class())
    for name, count in devices.items():
        world.put("nodes", node(name))
        if count:
            world.put("slices", resource_slice(name, count))


def _failed(world: World, name: str) -> list[str]:
    return [
        e.message
        for e in world.events
        if e.involved.name == name and e.reason == names.EVENT_FAILED_SCHEDULING
    ]


async def test_claim_is_allocated_reserved_and_the_pod_bound_in_order() -> None:
    world = WatchedWorld()
    _cluster(world, n1=2)
    world.put("claims", claim("c"))
    raw_pod = world.put("pods", pod("p", claims=["c"]))
    async with running(world) as scheduler:
        await eventually(lambda: _node_of(world, "p") == "n1")
        await scheduler.wait_for_writes()
    assert world.calls == [f"update {NS}/c", f"status {NS}/c", f"bind {NS}/p n1"]
    stored = world.get("claims", NS, "c")
    assert names.DELETE_PROTECTION_FINALIZER in stored["metadata"]["finalizers"]
    assert stored["status"]["reservedFor"] == [
        {"resource": "pods", "name": "p", "uid": raw_pod["metadata"]["uid"]}
    ]
    assert _allocated_devices(world) == [("n1", "gpu-0")]
    assert [e.reason for e in world.events] == [names.EVENT_SCHEDULED]
    assert not scheduler.state.ledger.is_in_flight(stored["metadata"]["uid"])


async def test_generated_claim_is_waited_for_then_scheduled() -> None:
    world = WatchedWorld()
    _cluster(world, n1=1)
    raw_pod = world.put("pods", pod("p", templates={"gpu": None}))
    async with running(world) as scheduler:
        scheduler.controller.enqueue(WorkKey("pod", NS, "p"))
        await eventually(lambda: len(scheduler.controller.queue) == 0)
        assert _node_of(world, "p") is None and world.events == []
        world.put("claims", claim("p-gpu-x1", owner=raw_pod))
        updated = copy.deepcopy(world.get("pods", NS, "p"))
        updated["status"] = {
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x1"}]
        }
        world.put("pods", updated)
        await eventually(lambda: _node_of(world, "p") == "n1")


async def test_shared_claim_is_reserved_for_every_consumer_on_one_node() -> None:
    world = WatchedWorld()
    _cluster(world, n1=1, n2=1)
    world.put("claims", claim("shared"))
    for name in ("a", "b", "c"):
        world.put("pods", pod(name, claims=["shared"]))
    async with running(world):
        await eventually(lambda: all(_node_of(world, n) for n in ("a", "b", "c")))
    assert {_node_of(world, n) for n in ("a", "b", "c")} == {"n1"}
    assert [r["name"] for r in _status(world, "shared")["reservedFor"]] == ["a", "b", "c"]
    assert _allocated_devices(world) == [("n1", "gpu-0")]


async def test_two_pods_racing_for_the_last_device_one_wins_the_other_waits() -> None:
    world = WatchedWorld()
    _cluster(world, n1=1)
    world.put("claims", claim("ca"))
    world.put("claims", claim("cb"))
    world.put("pods", pod("a", claims=["ca"]))
    world.put("pods", pod("b", claims=["cb"]))
    async with running(world) as scheduler:
        await eventually(lambda: _node_of(world, "a") == "n1" and _failed(world, "b") != [])
        await scheduler.wait_for_writes()
        assert _node_of(world, "b") is None
        assert _failed(world, "b") == [
            "0/1 nodes are available: "
            "1 cannot allocate claim cb (request gpu: 0/1 devices usable: 1 in use)."
        ]
        assert _allocated_devices(world) == [("n1", "gpu-0")]
        # The claims controller's part when a deleted: deallocate its claim, delete the pod.
        world.delete("pods", NS, "a")
        released = copy.deepcopy(world.get("claims", NS, "ca"))
        released["status"] = {}
        world.put("claims", released)
        await eventually(lambda: _node_of(world, "b") == "n1")
    assert _allocated_devices(world) == [("n1", "gpu-0")]


async def test_the_queue_decides_a_higher_priority_pod_first_prioritysort() -> None:
    world = WatchedWorld()
    _cluster(world, n1=1)
    # delivered (and queued) in name order: a-low, b-mid, c-high; decided the other way round
    for name, priority in (("a-low", None), ("b-mid", 5), ("c-high", 10)):
        world.put("claims", claim(f"c-{name}"))
        raw = pod(name, claims=[f"c-{name}"])
        if priority is not None:
            raw["spec"]["priority"] = priority
        world.put("pods", raw)
    async with running(world) as scheduler:
        await eventually(lambda: _failed(world, "a-low") != [] and _failed(world, "b-mid") != [])
        await scheduler.wait_for_writes()
    assert [_node_of(world, n) for n in ("a-low", "b-mid", "c-high")] == [None, None, "n1"]


async def test_a_concurrent_writer_causes_409s_and_the_claim_is_decided_again() -> None:
    world = WatchedWorld()
    _cluster(world, n1=2)
    world.put("claims", claim("c"))
    world.put("pods", pod("p", claims=["c"]))
    touched: list[str] = []

    def meddle(kind: str, body: Mapping[str, Any]) -> None:
        if len(touched) < 2:  # the finalizer write and then the status write meet a 409
            touched.append(kind)
            world.touch(NS, "c")

    world.before_write = meddle
    async with running(world) as scheduler:
        await eventually(lambda: _node_of(world, "p") == "n1")
        await scheduler.wait_for_writes()
    stored = world.get("claims", NS, "c")
    assert stored["metadata"]["labels"] == {"touched": "yes"}  # the other writer's change kept
    assert len(_allocated_devices(world)) == 1
    assert touched == ["update", "update"]  # first decision, then the re-decision
    assert scheduler.conflicts == 2
    assert world.calls.count(f"update {NS}/c") == 3 and world.calls.count(f"status {NS}/c") == 1
    assert _failed(world, "p") == []
    assert not scheduler.state.ledger.is_in_flight(stored["metadata"]["uid"])


async def test_many_pods_never_share_a_device_while_writes_are_in_flight() -> None:
    world = WatchedWorld()
    _cluster(world, n1=3, n2=3)
    for i in range(8):
        world.put("claims", claim(f"c{i}"))
        world.put("pods", pod(f"p{i}", claims=[f"c{i}"]))
    async with running(world) as scheduler:
        await eventually(
            lambda: (
                sum(1 for i in range(8) if _node_of(world, f"p{i}")) == 6
                and all(_failed(world, f"p{i}") for i in range(8) if not _node_of(world, f"p{i}"))
            )
        )
        await scheduler.wait_for_writes()
    devices = _allocated_devices(world)
    assert len(devices) == 6 and len(set(devices)) == 6


async def test_a_binding_that_fails_for_now_keeps_the_claim_and_retries() -> None:
    world = WatchedWorld()
    _cluster(world, n1=1)
    world.put("claims", claim("c"))
    world.put("pods", pod("p", claims=["c"], cpu="1"))
    world.fail_bind = errors.APIServerError(503, "ServiceUnavailable", "etcd is unhappy")
    async with running(world) as scheduler:
        await eventually(lambda: _failed(world, "p") != [])
        assert _failed(world, "p")[0] == "binding rejected: etcd is unhappy"
        assert (
            scheduler.state.node_infos.node_of(world.get("pods", NS, "p")["metadata"]["uid"])
            is None
        )
        world.fail_bind = None
        await eventually(lambda: _node_of(world, "p") == "n1")
    # The claim kept its allocation and reservation: the retry only bound the pod.
    assert _allocated_devices(world) == [("n1", "gpu-0")]
    assert len(_status(world, "c")["reservedFor"]) == 1
    assert world.calls.count(f"status {NS}/c") == 1


async def test_a_binding_that_cannot_succeed_is_unreserved_and_deallocated() -> None:
    world = WatchedWorld()
    _cluster(world, n1=1)
    world.put("claims", claim("c"))
    world.put("pods", pod("p", claims=["c"], cpu="1"))
    world.fail_bind = errors.APIForbiddenError(403, "Forbidden", "pods/binding is forbidden")
    async with running(world) as scheduler:
        await eventually(lambda: world.calls.count(f"bind {NS}/p n1") >= 2)
        assert _failed(world, "p")[0] == "binding rejected: pods/binding is forbidden"
        world.fail_bind = None
        await eventually(lambda: _node_of(world, "p") == "n1")
        await scheduler.wait_for_writes()
    # Every failed bind took the reservation and the allocation back (upstream's Unreserve),
    # so each retry allocated afresh; the last one kept them.
    binds = world.calls.count(f"bind {NS}/p n1")
    assert world.calls.count(f"status {NS}/c") == 2 * binds - 1
    assert _allocated_devices(world) == [("n1", "gpu-0")]
    assert len(_status(world, "c")["reservedFor"]) == 1


async def test_unreserve_keeps_the_allocation_other_consumers_use() -> None:
    world = WatchedWorld()
    _cluster(world, n1=1)
    world.put("claims", claim("shared"))
    world.put("pods", pod("a", claims=["shared"]))
    async with running(world) as scheduler:
        await eventually(lambda: _node_of(world, "a") == "n1")
        await scheduler.wait_for_writes()
        world.fail_bind = errors.APINotFoundError(404, "NotFound", 'pods "b" not found')
        world.put("pods", pod("b", claims=["shared"]))
        await eventually(lambda: _failed(world, "b") != [])
        await eventually(lambda: len(_status(world, "shared")["reservedFor"]) == 1)
        world.delete("pods", NS, "b")
        await scheduler.wait_for_writes()
    assert [r["name"] for r in _status(world, "shared")["reservedFor"]] == ["a"]
    assert _allocated_devices(world) == [("n1", "gpu-0")]


async def test_an_unsatisfiable_pod_schedules_once_a_slice_appears() -> None:
    world = WatchedWorld()
    _cluster(world, n1=0)
    world.put("claims", claim("c"))
    world.put("pods", pod("p", claims=["c"]))
    async with running(world):
        await eventually(lambda: _failed(world, "p") != [])
        assert _failed(world, "p") == [
            "0/1 nodes are available: 1 cannot allocate claim c (request gpu: 0/0 devices usable)."
        ]
        world.put("slices", resource_slice("n1", 1))
        await eventually(lambda: _node_of(world, "p") == "n1")


async def test_invalid_cel_fails_one_pod_while_others_schedule() -> None:
    world = WatchedWorld()
    _cluster(world, n1=2)
    world.put("classes", device_class("broken", "device.driver =="))
    world.put("claims", claim("bad", class_name="broken"))
    world.put("claims", claim("good"))
    world.put("pods", pod("bad", claims=["bad"]))
    world.put("pods", pod("good", claims=["good"]))
    async with running(world):
        await eventually(lambda: _node_of(world, "good") == "n1" and _failed(world, "bad") != [])
    assert "CEL compile error" in _failed(world, "bad")[0]


async def test_pod_bound_without_us_gets_its_claim_allocated_on_its_node() -> None:
    world = WatchedWorld()
    _cluster(world, n1=1, n2=1)
    world.put("claims", claim("c"))
    world.put("pods", pod("p", claims=["c"], node_name="n2", scheduler="default-scheduler"))
    async with running(world) as scheduler:
        await eventually(lambda: bool(_status(world, "c").get("reservedFor")))
        await scheduler.wait_for_writes()
    assert _allocated_devices(world) == [("n2", "gpu-0")]
    assert not any(call.startswith("bind") for call in world.calls)


async def test_immediate_claim_is_allocated_without_a_consumer() -> None:
    world = WatchedWorld()
    _cluster(world, n1=1)
    world.put(
        "claims",
        claim("c", annotations={names.ALLOCATE_ANNOTATION: names.ALLOCATE_IMMEDIATE}),
    )
    async with running(world):
        await eventually(lambda: bool(_allocated_devices(world)))
    assert "reservedFor" not in _status(world, "c")


class LostAnswerWorld(WatchedWorld):
    """The first status write lands, but its answer is lost (the connection broke) and the
    watch is down: only a read shows the server's state."""

    def __init__(self, read_failures: list[errors.APIError]) -> None:
        super().__init__()
        self.lose_next_answer = True
        self.watch_down = False
        self.read_failures = read_failures  # what the reads after the lost answer get first

    async def get_claim(self, key: ObjectKey) -> Mapping[str, Any] | None:
        if self.read_failures:
            raise self.read_failures.pop(0)
        return await super().get_claim(key)

    def put(self, kind: str, raw: dict[str, Any]) -> dict[str, Any]:
        stored = World.put(self, kind, raw)
        if self.scheduler is not None:
            asyncio.get_running_loop().call_soon(self._watch)
        return stored

    def _watch(self) -> None:
        if not self.watch_down and self.scheduler is not None:
            deliver(self, self.scheduler)

    async def update_claim_status(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        if not self.lose_next_answer:
            return await super().update_claim_status(body)
        self.lose_next_answer = False
        self.watch_down = True
        await super().update_claim_status(body)
        raise errors.APIServerError(0, "Unreachable", "connection reset by peer")


@pytest.mark.parametrize(
    "read_failures",
    [
        pytest.param([], id="read-back-at-once"),
        pytest.param(
            [
                errors.APIServerError(0, "Unreachable", "connection refused"),
                errors.APIForbiddenError(403, "Forbidden", "RBAC not loaded yet"),
            ],
            id="server-restarting",
        ),
    ],
)
async def test_a_write_whose_answer_is_lost_keeps_its_devices_until_read_back(
    read_failures: list[errors.APIError],
) -> None:
    """Found by tests/chaos/test_connection_faults.py: the allocation landed, the scheduler
    rolled it back on the transport error and gave the device to the next claim. And by
    tests/chaos/test_restarts.py: a read-back that gave up (a restarted apiserver answers 403
    until its RBAC is loaded) left the allocation in flight for good, its pod waiting."""
    world = LostAnswerWorld(read_failures)
    _cluster(world, n1=1)
    world.put("claims", claim("a"))
    world.put("claims", claim("b"))
    world.put("pods", pod("pa", claims=["a"]))
    world.put("pods", pod("pb", claims=["b"]))
    async with running(world) as scheduler:
        await eventually(lambda: bool(_node_of(world, "pa") or _node_of(world, "pb")))
        await scheduler.wait_for_writes()
        world.watch_down = False
        deliver(world, scheduler)
        await eventually(lambda: len(scheduler.controller.queue) == 0)
        await scheduler.wait_for_writes()
    assert _allocated_devices(world) == [("n1", "gpu-0")]
    assert _node_of(world, "pa") == "n1" and _node_of(world, "pb") is None
