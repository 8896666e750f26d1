"""Gang scheduling, live: the operator's scheduler on a 1.37 API server with GenericWorkload on
(the local control plane switches it on, and scheduling.k8s.io/v1beta1 with it).

Covers: a PodGroup with `gang.minCount: 4` whose four pods find room for three gets none bound
and holds no device (each pod has a FailedScheduling event, the group's
PodGroupInitiallyScheduled condition is False with upstream's text); once a device is freed
all four are bound together and the condition turns True. The operator runs as its own
identity, so the PodGroup status patch goes through deploy/'s ClusterRole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import (
    claim_spec,
    claim_template,
    device_class,
    driver_of,
    gpus,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import failed_scheduling, verify_clean, wait_for

from dra_operator import controlplane
from dra_operator.kube import PODS, Client, Resource, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
TEMPLATES = dra("resourceclaimtemplates")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")
POD_GROUPS = Resource("scheduling.k8s.io", "v1beta1", "podgroups", namespaced=True)
MEMBERS = ("worker-0", "worker-1", "worker-2", "worker-3")


def _member(name: str, node: str) -> dict[str, Any]:
    pod = scheduler_pod(name, template="tmpl", hostname=node)
    pod["spec"]["schedulingGroup"] = {"podGroupName": "gang"}
    return pod


async def _bound(api: Client, namespace: str) -> list[str]:
    pods = (await api.list(PODS, namespace=namespace)).get("items") or ()
    return sorted(p["metadata"]["name"] for p in pods if p["spec"].get("nodeName"))


async def _held(api: Client, namespace: str) -> list[str]:
    claims = (await api.list(CLAIMS, namespace=namespace)).get("items") or ()
    return sorted(
        r["device"]
        for c in claims
        for r in ((c.get("status") or {}).get("allocation") or {})
        .get("devices", {})
        .get("results", [])
    )


async def _condition(api: Client, namespace: str) -> dict[str, Any] | None:
    group = await api.get(POD_GROUPS, "gang", namespace=namespace)
    conditions = (group.get("status") or {}).get("conditions") or ()
    return next((c for c in conditions if c["type"] == "PodGroupInitiallyScheduled"), None)


async def test_a_gang_with_room_for_three_of_four_waits_whole_then_is_placed_whole(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    run_operator: Any,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    if "v1beta1" not in await admin_api.served_versions("scheduling.k8s.io"):
        pytest.skip("scheduling.k8s.io/v1beta1 (GenericWorkload) not served")
    node = (await make_node())["metadata"]["name"]
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(4)))
    await admin_api.create(TEMPLATES, claim_template("tmpl", claim_spec(gpu)), namespace=namespace)
    await run_operator(controllers=frozenset({"claims", "scheduler"}))

    # A pod outside the gang takes one of the four devices first.
    await admin_api.create(
        PODS, scheduler_pod("blocker", template="tmpl", hostname=node), namespace=namespace
    )
    assert await wait_for(lambda: _bound(admin_api, namespace)) == ["blocker"]

    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "gang"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}},
    }
    await admin_api.create(POD_GROUPS, group, namespace=namespace)
    for name in MEMBERS:
        await admin_api.create(PODS, _member(name, node), namespace=namespace)

    async def all_failed() -> bool:
        return all([await failed_scheduling(admin_api, namespace, n) for n in MEMBERS])

    await wait_for(all_failed, timeout=60, what="every member's FailedScheduling event")
    assert await _bound(admin_api, namespace) == ["blocker"]
    assert len(await _held(admin_api, namespace)) == 1  # the blocker's device only
    condition = await wait_for(lambda: _condition(admin_api, namespace), timeout=30)
    assert condition["status"] == "False" and condition["reason"] == "Unschedulable"
    assert condition["message"].startswith("minCount (4) cannot be satisfied:")

    await admin_api.delete(PODS, "blocker", namespace=namespace, grace_period_seconds=0)

    async def whole() -> bool:
        return await _bound(admin_api, namespace) == sorted(MEMBERS)

    await wait_for(whole, timeout=60, what="the whole gang bound")
    assert len(await _held(admin_api, namespace)) == 4

    async def scheduled() -> bool:
        found = await _condition(admin_api, namespace)
        return found is not None and found["status"] == "True"

    await wait_for(scheduled, timeout=30, what="PodGroupInitiallyScheduled True")
    await verify_clean(control_plane, namespace)

    # No kube-controller-manager lifts the PodGroup's protection finalizer: done by hand.
    for name in MEMBERS:
        await admin_api.delete(PODS, name, namespace=namespace, grace_period_seconds=0)
    await admin_api.delete(POD_GROUPS, "gang", namespace=namespace)
    await admin_api.patch(
        POD_GROUPS, "gang", {"metadata": {"finalizers": None}}, namespace=namespace
    )
