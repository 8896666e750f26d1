"""The operator identity holds exactly deploy/base's ClusterRole: refused beyond it.

Covers: writes the controllers need succeed as the `dra-operator` user (claims and their
status and binding subresources, pod binding, events, leases), and what the role does not
grant is refused with APIForbiddenError (secrets, deleting nodes, writing DRA slices or
classes, deleting namespaces).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory, Spawned
from tests.support.dra_objects import claim_spec, resource_claim

from dra_operator import controlplane
from dra_operator.errors import APIForbiddenError
from dra_operator.kube import EVENTS, LEASES, NAMESPACES, NODES, PODS, Client, Resource, dra

pytestmark = pytest.mark.controlplane

SECRETS = Resource("", "v1", "secrets", namespaced=True)
CONFIGMAPS = Resource("", "v1", "configmaps", namespaced=True)


def _claim(namespace: str) -> dict[str, Any]:
    return resource_claim("c", claim_spec("gpu.example.com"), namespace=namespace)


async def test_operator_is_refused_secrets(operator_api: Client, namespace: str) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {}}
    with pytest.raises(APIForbiddenError) as caught:
        await operator_api.create(SECRETS, secret, namespace=namespace)
    assert caught.value.status == 403
    with pytest.raises(APIForbiddenError):
        await operator_api.list(SECRETS, namespace=namespace)


async def test_operator_may_read_but_not_delete_nodes(
    operator_api: Client, make_node: NodeFactory
) -> None:
    node = await make_node()
    name = node["metadata"]["name"]
    assert (await operator_api.get(NODES, name))["metadata"]["name"] == name
    with pytest.raises(APIForbiddenError):
        await operator_api.delete(NODES, name)


@pytest.mark.parametrize(
    ("resource", "body"),
    [
        pytest.param(
            dra("resourceslices"),
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": "s"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": "n",
                    "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
                },
            },
            id="resourceslice",
        ),
        pytest.param(
            dra("deviceclasses"),
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "d"}},
            id="deviceclass",
        ),
        pytest.param(
            NAMESPACES,
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "forbidden-ns"}},
            id="namespace",
        ),
    ],
)
async def test_operator_is_refused_what_drivers_and_admins_write(
    operator_api: Client, resource: Resource, body: dict[str, Any]
) -> None:
    with pytest.raises(APIForbiddenError):
        await operator_api.create(resource, body)


async def test_operator_may_not_create_configmaps_or_delete_namespaces(
    operator_api: Client, namespace: str
) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
    with pytest.raises(APIForbiddenError):
        await operator_api.create(CONFIGMAPS, cm, namespace=namespace)
    with pytest.raises(APIForbiddenError):
        await operator_api.delete(NAMESPACES, namespace)


async def test_operator_writes_claims_and_their_allocation(
    operator_api: Client, namespace: str
) -> None:
    claim = await operator_api.create(dra("resourceclaims"), _claim(namespace))
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": "d"}
                ]
            }
        },
        "reservedFor": [],
    }
    # 1.36 granular status authorization: status.allocation needs resourceclaims/binding too.
    allocated = await operator_api.update(dra("resourceclaims"), claim, subresource="status")
    assert allocated["status"]["allocation"]["devices"]["results"][0]["device"] == "d"
    await operator_api.patch(
        dra("resourceclaims"),
        "c",
        {"metadata": {"finalizers": ["resource.kubernetes.io/delete-protection"]}},
        namespace=namespace,
    )
    await operator_api.patch(
        dra("resourceclaims"), "c", {"metadata": {"finalizers": None}}, namespace=namespace
    )
    await operator_api.delete(dra("resourceclaims"), "c", namespace=namespace)


async def test_operator_binds_pods_and_records_events_and_leases(
    admin_api: Client, operator_api: Client, namespace: str, make_node: NodeFactory
) -> None:
    node = await make_node()
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": namespace},
        "spec": {"schedulerName": "dra-operator", "containers": [{"name": "c", "image": "x"}]},
    }
    created = await admin_api.create(PODS, pod)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": node["metadata"]["name"]},
    }
    await operator_api.create(PODS, binding, namespace=namespace, name="p", subresource="binding")
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"generateName": "p-", "namespace": namespace},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "dra-operator.dev/scheduler",
        "reportingInstance": "dra-operator-0",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "note": "Successfully assigned the pod",
        "regarding": {
            "kind": "Pod",
            "namespace": namespace,
            "name": "p",
            "uid": created["metadata"]["uid"],
        },
    }
    await operator_api.create(EVENTS, event)
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "dra-operator", "namespace": namespace},
        "spec": {"holderIdentity": "dra-operator-0", "leaseDurationSeconds": 15},
    }
    held = await operator_api.create(LEASES, lease)
    held["spec"]["holderIdentity"] = "dra-operator-1"
    await operator_api.update(LEASES, held)
    await operator_api.patch(
        PODS,
        "p",
        {"status": {"conditions": [{"type": "DisruptionTarget", "status": "True"}]}},
        namespace=namespace,
        subresource="status",
    )
    await operator_api.delete(PODS, "p", namespace=namespace, grace_period_seconds=0)


def test_spawned_commands_run_as_the_operator(
    control_plane: controlplane.ControlPlaneState, spawn: Callable[..., Spawned]
) -> None:
    kubectl = controlplane.find_binaries().require("kubectl")
    whoami = spawn(str(kubectl), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami.wait(timeout=60) == 0, whoami.output()
    assert whoami.output() == controlplane.OPERATOR_USER
