"""Claims of a PodGroup, live: the claims controller on a 1.37 API server with GenericWorkload
and DRAWorkloadResourceClaims on (the local control plane switches every DRA gate on, and
scheduling.k8s.io/v1beta1 with them).

Covers: the PodGroup's template claim is created once, owned by the PodGroup and annotated
with the PodGroup claim's name, and recorded in the group's status; every member pod records
that same claim (none gets its own); once the pods are bound and the claim allocated, it is
reserved for the PodGroup, not per pod, and `verify` finds nothing wrong; when the PodGroup
is gone (after its pods), the reservation goes, the claim is deallocated and deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.support.dra_objects import (
    REQUEST,
    claim_spec,
    claim_template,
    consumer_pod,
    resource_slice,
)
from tests.support.operator import verify_clean, wait_for

from dra_operator import controlplane, names
from dra_operator.kube import PODS, Client, Resource, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
TEMPLATES = dra("resourceclaimtemplates")
SLICES = dra("resourceslices")
POD_GROUPS = Resource("scheduling.k8s.io", "v1beta1", "podgroups", namespaced=True)
GROUP = "gang"


def _group() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": GROUP},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "resourceClaims": [{"name": REQUEST, "resourceClaimTemplateName": "shared"}],
        },
    }


def _member(name: str, node: str | None = None) -> dict[str, Any]:
    pod = consumer_pod(name, template="shared", node=node)
    pod["spec"]["schedulingGroup"] = {"podGroupName": GROUP}
    return pod


async def _claims(api: Client, namespace: str) -> list[dict[str, Any]]:
    return list((await api.list(CLAIMS, namespace=namespace)).get("items") or ())


async def test_a_pod_group_shares_one_claim_reserved_for_the_group(
    control_plane: controlplane.ControlPlaneState,
    admin_api: Client,
    namespace: str,
    cluster: Callable[..., Any],
    run_operator: Any,
) -> None:
    if "v1beta1" not in await admin_api.served_versions("scheduling.k8s.io"):
        pytest.skip("scheduling.k8s.io/v1beta1 (GenericWorkload) not served")
    await admin_api.create(
        TEMPLATES, claim_template("shared", claim_spec("gpu-class")), namespace=namespace
    )
    group = await admin_api.create(POD_GROUPS, _group(), namespace=namespace)
    for name in ("worker-0", "worker-1"):
        await admin_api.create(PODS, _member(name, node="node-a"), namespace=namespace)
    await run_operator(controllers=frozenset({"claims"}))

    async def recorded() -> str | None:
        got = await admin_api.get(POD_GROUPS, GROUP, namespace=namespace)
        statuses = (got.get("status") or {}).get("resourceClaimStatuses") or []
        return next((s.get("resourceClaimName") for s in statuses if s["name"] == REQUEST), None)

    claim_name = await wait_for(recorded, timeout=30, what="the PodGroup's claim recorded")
    (claim,) = await _claims(admin_api, namespace)
    meta = claim["metadata"]
    assert meta["name"] == claim_name
    assert meta["generateName"] == f"{GROUP}-{REQUEST}-"
    assert meta["annotations"][names.POD_CLAIM_NAME_ANNOTATION] == REQUEST
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "name": GROUP,
            "uid": group["metadata"]["uid"],
            "controller": True,
        }
    ]

    async def members_recorded() -> bool:
        for name in ("worker-0", "worker-1"):
            pod = await admin_api.get(PODS, name, namespace=namespace)
            statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or []
            if statuses != [{"name": REQUEST, "resourceClaimName": claim_name}]:
                return False
        return True

    await wait_for(members_recorded, timeout=30, what="both members to record the group's claim")
    assert len(await _claims(admin_api, namespace)) == 1  # no claim per pod

    pool = f"pool-{namespace}"
    await cluster(
        SLICES, resource_slice("node-a", "gang.example.com", [{"name": "d0"}], name=pool, pool=pool)
    )
    result = {"request": REQUEST, "driver": "gang.example.com", "pool": pool, "device": "d0"}
    claim["status"] = {"allocation": {"devices": {"results": [result]}}}
    claim["metadata"]["finalizers"] = [names.DELETE_PROTECTION_FINALIZER]
    claim = await admin_api.update(CLAIMS, claim)
    claim["status"] = {"allocation": {"devices": {"results": [result]}}}
    await admin_api.update(CLAIMS, claim, subresource="status")

    async def reserved() -> list[dict[str, Any]] | None:
        got = await admin_api.get(CLAIMS, claim_name, namespace=namespace)
        return (got.get("status") or {}).get("reservedFor")

    consumers = await wait_for(reserved, timeout=30, what="the claim reserved")
    assert consumers == [
        {
            "apiGroup": "scheduling.k8s.io",
            "resource": "podgroups",
            "name": GROUP,
            "uid": group["metadata"]["uid"],
        }
    ]

    await verify_clean(control_plane, namespace)  # the group's reservation serves both pods

    # The group goes once its pods are gone: the API server gives every PodGroup the
    # scheduling.k8s.io/podgroup-protection finalizer, which kube-controller-manager's
    # podgroup-protection controller lifts when no pod references the group; done by hand here.
    for name in ("worker-0", "worker-1"):
        await admin_api.delete(PODS, name, namespace=namespace, grace_period_seconds=0)
    await admin_api.delete(POD_GROUPS, GROUP, namespace=namespace)
    await admin_api.patch(
        POD_GROUPS, GROUP, {"metadata": {"finalizers": None}}, namespace=namespace
    )

    async def gone() -> bool:
        return not await _claims(admin_api, namespace)

    await wait_for(gone, timeout=30, what="the group's claim released and deleted")
