"""The claims controller, live: `dra-operator run` against the local control plane.

Covers: a pod's template claim is generated (generateName, pod-claim-name annotation,
controller owner reference, template labels and annotations) and published in
`pod.status.resourceClaimStatuses`; kopf leaves no trace on the objects it watches; a pod bound
without us gets its allocated claim reserved; deleting the pod prunes the reservation,
deallocates, removes the finalizer and deletes the generated claim; /healthz, /readyz and
/metrics are served; a follower keeps its caches warm and writes nothing.

Every expectation is a condition polled with a timeout (`wait_for`), never a sleep. The
operator runs in-process here; tests/integration/test_operator_process.py runs it as a process.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import (
    claim_spec,
    claim_template,
    consumer_pod,
    gpus,
    resource_claim,
    resource_slice,
)
from tests.support.operator import verify_clean, wait_for

from dra_operator import controlplane, names
from dra_operator.cluster import ObjectKey
from dra_operator.errors import APINotFoundError
from dra_operator.kube import PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
TEMPLATES = dra("resourceclaimtemplates")
SLICES = dra("resourceslices")
DRIVER = "gpu.example.com"


def template(name: str) -> dict[str, Any]:
    """A template whose claims carry a label and an annotation the controller must copy."""
    copied = {"labels": {"team": "ml"}, "annotations": {"note": "from-template"}}
    return claim_template(name, claim_spec("gpu"), claim_metadata=copied)


def standalone_claim(name: str) -> dict[str, Any]:
    return resource_claim(name, claim_spec("gpu"))


async def publish(api: Client, namespace: str, node: str) -> str:
    """A ResourceSlice on `node` with devices gpu-0 and gpu-1, in a pool named after the test."""
    await api.create(SLICES, resource_slice(node, DRIVER, gpus(2), name=namespace, pool=namespace))
    return namespace


async def allocate(api: Client, namespace: str, name: str, device: str) -> dict[str, Any]:
    """What a scheduler does: the finalizer first, then status.allocation (pool: `publish`)."""
    claim = await api.get(CLAIMS, name, namespace=namespace)
    claim["metadata"]["finalizers"] = [names.DELETE_PROTECTION_FINALIZER]
    claim = await api.update(CLAIMS, claim)
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": DRIVER, "pool": namespace, "device": device}
                ]
            }
        }
    }
    return await api.update(CLAIMS, claim, subresource="status")


async def generated_claims(api: Client, namespace: str) -> list[dict[str, Any]]:
    found = await api.list(CLAIMS, namespace=namespace)
    return [
        c
        for c in found["items"]
        if names.POD_CLAIM_NAME_ANNOTATION in (c["metadata"].get("annotations") or {})
    ]


async def claim_of(api: Client, namespace: str, pod_name: str) -> str | None:
    current = await api.get(PODS, pod_name, namespace=namespace)
    statuses = (current.get("status") or {}).get("resourceClaimStatuses") or []
    return next((s.get("resourceClaimName") for s in statuses if s["name"] == "gpu"), None)


async def gone(api: Client, namespace: str, name: str) -> bool:
    try:
        await api.get(CLAIMS, name, namespace=namespace)
    except APINotFoundError:
        return True
    return False


async def test_template_claim_is_generated_and_published(
    admin_api: Client,
    namespace: str,
    run_operator: Any,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    await run_operator()
    tmpl = await admin_api.create(TEMPLATES, template("tmpl"), namespace=namespace)
    created = await admin_api.create(PODS, consumer_pod("p", template="tmpl"), namespace=namespace)

    claim_name = await wait_for(
        lambda: claim_of(admin_api, namespace, "p"), what="pod.status.resourceClaimStatuses"
    )

    claim = await admin_api.get(CLAIMS, claim_name, namespace=namespace)
    meta = claim["metadata"]
    assert meta["generateName"] == "p-gpu-"
    assert claim_name.startswith("p-gpu-")
    assert meta["annotations"] == {names.POD_CLAIM_NAME_ANNOTATION: "gpu", "note": "from-template"}
    assert meta["labels"] == {"team": "ml"}
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "p",
            "uid": created["metadata"]["uid"],
            "controller": True,
        }
    ]
    assert claim["spec"] == tmpl["spec"]["spec"]  # as the server defaulted it
    assert len(await generated_claims(admin_api, namespace)) == 1
    await verify_clean(control_plane, namespace)


async def test_the_watch_writes_nothing_on_watched_objects(
    admin_api: Client,
    namespace: str,
    run_operator: Any,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    await run_operator()
    await admin_api.create(TEMPLATES, template("tmpl"), namespace=namespace)
    await admin_api.create(PODS, consumer_pod("p", template="tmpl"), namespace=namespace)
    claim_name = await wait_for(lambda: claim_of(admin_api, namespace, "p"), what="the claim")

    current = await admin_api.get(PODS, "p", namespace=namespace)
    claim = await admin_api.get(CLAIMS, claim_name, namespace=namespace)
    tmpl = await admin_api.get(TEMPLATES, "tmpl", namespace=namespace)
    for obj in (current, claim, tmpl):
        meta = obj["metadata"]
        assert not [a for a in meta.get("annotations") or {} if "kopf" in a]
        assert not meta.get("finalizers")
    pod_managers = {m["manager"] for m in current["metadata"]["managedFields"]}
    assert names.CLAIMS_FIELD_MANAGER in pod_managers
    assert not [m for m in pod_managers if "kopf" in m]
    assert len(tmpl["metadata"]["managedFields"]) == 1  # only the test's create
    await verify_clean(control_plane, namespace)


async def test_pod_bound_without_us_gets_its_allocated_claim_reserved(
    admin_api: Client,
    namespace: str,
    run_operator: Any,
    make_node: NodeFactory,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    await publish(admin_api, namespace, node)
    await admin_api.create(CLAIMS, standalone_claim("shared"), namespace=namespace)
    await allocate(admin_api, namespace, "shared", "gpu-0")
    await run_operator()
    created = await admin_api.create(
        PODS, consumer_pod("bound", claim="shared", node=node), namespace=namespace
    )

    async def reserved() -> list[dict[str, Any]] | None:
        claim = await admin_api.get(CLAIMS, "shared", namespace=namespace)
        return (claim.get("status") or {}).get("reservedFor")

    entries = await wait_for(reserved, what="the reservation")
    assert entries == [{"resource": "pods", "name": "bound", "uid": created["metadata"]["uid"]}]
    await verify_clean(control_plane, namespace)


async def test_pod_deletion_releases_and_deletes_its_generated_claim(
    admin_api: Client,
    namespace: str,
    run_operator: Any,
    make_node: NodeFactory,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    await publish(admin_api, namespace, node)
    await admin_api.create(TEMPLATES, template("tmpl"), namespace=namespace)
    await run_operator()
    await admin_api.create(PODS, consumer_pod("p", template="tmpl", node=node), namespace=namespace)
    claim_name = await wait_for(lambda: claim_of(admin_api, namespace, "p"), what="the claim")
    await allocate(admin_api, namespace, claim_name, "gpu-1")

    async def reserved() -> bool:
        claim = await admin_api.get(CLAIMS, claim_name, namespace=namespace)
        return bool((claim.get("status") or {}).get("reservedFor"))

    await wait_for(reserved, what="the reservation of the bound pod")

    await admin_api.delete(PODS, "p", namespace=namespace, grace_period_seconds=0)

    await wait_for(lambda: gone(admin_api, namespace, claim_name), what="the claim's deletion")
    await verify_clean(control_plane, namespace)


async def test_probes_and_metrics_are_served(
    admin_api: Client,
    namespace: str,
    run_operator: Any,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    handle = await run_operator(metrics_address="127.0.0.1:0", health_address="127.0.0.1:0")
    probes = handle.operator.probes
    await admin_api.create(TEMPLATES, template("tmpl"), namespace=namespace)
    await admin_api.create(PODS, consumer_pod("p", template="tmpl"), namespace=namespace)
    await wait_for(lambda: claim_of(admin_api, namespace, "p"), what="the claim")

    async with aiohttp.ClientSession() as http:

        async def get(port: int, path: str) -> tuple[int, str]:
            async with http.get(f"http://127.0.0.1:{port}{path}") as resp:
                return resp.status, await resp.text()

        assert await get(probes.health_port, "/healthz") == (200, "ok\n")
        assert await get(probes.health_port, "/readyz") == (200, "ok\n")
        status, metrics = await get(probes.metrics_port, "/metrics")
    assert status == 200
    assert 'dra_operator_reconciles_total{controller="resource_claim",result="success"}' in metrics
    assert 'dra_operator_cache_objects{kind="pods"} 1.0' in metrics
    await verify_clean(control_plane, namespace)


async def test_a_follower_keeps_its_caches_warm_and_does_nothing(
    admin_api: Client,
    namespace: str,
    run_operator: Any,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    leader = await run_operator("leader")
    follower = await run_operator("follower", wait_leading=False)
    await admin_api.create(TEMPLATES, template("tmpl"), namespace=namespace)
    await admin_api.create(PODS, consumer_pod("p", template="tmpl"), namespace=namespace)
    claim_name = await wait_for(lambda: claim_of(admin_api, namespace, "p"), what="the claim")

    def follower_saw_the_claim() -> bool:
        return follower.operator.caches.claims.get(ObjectKey(namespace, claim_name)) is not None

    await wait_for(follower_saw_the_claim, what="the follower's cache to hold the claim")
    assert leader.operator.leading.is_set()
    assert not follower.operator.leading.is_set()
    assert follower.operator.plugins == []
    await verify_clean(control_plane, namespace)


async def recorded(api: Client, namespace: str, pod_name: str) -> dict[str, str | None]:
    current = await api.get(PODS, pod_name, namespace=namespace)
    statuses = (current.get("status") or {}).get("resourceClaimStatuses") or []
    return {s["name"]: s.get("resourceClaimName") for s in statuses}


async def test_a_deleted_claim_is_recreated_and_the_other_entries_stay(
    admin_api: Client,
    namespace: str,
    run_operator: Any,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    """Two template claims; one is deleted by hand. The claims controller re-creates it and
    names it in the pod status, and the other entry stays: 1.37 applies every entry, merged
    and sorted by name (upstream-1.37.md §7)."""
    await run_operator()
    await admin_api.create(TEMPLATES, template("tmpl"), namespace=namespace)
    pod = consumer_pod("p", template="tmpl")
    pod["spec"]["resourceClaims"] = [
        {"name": name, "resourceClaimTemplateName": "tmpl"} for name in ("b", "a")
    ]
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "a"}, {"name": "b"}]}
    await admin_api.create(PODS, pod, namespace=namespace)

    async def both() -> dict[str, str | None] | None:
        found = await recorded(admin_api, namespace, "p")
        return found if set(found) == {"a", "b"} else None

    first = await wait_for(both, what="both claims in the pod status")
    await admin_api.delete(CLAIMS, str(first["a"]), namespace=namespace)

    async def replaced() -> dict[str, str | None] | None:
        found = await recorded(admin_api, namespace, "p")
        if found.get("a") in (None, first["a"]) or found.get("b") is None:
            return None
        return found

    second = await wait_for(replaced, what="the re-created claim and the other entry")
    assert second["b"] == first["b"]
    current = await admin_api.get(PODS, "p", namespace=namespace)
    statuses = current["status"]["resourceClaimStatuses"]
    assert [s["name"] for s in statuses] == ["a", "b"]
    claims = sorted(c["metadata"]["name"] for c in await generated_claims(admin_api, namespace))
    assert claims == sorted([str(second["a"]), str(second["b"])])
    await verify_clean(control_plane, namespace)
