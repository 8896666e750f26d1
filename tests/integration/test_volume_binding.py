"""VolumeBinding's PreBind writes on a real kube-apiserver, as the operator identity (RBAC on).

Covers: a WaitForFirstConsumer claim and a local PV with node affinity on node C get bound by
our writes (the PV's claimRef with the claim's UID and bound-by-controller, the claim's
volumeName and bind-completed), the plugin having rejected node A; and, for a class with a
provisioner, the claim annotated with the selected node, PreBind then waiting for a
provisioner that never comes (no kube-controller-manager or provisioner runs here).

The plugin reads the objects through a Handle that mirrors the server (listed every 100 ms),
as the operator's watched stores would.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory

from dra_operator import model
from dra_operator.controllers.scheduler._volume_writes import KubeVolumeWriter
from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    NodeInfo,
    Snapshot,
)
from dra_operator.controllers.scheduler.plugins import volumebinding
from dra_operator.errors import APINotFoundError
from dra_operator.kube import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
    Client,
)

pytestmark = pytest.mark.controlplane

HOSTNAME = "kubernetes.io/hostname"


class MirrorHandle:
    """The storage listers over what the server holds, refreshed by `run`."""

    def __init__(self, api: Client, namespace: str, nodes: Sequence[model.Node], writer: Any):
        self._api = api
        self._namespace = namespace
        self._snapshot = Snapshot([NodeInfo(node=n, allocatable={}) for n in nodes])
        self.volume_writer = writer
        self._pvs: dict[str, model.PersistentVolume] = {}
        self._pvcs: dict[str, model.PersistentVolumeClaim] = {}
        self._classes: dict[str, model.StorageClass] = {}

    async def refresh(self) -> None:
        pvs = await self._api.list(PERSISTENT_VOLUMES)
        pvcs = await self._api.list(PERSISTENT_VOLUME_CLAIMS, namespace=self._namespace)
        classes = await self._api.list(STORAGE_CLASSES)
        self._pvs = {
            v.name: v for v in (model.parse_persistent_volume(raw) for raw in pvs["items"])
        }
        self._pvcs = {
            c.metadata.name: c
            for c in (model.parse_persistent_volume_claim(raw) for raw in pvcs["items"])
        }
        self._classes = {
            c.name: c for c in (model.parse_storage_class(raw) for raw in classes["items"])
        }

    async def run(self) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(0.1)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def pvc(self, namespace: str, name: str) -> model.PersistentVolumeClaim | None:
        return self._pvcs.get(name) if namespace == self._namespace else None

    def pv(self, name: str) -> model.PersistentVolume | None:
        return self._pvs.get(name)

    def pvs(self, storage_class: str) -> list[model.PersistentVolume]:
        return sorted(
            (v for v in self._pvs.values() if v.storage_class == storage_class),
            key=lambda v: v.name,
        )

    def storage_class(self, name: str) -> model.StorageClass | None:
        return self._classes.get(name)

    def csi_node(self, name: str) -> None:
        return None

    def csi_driver(self, name: str) -> None:
        return None


@pytest.fixture
async def storage(admin_api: Client) -> AsyncIterator[list[tuple[Any, str]]]:
    """Cluster-scoped storage objects to delete after the test: (resource, name)."""
    created: list[tuple[Any, str]] = []
    yield created
    for resource, name in reversed(created):
        with contextlib.suppress(APINotFoundError):
            await admin_api.delete(resource, name)


async def _setup(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    storage: list[tuple[Any, str]],
    *,
    provisioner: str,
) -> tuple[list[model.Node], dict[str, Any]]:
    suffix = namespace
    nodes = [
        model.parse_node(await make_node(f"{suffix}-{n}", labels={HOSTNAME: f"{suffix}-{n}"}))
        for n in ("a", "c")
    ]
    sc = f"local-{suffix}"
    await admin_api.create(
        STORAGE_CLASSES,
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": sc},
            "provisioner": provisioner,
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    )
    storage.append((STORAGE_CLASSES, sc))
    claim = await admin_api.create(
        PERSISTENT_VOLUME_CLAIMS,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"},
            "spec": {
                "storageClassName": sc,
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
        namespace=namespace,
    )
    return nodes, claim


async def _local_pv(
    admin_api: Client, storage: list[tuple[Any, str]], namespace: str, node_name: str
) -> str:
    name = f"pv-{namespace}"
    await admin_api.create(
        PERSISTENT_VOLUMES,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": f"local-{namespace}",
                "local": {"path": "/mnt/disks/data"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": HOSTNAME, "operator": "In", "values": [node_name]}
                                ]
                            }
                        ]
                    }
                },
            },
        },
    )
    storage.append((PERSISTENT_VOLUMES, name))
    # No PV controller runs here to move a new PV to Available: do it as it would.
    await admin_api.patch(
        PERSISTENT_VOLUMES, name, {"status": {"phase": "Available"}}, subresource="status"
    )
    return name


def _pod(namespace: str) -> model.Pod:
    return model.parse_pod(
        {
            "metadata": {"name": "trainer", "namespace": namespace, "uid": "pod-uid"},
            "spec": {
                "containers": [{"name": "c"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
            },
        }
    )


async def test_a_wffc_claim_and_a_local_pv_get_bound_by_our_writes(
    admin_api: Client,
    operator_api: Client,
    namespace: str,
    make_node: NodeFactory,
    storage: list[tuple[Any, str]],
) -> None:
    nodes, claim = await _setup(
        admin_api, namespace, make_node, storage, provisioner="kubernetes.io/no-provisioner"
    )
    node_a, node_c = nodes
    pv_name = await _local_pv(admin_api, storage, namespace, node_c.name)
    handle = MirrorHandle(operator_api, namespace, nodes, KubeVolumeWriter(operator_api))
    await handle.refresh()
    plugin = volumebinding.new({"bindTimeoutSeconds": 30}, handle)
    pod = _pod(namespace)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, list(handle.snapshot))
    assert status.ok, status
    verdicts = {info.name: plugin.filter(state, pod, info) for info in handle.snapshot}
    assert verdicts[node_a.name].reasons == (
        "node(s) didn't find available persistent volumes to bind",
    )
    assert verdicts[node_c.name].ok
    assert plugin.reserve(state, pod, node_c.name).ok

    mirror = asyncio.create_task(handle.run())
    try:
        status = await plugin.pre_bind(state, pod, node_c.name)
    finally:
        mirror.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await mirror
    assert status.ok, status

    pv = await admin_api.get(PERSISTENT_VOLUMES, pv_name)
    ref = pv["spec"]["claimRef"]
    assert (ref["namespace"], ref["name"], ref["uid"]) == (
        namespace,
        "data",
        claim["metadata"]["uid"],
    )
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    bound = await admin_api.get(PERSISTENT_VOLUME_CLAIMS, "data", namespace=namespace)
    assert bound["spec"]["volumeName"] == pv_name
    assert bound["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"


async def test_dynamic_provisioning_selects_the_node_then_waits_for_the_provisioner(
    admin_api: Client,
    operator_api: Client,
    namespace: str,
    make_node: NodeFactory,
    storage: list[tuple[Any, str]],
) -> None:
    nodes, _ = await _setup(admin_api, namespace, make_node, storage, provisioner="example.com/csi")
    handle = MirrorHandle(operator_api, namespace, nodes, KubeVolumeWriter(operator_api))
    await handle.refresh()
    plugin = volumebinding.new({"bindTimeoutSeconds": 1}, handle)
    pod = _pod(namespace)
    state = CycleState()
    plugin.pre_filter(state, pod, list(handle.snapshot))
    for info in handle.snapshot:
        assert plugin.filter(state, pod, info).ok
    chosen = nodes[1].name
    assert plugin.reserve(state, pod, chosen).ok
    mirror = asyncio.create_task(handle.run())
    try:
        status = await plugin.pre_bind(state, pod, chosen)
    finally:
        mirror.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await mirror
    assert status.code is Code.ERROR  # nobody provisions here: the wait runs out
    claim = await admin_api.get(PERSISTENT_VOLUME_CLAIMS, "data", namespace=namespace)
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == chosen
    assert "volumeName" not in claim["spec"]
