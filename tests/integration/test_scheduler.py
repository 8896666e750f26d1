"""The scheduler and claims controllers against a real kube-apiserver, as the operator identity.

The operator runs in-process (`run_operator`: kopf watches, leader election, scoped to the
test's namespace), so everything it writes goes through deploy/base's ClusterRole. It is torn
down before the namespace and the cluster-scoped objects of the test. Pods never run (no
kubelet): a pod is "done" when it is bound. `dra-operator verify` is clean after each scenario.

Covers: template → claim → allocation → binding; a shared claim reserved for every consumer;
two pods racing for the last device (one wins, the other gets FailedScheduling and is bound
once the device is free again); a concurrent writer touching claims during allocation (409s)
without double allocation; an unsatisfiable claim explained, then scheduled once a slice
appears; invalid CEL in a class reported while other pods schedule.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.operator import InProcessOperator, verify_clean

from dra_operator import controlplane, errors
from dra_operator.kube import CORE_EVENTS, PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
TEMPLATES = dra("resourceclaimtemplates")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")
DEADLINE = 60.0  # seconds a condition may take on a loaded machine before the test fails


@pytest.fixture
async def operator(run_operator: Any) -> AsyncIterator[InProcessOperator]:
    """`dra-operator run` in-process with the claims and scheduler controllers, leading."""
    yield await run_operator(controllers=frozenset({"claims", "scheduler"}))


def _driver(class_name: str) -> str:
    """Each test's own driver, so slices other tests left behind never match its classes."""
    return f"{class_name}.example.com"


def _class(name: str, expression: str | None = None) -> dict[str, Any]:
    expression = expression or f"device.driver == '{_driver(name)}'"
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def _slice(node: str, count: int, driver: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node,
            "devices": [{"name": f"gpu-{i}"} for i in range(count)],
        },
    }


def _claim_spec(class_name: str) -> dict[str, Any]:
    return {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": class_name}}]}}


def _claim(name: str, class_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": _claim_spec(class_name),
    }


def _pod(name: str, **claim_source: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "dra-operator",
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
            "resourceClaims": [{"name": "gpu", **claim_source}],
        },
    }


