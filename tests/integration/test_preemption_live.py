"""Preemption by the running operator on the real kube-apiserver, under deploy/'s RBAC.

A low-priority pod holds the only cpu room of a node; a high-priority pod with a claim
arrives. The scheduler finds no node, runs PostFilter (DefaultPreemption): the low pod gets
the DisruptionTarget condition, a graceful DELETE and a `Preempted` Event; the high pod is
nominated (`status.nominatedNodeName`), and bound once the victim is gone. No kubelet runs, so
the test finishes the victim's deletion as the kubelet would. A pod with `preemptionPolicy:
Never` preempts nobody.

When the room is the node's only GPU (beyond upstream, KEP-5690), the GPU is nominated to the
preemptor (`DevicesNominated` condition) and another pod created meanwhile does not take it once
the victim's claim is deallocated; that pod is named to be decided first when the GPU frees, so
without the nomination it would take it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import (
    PRIORITY_CLASSES,
    claim_spec,
    claim_template,
    device_class,
    driver_of,
    gpus,
    priority_class,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import InProcessOperator, failed_scheduling, wait_for

from dra_operator.kube import CORE_EVENTS, PODS, Client, dra

pytestmark = pytest.mark.controlplane

TEMPLATES = dra("resourceclaimtemplates")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")


@pytest.fixture
async def operator(run_operator: Any) -> AsyncIterator[InProcessOperator]:
    yield await run_operator(controllers=frozenset({"claims", "scheduler"}))


async def _priorities(cluster: Callable[..., Any], namespace: str) -> tuple[str, str]:
    low, high = f"{namespace}-low", f"{namespace}-high"
    for name, value in ((low, 0), (high, 1000)):
        await cluster(PRIORITY_CLASSES, priority_class(name, value))
    await cluster(PRIORITY_CLASSES, priority_class(f"{namespace}-never", 1000, "Never"))
    return low, high


def _with(pod: dict[str, Any], priority: str, cpu: str, **spec: Any) -> dict[str, Any]:
    pod["spec"]["priorityClassName"] = priority
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    pod["spec"].update(spec)
    return pod


def _holder(name: str, priority: str, node: str) -> dict[str, Any]:
    """A pod placed by hand that holds the node's cpu."""
    spec = {
        "priorityClassName": priority,
        "nodeName": node,
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def _setup(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
) -> tuple[str, str, str]:
    low, high = await _priorities(cluster, namespace)
    node = (await make_node(capacity={"cpu": "1", "pods": "10"}))["metadata"]["name"]
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(1)))
    await admin_api.create(TEMPLATES, claim_template("tmpl", claim_spec(gpu)), namespace=namespace)
    await admin_api.create(PODS, _holder("low", low, node), namespace=namespace)
    return node, low, high


async def test_a_higher_priority_pod_preempts_the_cpu_holder_then_binds(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
) -> None:
    node, _, high = await _setup(admin_api, namespace, make_node, cluster)
    body = _with(scheduler_pod("high", template="tmpl", hostname=node), high, "1")
    await admin_api.create(PODS, body, namespace=namespace)

    async def nominated() -> str | None:
        pod = await admin_api.get(PODS, "high", namespace=namespace)
        found: str | None = (pod.get("status") or {}).get("nominatedNodeName")
        return found

    assert await wait_for(nominated, what="the preemptor's nomination") == node
    victim = await admin_api.get(PODS, "low", namespace=namespace)
    assert victim["metadata"].get("deletionTimestamp")
    conditions = {c["type"]: c for c in victim["status"].get("conditions") or ()}
    assert conditions["DisruptionTarget"]["reason"] == "PreemptionByScheduler"

    async def preempted() -> list[dict[str, Any]] | None:
        found = await admin_api.list(
            CORE_EVENTS, namespace=namespace, field_selector="involvedObject.name=low"
        )
        return [e for e in found.get("items") or () if e["reason"] == "Preempted"] or None

    [event] = await wait_for(preempted, what="the Preempted event")
    assert event["message"].endswith(f"on node {node}")

    await admin_api.delete(PODS, "low", namespace=namespace, grace_period_seconds=0)

    async def bound() -> str | None:
        pod = await admin_api.get(PODS, "high", namespace=namespace)
        found: str | None = pod["spec"].get("nodeName")
        return found

    assert await wait_for(bound, what="the preemptor bound") == node


async def test_preemption_policy_never_preempts_nobody(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
) -> None:
    node, _, _ = await _setup(admin_api, namespace, make_node, cluster)
    body = _with(scheduler_pod("polite", template="tmpl", hostname=node), f"{namespace}-never", "1")
    await admin_api.create(PODS, body, namespace=namespace)

    async def refused() -> list[str] | None:
        found = await failed_scheduling(admin_api, namespace, "polite")
        return found or None

    messages = await wait_for(refused, what="FailedScheduling of the pod that may not preempt")
    assert "not eligible due to preemptionPolicy=Never" in messages[0]
    victim = await admin_api.get(PODS, "low", namespace=namespace)
    assert not victim["metadata"].get("deletionTimestamp")
    polite = await admin_api.get(PODS, "polite", namespace=namespace)
    assert not (polite.get("status") or {}).get("nominatedNodeName")


async def test_the_device_a_preemptor_freed_waits_for_it_and_no_other_pod_takes_it(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
) -> None:
    low, high = await _priorities(cluster, namespace)
    node = (await make_node(capacity={"cpu": "8", "pods": "10"}))["metadata"]["name"]
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(1)))
    await admin_api.create(TEMPLATES, claim_template("tmpl", claim_spec(gpu)), namespace=namespace)

    async def node_of(name: str) -> str | None:
        pod = await admin_api.get(PODS, name, namespace=namespace)
        found: str | None = pod["spec"].get("nodeName")
        return found

    holder = _with(scheduler_pod("low", template="tmpl", hostname=node), low, "100m")
    await admin_api.create(PODS, holder, namespace=namespace)
    assert await wait_for(lambda: node_of("low"), what="the holder bound") == node

    body = _with(scheduler_pod("high", template="tmpl", hostname=node), high, "100m")
    await admin_api.create(PODS, body, namespace=namespace)

    async def nominated() -> dict[str, Any] | None:
        pod = await admin_api.get(PODS, "high", namespace=namespace)
        conditions = (pod.get("status") or {}).get("conditions") or ()
        return next((c for c in conditions if c["type"] == "DevicesNominated"), None)

    condition = await wait_for(nominated, what="the DevicesNominated condition")
    assert condition["status"] == "True"
    assert f"{driver_of(gpu)}/{node}/gpu-0" in condition["message"]
    victim = await admin_api.get(PODS, "low", namespace=namespace)
    assert victim["metadata"].get("deletionTimestamp")

    other = _with(scheduler_pod("another", template="tmpl", hostname=node), low, "100m")
    await admin_api.create(PODS, other, namespace=namespace)

    async def other_refused() -> list[str] | None:
        return await failed_scheduling(admin_api, namespace, "another") or None

    await wait_for(other_refused, what="the other pod found unschedulable")
    await admin_api.delete(PODS, "low", namespace=namespace, grace_period_seconds=0)
    assert await wait_for(lambda: node_of("high"), what="the preemptor bound") == node
    assert await node_of("another") is None
