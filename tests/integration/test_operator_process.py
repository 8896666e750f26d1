"""`dra-operator run` as a process: restarts and leader failover, on the local control plane.

Covers: an operator SIGKILLed in the middle of a burst of 30 pods and started again leaves
exactly one generated claim per pod claim (the orphan of an interrupted creation is adopted,
not duplicated), and, with the scheduler running, binds every pod with no device allocated
twice; of two replicas exactly one leads, and when it is SIGKILLed the other takes
the Lease over and finishes the work.

Conditions are polled with timeouts (`wait_for`); the processes run under the operator
kubeconfig, i.e. only the deploy/ ClusterRole.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from tests.integration.test_operator_claims import (
    TEMPLATES,
    claim_of,
    generated_claims,
    template,
)
from tests.integration.test_scheduler import CLASSES, SLICES
from tests.support.controlplane import NodeFactory, Spawned
from tests.support.dra_objects import (
    claim_spec,
    consumer_pod,
    device_class,
    driver_of,
    gpus,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import verify_clean, wait_for

from dra_operator import controlplane
from dra_operator.errors import APINotFoundError
from dra_operator.kube import LEASES, PODS, Client

pytestmark = pytest.mark.controlplane

Start = Callable[..., Spawned]


def kill(spawned: Spawned) -> None:
    os.killpg(spawned.proc.pid, signal.SIGKILL)
    spawned.wait(timeout=10)


async def holder(api: Client, namespace: str) -> str | None:
    try:
        lease = await api.get(LEASES, "dra-operator", namespace=namespace)
    except APINotFoundError:
        return None
    return (lease.get("spec") or {}).get("holderIdentity") or None


async def all_published(api: Client, namespace: str, count: int) -> bool:
    pods = (await api.list(PODS, namespace=namespace))["items"]
    published = [p for p in pods if (p.get("status") or {}).get("resourceClaimStatuses")]
    return len(published) == count


async def test_sigkill_mid_burst_and_restart_leaves_one_claim_per_pod(
    admin_api: Client,
    namespace: str,
    operator_process: Start,
    record_property: Callable[[str, object], None],
    control_plane: controlplane.ControlPlaneState,
) -> None:
    first = operator_process("first")
    await wait_for(lambda: holder(admin_api, namespace), what="the first operator to lead")
    await admin_api.create(TEMPLATES, template("tmpl"), namespace=namespace)

    async def create(index: int) -> dict[str, Any]:
        return await admin_api.create(
            PODS, consumer_pod(f"p-{index:02d}", template="tmpl"), namespace=namespace
        )

    created = list(await asyncio.gather(*(create(i) for i in range(10))))

    async def some_claims() -> int:
        return len(await generated_claims(admin_api, namespace))

    await wait_for(some_claims, what="the first claims")
    kill(first)
    record_property("claims_at_kill", await some_claims())  # of 10: mid-burst when < 10
    created += await asyncio.gather(*(create(i) for i in range(10, 30)))

    operator_process("second")
    await wait_for(
        lambda: all_published(admin_api, namespace, 30),
        timeout=120,
        what="every pod's claim to be published",
    )

    claims = await generated_claims(admin_api, namespace)
    owners = Counter(c["metadata"]["ownerReferences"][0]["uid"] for c in claims)
    assert len(claims) == 30
    assert set(owners) == {p["metadata"]["uid"] for p in created}
    assert set(owners.values()) == {1}
    for p in created:
        name = await claim_of(admin_api, namespace, p["metadata"]["name"])
        claim = next(c for c in claims if c["metadata"]["name"] == name)
        assert claim["metadata"]["ownerReferences"][0]["uid"] == p["metadata"]["uid"]
    await verify_clean(control_plane, namespace)


def leaders(replicas: dict[str, Spawned]) -> list[str]:
    """The replicas whose log says they acquired the Lease."""
    return sorted(
        name for name, spawned in replicas.items() if "leader.acquired" in spawned.output()
    )


async def test_two_replicas_one_leads_and_the_other_takes_over(
    admin_api: Client,
    namespace: str,
    operator_process: Start,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    replicas = {"alpha": operator_process("alpha"), "beta": operator_process("beta")}
    leader = await wait_for(lambda: holder(admin_api, namespace), what="a leader")
    await admin_api.create(TEMPLATES, template("tmpl"), namespace=namespace)
    await admin_api.create(PODS, consumer_pod("before", template="tmpl"), namespace=namespace)
    await wait_for(lambda: claim_of(admin_api, namespace, "before"), what="the leader's work")
    assert leaders(replicas) == [leader]

    kill(replicas[leader])
    await admin_api.create(PODS, consumer_pod("after", template="tmpl"), namespace=namespace)

    async def new_leader() -> str | None:
        current = await holder(admin_api, namespace)
        return current if current not in (None, leader) else None

    successor = await wait_for(new_leader, what="the follower to take the Lease over")
    await wait_for(lambda: claim_of(admin_api, namespace, "after"), what="the successor's work")

    assert successor == ({"alpha", "beta"} - {leader}).pop()
    assert leaders(replicas) == ["alpha", "beta"]
    assert len(await generated_claims(admin_api, namespace)) == 2
    await verify_clean(control_plane, namespace)


async def test_sigkill_mid_scheduling_burst_schedules_everything_once(
    admin_api: Client,
    namespace: str,
    operator_process: Start,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    record_property: Callable[[str, object], None],
    control_plane: controlplane.ControlPlaneState,
) -> None:
    """Killed between deciding and writing, the operator must not lose or double a device."""
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    nodes = [(await make_node())["metadata"]["name"] for _ in range(2)]
    for node in nodes:
        await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(16)))
    body = {"metadata": {"name": "tmpl"}, "spec": {"spec": claim_spec(gpu)}}
    await admin_api.create(TEMPLATES, body, namespace=namespace)
    first = operator_process("first")
    await wait_for(lambda: holder(admin_api, namespace), what="the first operator to lead")

    async def create(index: int) -> dict[str, Any]:
        manifest = scheduler_pod(f"p-{index:02d}", template="tmpl")
        return await admin_api.create(PODS, manifest, namespace=namespace)

    async def bound() -> list[dict[str, Any]]:
        pods = (await admin_api.list(PODS, namespace=namespace))["items"]
        return [p for p in pods if p["spec"].get("nodeName")]

    created = list(await asyncio.gather(*(create(i) for i in range(15))))
    await wait_for(bound, what="the first pods to be bound")
    kill(first)
    record_property("bound_at_kill", len(await bound()))  # of 15: mid-burst when < 15
    created += await asyncio.gather(*(create(i) for i in range(15, 30)))
    operator_process("second")

    async def all_bound() -> bool:
        return len(await bound()) == 30

    await wait_for(all_bound, timeout=180, what="every pod to be bound")
    claims = await generated_claims(admin_api, namespace)
    assert len(claims) == 30
    owners = Counter(c["metadata"]["ownerReferences"][0]["uid"] for c in claims)
    assert set(owners) == {p["metadata"]["uid"] for p in created}
    assert set(owners.values()) == {1}
    devices = Counter(
        (r["pool"], r["device"])
        for c in claims
        for r in c["status"]["allocation"]["devices"]["results"]
    )
    assert len(devices) == 30
    assert set(devices.values()) == {1}
    for c in claims:
        reserved = [r["uid"] for r in c["status"]["reservedFor"]]
        assert reserved == [c["metadata"]["ownerReferences"][0]["uid"]]
    await verify_clean(control_plane, namespace)
