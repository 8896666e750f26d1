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
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import (
    claim_spec,
    claim_template,
    device_class,
    driver_of,
    gpus,
    resource_claim,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import InProcessOperator, failed_scheduling, verify_clean, wait_for

from dra_operator import controlplane, errors
from dra_operator.kube import NODES, PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
TEMPLATES = dra("resourceclaimtemplates")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")


@pytest.fixture
async def operator(run_operator: Any) -> AsyncIterator[InProcessOperator]:
    """`dra-operator run` in-process with the claims and scheduler controllers, leading."""
    yield await run_operator(controllers=frozenset({"claims", "scheduler"}))


async def _node_of(api: Client, namespace: str, pod: str) -> str | None:
    answer = await api.get(PODS, pod, namespace=namespace)
    found: str | None = answer["spec"].get("nodeName")
    return found


async def _allocated_devices(api: Client, namespace: str) -> list[tuple[str, str]]:
    claims = await api.list(CLAIMS, namespace=namespace)
    return [
        (r["pool"], r["device"])
        for c in claims.get("items") or ()
        for r in ((c.get("status") or {}).get("allocation") or {})
        .get("devices", {})
        .get("results", [])
    ]


async def test_template_claim_is_generated_allocated_and_the_pod_bound(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(1)))
    await admin_api.create(TEMPLATES, claim_template("tmpl", claim_spec(gpu)), namespace=namespace)
    await admin_api.create(PODS, scheduler_pod("p", template="tmpl"), namespace=namespace)
    assert await wait_for(lambda: _node_of(admin_api, namespace, "p")) == node
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
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(1)))
    await admin_api.create(CLAIMS, resource_claim("shared", claim_spec(gpu)), namespace=namespace)
    for name in ("a", "b", "c"):
        await admin_api.create(PODS, scheduler_pod(name, claim="shared"), namespace=namespace)
    for name in ("a", "b", "c"):
        assert await wait_for(lambda n=name: _node_of(admin_api, namespace, n)) == node
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
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(1)))
    for name in ("a", "b"):
        await admin_api.create(
            CLAIMS, resource_claim(f"claim-{name}", claim_spec(gpu)), namespace=namespace
        )
    await asyncio.gather(
        *(
            admin_api.create(PODS, scheduler_pod(n, claim=f"claim-{n}"), namespace=namespace)
            for n in ("a", "b")
        )
    )

    async def one_bound_one_refused() -> tuple[str, str] | None:
        nodes = {n: await _node_of(admin_api, namespace, n) for n in ("a", "b")}
        bound = [n for n, found in nodes.items() if found]
        refused = [n for n in nodes if await failed_scheduling(admin_api, namespace, n)]
        if len(bound) == 1 and refused and refused[0] not in bound:
            return bound[0], refused[0]
        return None

    winner, loser = await wait_for(one_bound_one_refused)
    message = (await failed_scheduling(admin_api, namespace, loser))[0]
    assert message.startswith("0/") and f"cannot allocate claim claim-{loser}" in message
    assert await _allocated_devices(admin_api, namespace) == [(node, "gpu-0")]
    await admin_api.delete(PODS, winner, namespace=namespace, grace_period_seconds=0)
    assert await wait_for(lambda: _node_of(admin_api, namespace, loser)) == node
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
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    for node in nodes:
        await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(3)))
    names = [f"p{i}" for i in range(8)]
    for name in names:
        await admin_api.create(
            CLAIMS, resource_claim(f"c-{name}", claim_spec(gpu)), namespace=namespace
        )
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
        await admin_api.create(PODS, scheduler_pod(name, claim=f"c-{name}"), namespace=namespace)

    async def bound_count() -> bool:
        found = [await _node_of(admin_api, namespace, n) for n in names]
        return sum(1 for n in found if n) == 6

    await wait_for(bound_count)
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
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    await admin_api.create(CLAIMS, resource_claim("c", claim_spec(gpu)), namespace=namespace)
    await admin_api.create(PODS, scheduler_pod("p", claim="c"), namespace=namespace)
    messages = await wait_for(lambda: failed_scheduling(admin_api, namespace, "p"))
    # Slices other tests publish for every node may add devices the class rejects: 0/N.
    assert "cannot allocate claim c (request gpu: 0/" in messages[0]
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(1)))
    assert await wait_for(lambda: _node_of(admin_api, namespace, "p")) == node
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
    good, bad = unique_name("gpu"), unique_name("broken")
    await cluster(CLASSES, device_class(good))
    # Valid for the API server, but failing on every device: the attribute does not exist.
    await cluster(
        CLASSES, device_class(bad, f"device.attributes['{driver_of(good)}'].missing == 1")
    )
    await cluster(SLICES, resource_slice(node, driver_of(good), gpus(2)))
    await admin_api.create(CLAIMS, resource_claim("bad", claim_spec(bad)), namespace=namespace)
    await admin_api.create(CLAIMS, resource_claim("good", claim_spec(good)), namespace=namespace)
    await admin_api.create(PODS, scheduler_pod("bad", claim="bad"), namespace=namespace)
    await admin_api.create(PODS, scheduler_pod("good", claim="good"), namespace=namespace)
    assert await wait_for(lambda: _node_of(admin_api, namespace, "good")) == node
    messages = await wait_for(lambda: failed_scheduling(admin_api, namespace, "bad"))
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
    nic = unique_name("nic")
    driver = driver_of(nic)
    await cluster(CLASSES, device_class(nic))
    nic_0 = {
        "name": "nic-0",
        "allowMultipleAllocations": True,
        "capacity": {"bandwidth": {"value": "100G"}},
    }
    await cluster(SLICES, resource_slice(node, driver, [nic_0]))
    spec = claim_spec(nic, capacity={"requests": {"bandwidth": "20G"}})
    for i in range(5):
        await admin_api.create(CLAIMS, resource_claim(f"claim-{i}", spec), namespace=namespace)
        await admin_api.create(
            PODS, scheduler_pod(f"p{i}", claim=f"claim-{i}"), namespace=namespace
        )
    for i in range(5):
        assert await wait_for(lambda n=f"p{i}": _node_of(admin_api, namespace, n)) == node
    await admin_api.create(CLAIMS, resource_claim("claim-5", spec), namespace=namespace)
    await admin_api.create(PODS, scheduler_pod("p5", claim="claim-5"), namespace=namespace)
    (message, *_) = await wait_for(lambda: failed_scheduling(admin_api, namespace, "p5"))
    assert "cannot allocate claim claim-5" in message
    assert await _node_of(admin_api, namespace, "p5") is None
    assert await _allocated_devices(admin_api, namespace) == [(node, "nic-0")] * 5
    await admin_api.delete(PODS, "p0", namespace=namespace, grace_period_seconds=0)
    assert await wait_for(lambda: _node_of(admin_api, namespace, "p5")) == node
    await verify_clean(control_plane, namespace)


