"""The raw-JSON client against a real apiserver: every verb, and errors as APIError.

Covers: optimistic concurrency (stale resourceVersion → APIConflictError, uid/resourceVersion
delete preconditions), the four patch types, server-side apply with a field manager, the
status and binding subresources, watch events as raw dicts, discovery, and that failures
arrive as dra_operator.errors types only.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import claim_spec, resource_claim

from dra_operator import controlplane
from dra_operator.errors import (
    APIConflictError,
    APIError,
    APIForbiddenError,
    APINotFoundError,
    APIServerError,
)
from dra_operator.kube import PODS, Client, ClusterConfig, PatchType, Resource, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")


def _claim(namespace: str, name: str = "claim") -> dict[str, Any]:
    spec = claim_spec("gpu.example.com")
    return resource_claim(name, spec, namespace=namespace, labels={"app": "demo"})


async def test_stale_resource_version_is_a_conflict(admin_api: Client, namespace: str) -> None:
    first = await admin_api.create(CLAIMS, _claim(namespace))
    first["metadata"]["labels"]["step"] = "one"
    second = await admin_api.update(CLAIMS, first)
    assert second["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
    first["metadata"]["labels"]["step"] = "stale"
    with pytest.raises(APIConflictError) as caught:
        await admin_api.update(CLAIMS, first)
    assert caught.value.status == 409
    assert caught.value.reason == "Conflict"


async def test_creating_twice_is_a_conflict(admin_api: Client, namespace: str) -> None:
    await admin_api.create(CLAIMS, _claim(namespace))
    with pytest.raises(APIConflictError) as caught:
        await admin_api.create(CLAIMS, _claim(namespace))
    assert caught.value.reason == "AlreadyExists"


async def test_missing_object_is_not_found(admin_api: Client, namespace: str) -> None:
    with pytest.raises(APINotFoundError) as caught:
        await admin_api.get(CLAIMS, "nope", namespace=namespace)
    assert caught.value.status == 404


async def test_find_reads_an_object_or_none(admin_api: Client, namespace: str) -> None:
    assert await admin_api.find(CLAIMS, "nope", namespace=namespace) is None
    created = await admin_api.create(CLAIMS, _claim(namespace))
    found = await admin_api.find(CLAIMS, "claim", namespace=namespace)
    assert found is not None
    assert found["metadata"]["uid"] == created["metadata"]["uid"]


async def test_invalid_object_is_a_plain_api_error(admin_api: Client, namespace: str) -> None:
    bad = _claim(namespace)
    bad["spec"]["devices"]["requests"][0]["name"] = "Not_A_DNS_Label"
    with pytest.raises(APIError) as caught:
        await admin_api.create(CLAIMS, bad)
    assert caught.value.status == 422
    assert "spec.devices.requests[0].name" in caught.value.message


@pytest.mark.parametrize(
    ("patch_type", "patch"),
    [
        pytest.param(PatchType.MERGE, {"metadata": {"labels": {"p": "v"}}}, id="merge"),
        pytest.param(PatchType.STRATEGIC, {"metadata": {"labels": {"p": "v"}}}, id="strategic"),
        pytest.param(
            PatchType.JSON,
            [{"op": "add", "path": "/metadata/labels/p", "value": "v"}],
            id="json",
        ),
    ],
)
async def test_patch_types(
    admin_api: Client, namespace: str, patch_type: PatchType, patch: object
) -> None:
    await admin_api.create(CLAIMS, _claim(namespace))
    got = await admin_api.patch(CLAIMS, "claim", patch, namespace=namespace, patch_type=patch_type)
    assert got["metadata"]["labels"] == {"app": "demo", "p": "v"}


async def test_server_side_apply_records_the_field_manager(
    admin_api: Client, namespace: str
) -> None:
    applied = await admin_api.apply(CLAIMS, _claim(namespace), field_manager="test-manager")
    managers = {entry["manager"] for entry in applied["metadata"]["managedFields"]}
    assert "test-manager" in managers
    change = {**_claim(namespace), "metadata": {**_claim(namespace)["metadata"], "labels": {}}}
    with pytest.raises(APIConflictError):
        await admin_api.apply(CLAIMS, _apply_label(change, "x"), field_manager="other")
    forced = await admin_api.apply(
        CLAIMS, _apply_label(change, "x"), field_manager="other", force=True
    )
    assert forced["metadata"]["labels"]["app"] == "x"


def _apply_label(claim: dict[str, Any], value: str) -> dict[str, Any]:
    return {**claim, "metadata": {**claim["metadata"], "labels": {"app": value}}}


async def test_delete_preconditions(admin_api: Client, namespace: str) -> None:
    created = await admin_api.create(CLAIMS, _claim(namespace))
    with pytest.raises(APIConflictError):
        await admin_api.delete(CLAIMS, "claim", namespace=namespace, uid="not-the-uid")
    await admin_api.delete(
        CLAIMS,
        "claim",
        namespace=namespace,
        uid=created["metadata"]["uid"],
        resource_version=created["metadata"]["resourceVersion"],
        propagation_policy="Background",
    )
    with pytest.raises(APINotFoundError):
        await admin_api.get(CLAIMS, "claim", namespace=namespace)


async def test_status_subresource_update(admin_api: Client, namespace: str) -> None:
    created = await admin_api.create(CLAIMS, _claim(namespace))
    status = {
        **created,
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": "gpu.example.com",
                            "pool": "node-1",
                            "device": "gpu-0",
                        }
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["node-1"]}
                            ]
                        }
                    ]
                },
            }
        },
    }
    got = await admin_api.update(CLAIMS, status, subresource="status")
    assert got["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    read = await admin_api.get(CLAIMS, "claim", namespace=namespace, subresource="status")
    assert read["status"] == got["status"]


async def test_pod_binding_subresource(
    admin_api: Client, namespace: str, make_node: NodeFactory
) -> None:
    node = await make_node()
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pod", "namespace": namespace},
        "spec": {"schedulerName": "dra-operator", "containers": [{"name": "c", "image": "x"}]},
    }
    await admin_api.create(PODS, pod)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "pod", "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node["metadata"]["name"]},
    }
    await admin_api.create(PODS, binding, namespace=namespace, name="pod", subresource="binding")
    got = await admin_api.get(PODS, "pod", namespace=namespace)
    assert got["spec"]["nodeName"] == node["metadata"]["name"]


async def test_fake_node_is_ready_and_untainted(make_node: NodeFactory) -> None:
    node = await make_node(capacity={"example.com/widgets": "4"})
    conditions = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert conditions["Ready"] == "True"
    assert not node["spec"].get("taints")
    assert node["status"]["allocatable"]["example.com/widgets"] == "4"


async def test_list_with_label_and_field_selectors(admin_api: Client, namespace: str) -> None:
    await admin_api.create(CLAIMS, _claim(namespace, "a"))
    other = _claim(namespace, "b")
    other["metadata"]["labels"] = {"app": "other"}
    await admin_api.create(CLAIMS, other)
    by_label = await admin_api.list(CLAIMS, namespace=namespace, label_selector="app=demo")
    assert [o["metadata"]["name"] for o in by_label["items"]] == ["a"]
    by_field = await admin_api.list(CLAIMS, namespace=namespace, field_selector="metadata.name=b")
    assert [o["metadata"]["name"] for o in by_field["items"]] == ["b"]
    assert by_field["metadata"]["resourceVersion"]


async def test_watch_yields_raw_events(admin_api: Client, namespace: str) -> None:
    listed = await admin_api.list(CLAIMS, namespace=namespace)
    events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def consume() -> None:
        stream = admin_api.watch(
            CLAIMS,
            namespace=namespace,
            resource_version=listed["metadata"]["resourceVersion"],
            timeout_seconds=30,
        )
        async with contextlib.aclosing(stream):
            async for event in stream:
                await events.put(event)

    task = asyncio.create_task(consume())
    try:
        await admin_api.create(CLAIMS, _claim(namespace, "watched"))
        await admin_api.delete(CLAIMS, "watched", namespace=namespace)
        seen = []
        while len(seen) < 2:
            event = await asyncio.wait_for(events.get(), timeout=30)
            if event["type"] != "BOOKMARK":
                seen.append((event["type"], event["object"]["metadata"]["name"]))
        assert seen == [("ADDED", "watched"), ("DELETED", "watched")]
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_watch_errors_are_api_errors(admin_api: Client, operator_api: Client) -> None:
    missing = admin_api.watch(dra("no-such-kind"), timeout_seconds=5)
    with pytest.raises(APINotFoundError):
        async with contextlib.aclosing(missing):
            async for _ in missing:
                pass
    forbidden = operator_api.watch(Resource("", "v1", "secrets", True), timeout_seconds=5)
    with pytest.raises(APIForbiddenError):
        async with contextlib.aclosing(forbidden):
            async for _ in forbidden:
                pass


async def test_discovery(admin_api: Client) -> None:
    version = await admin_api.server_version()
    assert version["gitVersion"].startswith("v1.")
    names = {r["name"] for r in await admin_api.api_resources("resource.k8s.io", "v1")}
    assert {"resourceclaims", "resourceclaims/status", "resourceslices"} <= names
    assert await admin_api.served_versions("no-such-group.example.com") == []


async def test_untrusted_server_certificate_is_a_server_error(
    control_plane: controlplane.ControlPlaneState,
) -> None:
    stranger = ClusterConfig(server=control_plane.server, ca_pem=controlplane.new_ca().cert_pem)
    async with Client(stranger, timeout=10) as api:
        with pytest.raises(APIServerError) as caught:
            await api.server_version()
    assert caught.value.reason == "Unreachable"
    assert "certificate" in caught.value.message.lower()
