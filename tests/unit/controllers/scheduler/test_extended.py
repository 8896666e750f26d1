"""Extended resources backed by DRA through the scheduler, against the fake server.

A pod asking for `example.com/gpu` gets its special claim created, allocated and reserved, the
claim named in its status, then is bound; a node advertising the name natively takes the
device-plugin path; a claim left by an earlier attempt is deleted and the pod tried again; a
write failing after the creation deletes the claim (Unreserve).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from dra_operator import errors, names
from dra_operator.controllers.scheduler import STALE_CLAIM, ClassesHandle, default_framework

from .builders import NS, claim, device_class, new_state, node, pod, resource_slice, settings
from .test_scheduler import WatchedWorld, _failed, _node_of, eventually, running

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.looptime]

GPU = "example.com/gpu"


def gpu_pod(name: str, count: int = 2) -> dict[str, Any]:
    raw = pod(name)
    raw["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "100m", GPU: str(count)},
        "limits": {GPU: str(count)},
    }
    return raw


def _cluster(world: WatchedWorld, devices: int, allocatable: dict[str, str] | None = None) -> None:
    cls = device_class()
    cls["spec"]["extendedResourceName"] = GPU
    world.put("classes", cls)
    world.put("nodes", node("n1", allocatable=allocatable))
    if devices:
        world.put("slices", resource_slice("n1", devices))


def _special_claims(world: WatchedWorld) -> list[dict[str, Any]]:
    return [
        raw
        for (kind, _), raw in world.objects.items()
        if kind == "claims"
        and raw["metadata"].get("annotations", {}).get(names.EXTENDED_RESOURCE_CLAIM_ANNOTATION)
        == "true"
    ]


async def test_the_special_claim_is_created_allocated_reserved_and_named_in_the_pod() -> None:
    world = WatchedWorld()
    _cluster(world, devices=3)
    raw_pod = world.put("pods", gpu_pod("p"))
    uid = raw_pod["metadata"]["uid"]
    async with running(world) as scheduler:
        await eventually(lambda: _node_of(world, "p") == "n1")
        await scheduler.wait_for_writes()
    [created] = _special_claims(world)
    meta = created["metadata"]
    key = f"{NS}/{meta['name']}"
    assert world.calls == [
        f"create {key}",
        f"status {key}",
        f"pod status {NS}/p",
        f"bind {NS}/p n1",
    ]
    assert meta["generateName"] == "p-extended-resources-"
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": uid, "controller": True}
    ]
    assert meta["finalizers"] == [names.DELETE_PROTECTION_FINALIZER]
    assert created["spec"]["devices"]["requests"] == [
        {
            "name": "container-0-request-1",
            "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
        }
    ]
    results = created["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [
        ("container-0-request-1", "gpu-0"),
        ("container-0-request-1", "gpu-1"),
    ]
    assert created["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": uid}]
    status = world.get("pods", NS, "p")["status"]["extendedResourceClaimStatus"]
    assert status == {
        "requestMappings": [
            {"containerName": "c", "resourceName": GPU, "requestName": "container-0-request-1"}
        ],
        "resourceClaimName": meta["name"],
    }
    ledger = scheduler.state.ledger
    assert not ledger.is_in_flight(f"<extended-resources>{uid}")


async def test_a_node_advertising_the_resource_uses_its_device_plugin() -> None:
    world = WatchedWorld()
    allocatable = {"cpu": "4", "memory": "8Gi", "pods": "110", GPU: "4"}
    _cluster(world, devices=3, allocatable=allocatable)
    world.put("pods", gpu_pod("p"))
    async with running(world) as scheduler:
        await eventually(lambda: _node_of(world, "p") == "n1")
        await scheduler.wait_for_writes()
    assert world.calls == [f"bind {NS}/p n1"]
    assert _special_claims(world) == []


async def test_without_the_feature_the_resource_is_only_a_node_resource() -> None:
    world = WatchedWorld()
    _cluster(world, devices=3)
    world.put("pods", gpu_pod("p"))
    # As the app wires it: the Handle serves no DRA-backed names without the feature.
    state = replace(new_state(), framework=default_framework(handle=ClassesHandle(None)))
    chosen = replace(settings(), extended_resources=False)
    async with running(world, chosen, state) as scheduler:
        await eventually(lambda: bool(_failed(world, "p")))
        await scheduler.wait_for_writes()
    assert _failed(world, "p") == [f"0/1 nodes are available: 1 Insufficient {GPU}."]
    assert _special_claims(world) == []


async def test_too_few_devices_name_the_extended_resource_in_failed_scheduling() -> None:
    world = WatchedWorld()
    _cluster(world, devices=1)
    world.put("pods", gpu_pod("p"))
    async with running(world) as scheduler:
        await eventually(lambda: bool(_failed(world, "p")))
        await scheduler.wait_for_writes()
    [message] = _failed(world, "p")
    assert message.startswith(
        "0/1 nodes are available: 1 cannot allocate extended resource example.com/gpu "
        "(request container-0-request-1: 1/1 devices usable (2 needed)"
    )
    assert _special_claims(world) == []


async def test_a_claim_left_by_an_earlier_attempt_is_deleted_then_the_pod_scheduled() -> None:
    world = WatchedWorld()
    _cluster(world, devices=2)
    raw_pod = world.put("pods", gpu_pod("p"))
    annotations = {names.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    stale = claim("p-extended-resources-old", owner=raw_pod, annotations=annotations)
    stale["metadata"]["finalizers"] = [names.DELETE_PROTECTION_FINALIZER]
    world.put("claims", stale)
    async with running(world) as scheduler:
        await eventually(lambda: _node_of(world, "p") == "n1")
        await scheduler.wait_for_writes()
    assert f"delete {NS}/p-extended-resources-old" in world.calls
    assert any(STALE_CLAIM in message for message in _failed(world, "p"))
    [created] = _special_claims(world)
    assert created["metadata"]["name"] != "p-extended-resources-old"


class FailingOnce(WatchedWorld):
    """The first bind is refused for good (403); later ones succeed."""

    async def bind(self, body: dict[str, Any]) -> None:
        if not any(call.startswith("bind ") for call in self.calls):
            self.calls.append("bind refused")
            raise errors.APIError(403, "Forbidden", "refused")
        await super().bind(body)


async def test_a_binding_that_fails_after_the_creation_deletes_the_claim() -> None:
    world = FailingOnce()
    _cluster(world, devices=2)
    world.put("pods", gpu_pod("p"))
    async with running(world) as scheduler:
        await eventually(lambda: _node_of(world, "p") == "n1")
        await scheduler.wait_for_writes()
    first = world.calls[0].removeprefix("create ")
    assert world.calls[:6] == [
        f"create {first}",
        f"status {first}",
        f"pod status {NS}/p",
        "bind refused",
        f"update {first}",  # the finalizer off first, then the delete
        f"delete {first}",
    ]
    [created] = _special_claims(world)
    assert f"{NS}/{created['metadata']['name']}" != first
    status = world.get("pods", NS, "p")["status"]["extendedResourceClaimStatus"]
    assert status["resourceClaimName"] == created["metadata"]["name"]