async def test_a_claim_skipping_node_operations_needs_a_node_declaring_the_feature(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    """1.37 (DRAOptionalNodeOperations, on in the control plane): a claim allocated on a device
    whose result lists `skipNodeOperations` is unavailable on a node whose
    status.declaredFeatures lacks the feature. A 1.36 server does not store the field, so
    there the first node by name takes the pod."""
    prefix = unique_name("n")
    lacking = (await make_node(f"{prefix}-a"))["metadata"]["name"]
    declaring = (await make_node(f"{prefix}-b"))["metadata"]["name"]
    minor = controlplane.minor_of(control_plane.version)
    if minor >= 37:
        features = {"status": {"declaredFeatures": ["DRAOptionalNodeOperations"]}}
        await admin_api.patch(NODES, declaring, features, subresource="status")
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    fabric = resource_slice(declaring, driver_of(gpu), gpus(1), name=gpu, pool=gpu)
    del fabric["spec"]["nodeName"]
    fabric["spec"]["allNodes"] = True
    await cluster(SLICES, fabric)
    await admin_api.create(CLAIMS, resource_claim("net", claim_spec(gpu)), namespace=namespace)
    claim = await admin_api.get(CLAIMS, "net", namespace=namespace)
    claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    claim = await admin_api.update(CLAIMS, claim)
    result = {"request": "gpu", "driver": driver_of(gpu), "pool": gpu, "device": "gpu-0"}
    claim["status"] = {
        "allocation": {"devices": {"results": [{**result, "skipNodeOperations": ["*"]}]}}
    }
    stored = await admin_api.update(CLAIMS, claim, subresource="status")
    kept = stored["status"]["allocation"]["devices"]["results"][0].get("skipNodeOperations")
    assert kept == (["*"] if minor >= 37 else None)
    await admin_api.create(PODS, scheduler_pod("p", claim="net"), namespace=namespace)
    expected = declaring if minor >= 37 else lacking
    assert await wait_for(lambda: _node_of(admin_api, namespace, "p")) == expected
    await verify_clean(control_plane, namespace)
