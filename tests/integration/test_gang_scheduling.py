"""Gang scheduling, live: the operator's scheduler on a 1.37 API server with GenericWorkload on
(scheduling.k8s.io/v1beta1), or on a 1.36 one with GenericWorkload and GangScheduling on
(scheduling.k8s.io/v1alpha2): the local control plane switches the gates and the version on.
Release-sensitive: `make test` runs it with `--k8s-version 1.36` too.

Covers: a PodGroup with `gang.minCount: 4` whose four pods find room for three gets none bound
and holds no device (each pod has a FailedScheduling event, the group's condition is False
with that release's text: 1.37's PodGroupInitiallyScheduled with the cycle's text and
PodGroupPostFilter's, 1.36's PodGroupScheduled with none, and 1.36's Permit text on the pods
that fit); once a device is freed all four are bound together and the condition turns True.
The operator runs as its own identity, so the PodGroup status patch goes through deploy/'s
ClusterRole.
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
MEMBERS = ("worker-0", "worker-1", "worker-2", "worker-3")
# The condition a release's kube-scheduler writes, and its text when the gang does not fit.
_CONDITIONS = {
    "v1beta1": (
        "PodGroupInitiallyScheduled",
        "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, "
        "pod group preemption: No preemption victims found for incoming preemptor",
    ),
    "v1alpha2": ("PodGroupScheduled", ""),
}


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


async def _condition(
    api: Client, groups: Resource, namespace: str, kind: str
) -> dict[str, Any] | None:
    group = await api.get(groups, "gang", namespace=namespace)
    conditions = (group.get("status") or {}).get("conditions") or ()
    return next((c for c in conditions if c["type"] == kind), None)


async def _first_texts(api: Client, namespace: str) -> dict[str, str]:
    return {n: (await failed_scheduling(api, namespace, n))[0] for n in MEMBERS}


async def test_a_gang_with_room_for_three_of_four_waits_whole_then_is_placed_whole(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    run_operator: Any,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    served = await admin_api.served_versions("scheduling.k8s.io")
    version = next((v for v in _CONDITIONS if v in served), None)
    if version is None:
        pytest.skip("scheduling.k8s.io serves no PodGroups (GenericWorkload off)")
    groups = Resource("scheduling.k8s.io", version, "podgroups", namespaced=True)
    kind, text = _CONDITIONS[version]
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
        "apiVersion": f"scheduling.k8s.io/{version}",
        "kind": "PodGroup",
        "metadata": {"name": "gang"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}},
    }
    await admin_api.create(groups, group, namespace=namespace)
    for name in MEMBERS:
        await admin_api.create(PODS, _member(name, node), namespace=namespace)

    async def all_failed() -> bool:
        return all([await failed_scheduling(admin_api, namespace, n) for n in MEMBERS])

    await wait_for(all_failed, timeout=60, what="every member's FailedScheduling event")
    assert await _bound(admin_api, namespace) == ["blocker"]
    assert len(await _held(admin_api, namespace)) == 1  # the blocker's device only
    condition = await wait_for(lambda: _condition(admin_api, groups, namespace, kind), timeout=30)
    assert condition["status"] == "False" and condition["reason"] == "Unschedulable"
    assert condition["message"] == text
    texts = await _first_texts(admin_api, namespace)
    if version == "v1alpha2":  # 1.36 tries every member: three fit and wait at Permit
        fitted = [n for n in MEMBERS if texts[n].startswith("waiting for minCount pods")]
        assert len(fitted) == 3

    await admin_api.delete(PODS, "blocker", namespace=namespace, grace_period_seconds=0)

    async def whole() -> bool:
        return await _bound(admin_api, namespace) == sorted(MEMBERS)

    await wait_for(whole, timeout=60, what="the whole gang bound")
    assert len(await _held(admin_api, namespace)) == 4

    async def scheduled() -> bool:
        found = await _condition(admin_api, groups, namespace, kind)
        return found is not None and found["status"] == "True"

    await wait_for(scheduled, timeout=30, what=f"{kind} True")
    await verify_clean(control_plane, namespace)

    # No kube-controller-manager lifts the PodGroup's protection finalizer: done by hand.
    for name in MEMBERS:
        await admin_api.delete(PODS, name, namespace=namespace, grace_period_seconds=0)
    await admin_api.delete(groups, "gang", namespace=namespace)
    await admin_api.patch(groups, "gang", {"metadata": {"finalizers": None}}, namespace=namespace)