async def _until(check: Callable[[], Any]) -> Any:
    """Poll the API until `check()` returns something truthy (the API has no push here)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE
    while True:
        found = await check()
        if found:
            return found
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.2)


async def _node_of(api: Client, namespace: str, pod: str) -> str | None:
    answer = await api.get(PODS, pod, namespace=namespace)
    found: str | None = answer["spec"].get("nodeName")
    return found


async def _failed_scheduling(api: Client, namespace: str, pod: str) -> list[str]:
    events = await api.list(CORE_EVENTS, namespace=namespace)
    return [
        e["message"]
        for e in events.get("items") or ()
        if e["involvedObject"].get("name") == pod and e["reason"] == "FailedScheduling"
    ]


async def _allocated_devices(api: Client, namespace: str) -> list[tuple[str, str]]:
    claims = await api.list(CLAIMS, namespace=namespace)
    return [
        (r["pool"], r["device"])
        for c in claims.get("items") or ()
        for r in ((c.get("status") or {}).get("allocation") or {})
        .get("devices", {})
        .get("results", [])
    ]


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


async def test_template_claim_is_generated_allocated_and_the_pod_bound(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    gpu = _unique("gpu")
    await cluster(CLASSES, _class(gpu))
    await cluster(SLICES, _slice(node, 1, _driver(gpu)))
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "tmpl"},
        "spec": {"spec": _claim_spec(gpu)},
    }
    await admin_api.create(TEMPLATES, template, namespace=namespace)
    await admin_api.create(PODS, _pod("p", resourceClaimTemplateName="tmpl"), namespace=namespace)
    assert await _until(lambda: _node_of(admin_api, namespace, "p")) == node
    (claim,) = (await admin_api.list(CLAIMS, namespace=namespace))["items"]
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["p"]
    assert await _allocated_devices(admin_api, namespace) == [(node, "gpu-0")]
    await verify_clean(control_plane, namespace)


async def test_shared_claim_is_reserved_for_every_consumer(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    gpu = _unique("gpu")
    await cluster(CLASSES, _class(gpu))
    await cluster(SLICES, _slice(node, 1, _driver(gpu)))
    await admin_api.create(CLAIMS, _claim("shared", gpu), namespace=namespace)
    for name in ("a", "b", "c"):
        await admin_api.create(PODS, _pod(name, resourceClaimName="shared"), namespace=namespace)
    for name in ("a", "b", "c"):
        assert await _until(lambda n=name: _node_of(admin_api, namespace, n)) == node
    claim = await admin_api.get(CLAIMS, "shared", namespace=namespace)
    assert sorted(r["name"] for r in claim["status"]["reservedFor"]) == ["a", "b", "c"]
    assert await _allocated_devices(admin_api, namespace) == [(node, "gpu-0")]
    await verify_clean(control_plane, namespace)


async def test_two_pods_racing_for_the_last_device(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    gpu = _unique("gpu")
    await cluster(CLASSES, _class(gpu))
    await cluster(SLICES, _slice(node, 1, _driver(gpu)))
    for name in ("a", "b"):
        await admin_api.create(CLAIMS, _claim(f"claim-{name}", gpu), namespace=namespace)
    await asyncio.gather(
        *(
            admin_api.create(PODS, _pod(n, resourceClaimName=f"claim-{n}"), namespace=namespace)
            for n in ("a", "b")
        )
    )

    async def one_bound_one_refused() -> tuple[str, str] | None:
        nodes = {n: await _node_of(admin_api, namespace, n) for n in ("a", "b")}
        bound = [n for n, found in nodes.items() if found]
        refused = [n for n in nodes if await _failed_scheduling(admin_api, namespace, n)]
        if len(bound) == 1 and refused and refused[0] not in bound:
            return bound[0], refused[0]
        return None

    winner, loser = await _until(one_bound_one_refused)
    message = (await _failed_scheduling(admin_api, namespace, loser))[0]
    assert message.startswith("0/") and f"cannot allocate claim claim-{loser}" in message
    assert await _allocated_devices(admin_api, namespace) == [(node, "gpu-0")]
    await admin_api.delete(PODS, winner, namespace=namespace, grace_period_seconds=0)
    assert await _until(lambda: _node_of(admin_api, namespace, loser)) == node
    assert await _allocated_devices(admin_api, namespace) == [(node, "gpu-0")]
    await verify_clean(control_plane, namespace)


async def test_concurrent_writer_touching_claims_causes_no_double_allocation(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    nodes = [(await make_node())["metadata"]["name"] for _ in range(2)]
    gpu = _unique("gpu")
    await cluster(CLASSES, _class(gpu))
    for node in nodes:
        await cluster(SLICES, _slice(node, 3, _driver(gpu)))
    names = [f"p{i}" for i in range(8)]
    for name in names:
        await admin_api.create(CLAIMS, _claim(f"c-{name}", gpu), namespace=namespace)
    stop = asyncio.Event()

    async def meddle() -> int:
        touches = 0
        while not stop.is_set():
            for name in names:
                patch = {"metadata": {"labels": {"touched": str(touches)}}}
                with contextlib.suppress(errors.APIError):
                    await admin_api.patch(CLAIMS, f"c-{name}", patch, namespace=namespace)
                touches += 1
        return touches

    meddler = asyncio.create_task(meddle())
    for name in names:
        await admin_api.create(PODS, _pod(name, resourceClaimName=f"c-{name}"), namespace=namespace)

    async def bound_count() -> bool:
        found = [await _node_of(admin_api, namespace, n) for n in names]
        return sum(1 for n in found if n) == 6

    await _until(bound_count)
    stop.set()
    assert await meddler > 0
    devices = await _allocated_devices(admin_api, namespace)
    assert len(devices) == 6 and len(set(devices)) == 6
    await verify_clean(control_plane, namespace)


async def test_unsatisfiable_claim_is_explained_then_scheduled_when_a_slice_appears(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    gpu = _unique("gpu")
    await cluster(CLASSES, _class(gpu))
    await admin_api.create(CLAIMS, _claim("c", gpu), namespace=namespace)
    await admin_api.create(PODS, _pod("p", resourceClaimName="c"), namespace=namespace)
    messages = await _until(lambda: _failed_scheduling(admin_api, namespace, "p"))
    # Slices other tests publish for every node may add devices the class rejects: 0/N.
    assert "cannot allocate claim c (request gpu: 0/" in messages[0]
    await cluster(SLICES, _slice(node, 1, _driver(gpu)))
    assert await _until(lambda: _node_of(admin_api, namespace, "p")) == node
    await verify_clean(control_plane, namespace)


async def test_invalid_cel_is_reported_while_other_pods_schedule(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    good, bad = _unique("gpu"), _unique("broken")
    await cluster(CLASSES, _class(good))
    # Valid for the API server, but failing on every device: the attribute does not exist.
    await cluster(CLASSES, _class(bad, f"device.attributes['{_driver(good)}'].missing == 1"))
    await cluster(SLICES, _slice(node, 2, _driver(good)))
    await admin_api.create(CLAIMS, _claim("bad", bad), namespace=namespace)
    await admin_api.create(CLAIMS, _claim("good", good), namespace=namespace)
    await admin_api.create(PODS, _pod("bad", resourceClaimName="bad"), namespace=namespace)
    await admin_api.create(PODS, _pod("good", resourceClaimName="good"), namespace=namespace)
    assert await _until(lambda: _node_of(admin_api, namespace, "good")) == node
    messages = await _until(lambda: _failed_scheduling(admin_api, namespace, "bad"))
    assert "CEL" in messages[0]
    assert await _node_of(admin_api, namespace, "bad") is None
    await verify_clean(control_plane, namespace)


async def test_shares_of_a_multi_allocatable_device_never_exceed_its_capacity(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    """DRAConsumableCapacity: each claim takes 20G of one 100G NIC, so five fit and the sixth
    waits, and keeps waiting after the first five are written (the live ledger must count the
    shares already on the server, not only the allocator's own in one decision)."""
    node = (await make_node())["metadata"]["name"]
    nic = _unique("nic")
    driver = _driver(nic)
    await cluster(CLASSES, _class(nic))
    nic_slice = _slice(node, 1, driver)
    nic_slice["spec"]["devices"] = [
        {
            "name": "nic-0",
            "allowMultipleAllocations": True,
            "capacity": {"bandwidth": {"value": "100G"}},
        }
    ]
    await cluster(SLICES, nic_slice)
    spec = {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "exactly": {
                        "deviceClassName": nic,
                        "capacity": {"requests": {"bandwidth": "20G"}},
                    },
                }
            ]
        }
    }
    for i in range(5):
        await admin_api.create(
            CLAIMS,
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"claim-{i}"},
                "spec": spec,
            },
            namespace=namespace,
        )
        await admin_api.create(
            PODS, _pod(f"p{i}", resourceClaimName=f"claim-{i}"), namespace=namespace
        )
    for i in range(5):
        assert await _until(lambda n=f"p{i}": _node_of(admin_api, namespace, n)) == node
    await admin_api.create(
        CLAIMS,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "claim-5"},
            "spec": spec,
        },
        namespace=namespace,
    )
    await admin_api.create(PODS, _pod("p5", resourceClaimName="claim-5"), namespace=namespace)
    (message, *_) = await _until(lambda: _failed_scheduling(admin_api, namespace, "p5"))
    assert "cannot allocate claim claim-5" in message
    assert await _node_of(admin_api, namespace, "p5") is None
    assert await _allocated_devices(admin_api, namespace) == [(node, "nic-0")] * 5
    await admin_api.delete(PODS, "p0", namespace=namespace, grace_period_seconds=0)
    assert await _until(lambda: _node_of(admin_api, namespace, "p5")) == node
    await verify_clean(control_plane, namespace)
