"""Preemption by the operator's scheduler on real nodes (issue #29).

Run on the local control plane's real nodes (kube-controller-manager beside the operator) and,
with DRA_OPERATOR_E2E_OPERATOR=deployed, beside kube-scheduler and kube-controller-manager with
the shipped routing. Every pod is pinned to one node by its hostname label.

The only GPU: the claims of these pods select the node's first device only, so a pod holding
it leaves none for the others. A low-priority pod runs with it; a high-priority pod arrives
and preempts it (the victim gets a `Preempted` Event and is stopped by its kubelet); the GPU
is nominated to the preemptor (`DevicesNominated`, KEP-5690) and a mid-priority pod created
once the high one is nominated does not take it while the victim's claim is deallocated: it stays
pending with a FailedScheduling event, and the high pod runs and its container sees the GPU.

The only cpu: a low-priority pod requests all the cpu the node has left; a high-priority pod
with a claim that needs the same cpu preempts it and runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from tests.support.dra_objects import PRIORITY_CLASSES, priority_class
from tests.support.operator import wait_for

from dra_operator.errors import APINotFoundError
from dra_operator.kube import NODES, PODS
from e2e._scene import Scene, devices

pytestmark = pytest.mark.controlplane

HOSTNAME = "kubernetes.io/hostname"
PRIORITIES = {"low": 0, "mid": 500, "high": 1000}
# The Event on a victim: kube-scheduler v1.37.2, pkg/scheduler/framework/preemption.
PREEMPTED = "Preempted"
# Why the mid pod waits: DynamicResources' Filter text, with the allocator's reason.
CANNOT_ALLOCATE = "cannot allocate all claims"
IN_USE = "in use"


@pytest.fixture
async def priorities(scene: Scene) -> AsyncIterator[dict[str, str]]:
    """PriorityClasses low, mid and high of this test: level -> class name."""
    made = {level: f"{scene.namespace}-{level}" for level in PRIORITIES}
    for level, name in made.items():
        await scene.api.create(PRIORITY_CLASSES, priority_class(name, PRIORITIES[level]))
    yield made
    for name in made.values():
        with contextlib.suppress(APINotFoundError):
            await scene.api.delete(PRIORITY_CLASSES, name)


def _on(node: str, priority: str) -> dict[str, object]:
    return {"nodeSelector": {HOSTNAME: node}, "priorityClassName": priority}


def _real_nodes_only(scene: Scene) -> str:
    """The node the scenario uses: one of the real nodes, whose kubelet stops victims."""
    if not scene.real_nodes:
        pytest.skip("needs real nodes: a kubelet stops the victim and runs the preemptor")
    return sorted(scene.real_nodes)[0]


async def _preempted(scene: Scene, victim: str, node: str) -> None:
    """The victim got upstream's `Preempted` Event naming the node, and is going or gone."""
    events = await wait_for(
        lambda: scene.events(victim, PREEMPTED), what=f"the Preempted event of {victim}"
    )
    assert events[0].endswith(f"on node {node}"), events
    pod = await scene.get_pod(victim)
    assert pod is None or pod["metadata"].get("deletionTimestamp")


async def _free_cpu_millis(scene: Scene, node: str) -> int:
    """The node's allocatable cpu less the requests of the pods that run or wait there."""
    allocatable = _millis((await scene.api.get(NODES, node))["status"]["allocatable"]["cpu"])
    listed = await scene.api.list(PODS, field_selector=f"spec.nodeName={node}")
    used = 0
    for pod in listed.get("items") or ():
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for container in pod["spec"]["containers"]:
            used += _millis(((container.get("resources") or {}).get("requests") or {}).get("cpu"))
    return allocatable - used


def _millis(quantity: str | None) -> int:
    if not quantity:
        return 0
    if quantity.endswith("m"):
        return int(quantity[:-1])
    return int(float(quantity) * 1000)


async def test_a_high_priority_pod_preempts_the_holder_of_the_only_gpu_and_runs_with_it(
    scene: Scene, priorities: dict[str, str]
) -> None:
    node = _real_nodes_only(scene)
    await scene.template(also=f"device.attributes['{scene.driver.name}'].index == 0")
    await scene.pod("low", spec=_on(node, priorities["low"]))
    _, held = await scene.placed("low")
    await scene.running("low")
    [(_, pool, gpu)] = devices(held)
    assert (pool, gpu) == (node, "gpu-0")

    await scene.pod("high", spec=_on(node, priorities["high"]))

    # The mid pod arrives once the preemption happened (the GPU nominated to the high pod, or
    # already its own): created together, the mid pod may be decided first and preempt the
    # low pod itself, rightly, as kube-scheduler would with the same arrival order.
    async def nominated() -> str | None:
        high = await scene.get_pod("high")
        if high is None:
            return None
        return high["status"].get("nominatedNodeName") or high["spec"].get("nodeName") or None

    assert await wait_for(nominated, what="the high pod nominated to a node") == node
    await scene.pod("mid", spec=_on(node, priorities["mid"]))
    await _preempted(scene, "low", node)

    _, claim = await scene.placed("high", timeout=120.0)
    assert [d[1:] for d in devices(claim)] == [(node, "gpu-0")]
    await scene.running("high")
    assert await scene.seen_devices("high") == [(node, "gpu-0")]
    assert scene.prepared_on_node(node, claim)

    # The mid pod never had the GPU: it waits, saying why, while the high pod runs with it.
    async def refused() -> list[str] | None:
        found = await scene.events("mid", "FailedScheduling")
        return [m for m in found if CANNOT_ALLOCATE in m and IN_USE in m] or None

    await wait_for(refused, what="FailedScheduling of mid naming the GPU in use")
    mid = await scene.get_pod("mid")
    assert mid is not None and not mid["spec"].get("nodeName")
    assert await scene.events("mid", PREEMPTED) == []
    high = await scene.get_pod("high")
    assert high is not None and high["status"].get("phase") == "Running"
    await scene.verify_clean()


async def test_a_high_priority_pod_with_a_claim_preempts_the_holder_of_the_cpu(
    scene: Scene, priorities: dict[str, str]
) -> None:
    node = _real_nodes_only(scene)
    await scene.template()
    room = await _free_cpu_millis(scene, node)
    assert room > 0, f"node {node} has no cpu left to hold"
    await scene.pod("low", spec=_on(node, priorities["low"]), cpu=f"{room}m")
    await scene.placed("low")
    await scene.running("low")

    await scene.pod("high", spec=_on(node, priorities["high"]), cpu=f"{room}m")
    await _preempted(scene, "low", node)
    placed, claim = await scene.placed("high", timeout=120.0)
    assert placed == node
    await scene.running("high")
    [(_, pool, gpu)] = devices(claim)
    assert await scene.seen_devices("high") == [(pool, gpu)]
    await scene.verify_clean()
