"""Device nominations across a leader change (issue #29), on the real kube-apiserver.

A low-priority pod holds a node's only GPU; a high-priority pod preempts it and the GPU is
nominated to the preemptor (`DevicesNominated`). No kubelet runs, so the victim stays
terminating until the test finishes its deletion. The leader stops and another operator takes
the Lease: it starts with an empty ledger and holds the nomination again from what the
server shows (`status.nominatedNodeName` and the condition). Then a pod named to be decided
first, created under the new leader, does not take the GPU once the victim's claim is
deallocated; the preemptor binds with it. When the devices are gone meanwhile (the node's slice
withdrawn), the new leader drops the nomination, saying so in a `DeviceNominationLost`
condition and Event.
"""

from __future__ import annotations

from collections.abc import Callable
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
CONTROLLERS = frozenset({"claims", "scheduler"})


def _with(pod: dict[str, Any], priority: str) -> dict[str, Any]:
    pod["spec"]["priorityClassName"] = priority
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    return pod


async def _condition(admin_api: Client, namespace: str, name: str) -> dict[str, Any] | None:
    pod = await admin_api.get(PODS, name, namespace=namespace)
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return next((c for c in conditions if c["type"] == "DevicesNominated"), None)


async def _node_of(admin_api: Client, namespace: str, name: str) -> str | None:
    pod = await admin_api.get(PODS, name, namespace=namespace)
    found: str | None = pod["spec"].get("nodeName")
    return found


async def _preempted_under_first_leader(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    run_operator: Any,
) -> tuple[str, str, str]:
    """The GPU nominated to pod `high` by a leader that then stops: (node, slice, low class)."""
    low, high = f"{namespace}-low", f"{namespace}-high"
    for name, value in ((low, 0), (high, 1000)):
        await cluster(PRIORITY_CLASSES, priority_class(name, value))
    node = (await make_node(capacity={"cpu": "8", "pods": "10"}))["metadata"]["name"]
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    gpu_slice = await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(1)))
    await admin_api.create(TEMPLATES, claim_template("tmpl", claim_spec(gpu)), namespace=namespace)

    first: InProcessOperator = await run_operator("first", controllers=CONTROLLERS)
    holder = _with(scheduler_pod("low", template="tmpl", hostname=node), low)
    await admin_api.create(PODS, holder, namespace=namespace)
    await wait_for(lambda: _node_of(admin_api, namespace, "low"), what="the holder bound")
    preemptor = _with(scheduler_pod("high", template="tmpl", hostname=node), high)
    await admin_api.create(PODS, preemptor, namespace=namespace)
    condition = await wait_for(
        lambda: _condition(admin_api, namespace, "high"), what="the DevicesNominated condition"
    )
    assert condition["status"] == "True"
    await first.stop()
    return node, gpu_slice["metadata"]["name"], low


async def test_a_new_leader_holds_the_nomination_and_no_other_pod_takes_the_gpu(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    run_operator: Any,
) -> None:
    node, _, low = await _preempted_under_first_leader(
        admin_api, namespace, make_node, cluster, run_operator
    )
    await run_operator("second", controllers=CONTROLLERS)
    other = _with(scheduler_pod("another", template="tmpl", hostname=node), low)
    await admin_api.create(PODS, other, namespace=namespace)

    async def other_refused() -> list[str] | None:
        return await failed_scheduling(admin_api, namespace, "another") or None

    await wait_for(other_refused, what="the other pod found unschedulable by the new leader")
    await admin_api.delete(PODS, "low", namespace=namespace, grace_period_seconds=0)
    placed = await wait_for(
        lambda: _node_of(admin_api, namespace, "high"), what="the preemptor bound"
    )
    assert placed == node
    assert await _node_of(admin_api, namespace, "another") is None


async def test_a_new_leader_drops_a_nomination_whose_devices_are_gone_and_says_so(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    run_operator: Any,
) -> None:
    _, gpu_slice, _ = await _preempted_under_first_leader(
        admin_api, namespace, make_node, cluster, run_operator
    )
    await admin_api.delete(SLICES, gpu_slice)
    await run_operator("second", controllers=CONTROLLERS)

    async def lost() -> dict[str, Any] | None:
        found = await _condition(admin_api, namespace, "high")
        return found if found and found["status"] == "False" else None

    condition = await wait_for(lost, what="the nomination dropped by the new leader")
    assert condition["reason"] == "DeviceNominationLost"
    assert "could not be held again" in condition["message"]
    events = await admin_api.list(
        CORE_EVENTS, namespace=namespace, field_selector="involvedObject.name=high"
    )
    assert "DeviceNominationLost" in {e["reason"] for e in events.get("items") or ()}
