"""A WaitForFirstConsumer local volume is bound where the pod runs (issue #28's volume family).

Run beside kube-scheduler and kube-controller-manager with the shipped routing (or on the
local control plane's real nodes): a pod with a device claim and a WaitForFirstConsumer claim
whose only PV is a local volume on one node is placed by the operator on that node, the claim
is bound to the PV, and the pod runs there.

The operator's VolumeBinding finds the PV, binds the claim to it in PreBind and binds the pod;
the PV's watch event may reach the operator after the pod's, so a pod first found without a
PV is decided again when the PV arrives.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from tests.support.operator import wait_for

from dra_operator import names
from dra_operator.controlplane import TEST_IMAGE
from dra_operator.errors import APINotFoundError
from dra_operator.kube import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, STORAGE_CLASSES
from e2e._scene import REQUEST, TEMPLATE, Scene

pytestmark = pytest.mark.controlplane

HOSTNAME = "kubernetes.io/hostname"
MOUNTED = "data-mounted"
# The container says whether the kubelet mounted the volume at /data, then waits.
SHOW_MOUNT = (
    f'grep -q " /data " /proc/mounts && echo {MOUNTED}; trap "exit 0" TERM; sleep 3600 & wait'
)


@pytest.fixture
def on_nodes(scene: Scene) -> Scene:
    if not scene.real_nodes:
        pytest.skip("needs nodes whose kubelets mount the local volume")
    return scene


async def test_a_wffc_local_volume_is_bound_and_the_pod_runs_on_its_node(on_nodes: Scene) -> None:
    scene = on_nodes
    await scene.template()
    node = sorted(scene.real_nodes)[-1]
    sc = f"local-{scene.namespace}"
    pv = f"pv-{scene.namespace}"
    created: list[tuple[Any, str]] = []
    try:
        await scene.api.create(
            STORAGE_CLASSES,
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": sc},
                "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "WaitForFirstConsumer",
            },
        )
        created.append((STORAGE_CLASSES, sc))
        await scene.api.create(
            PERSISTENT_VOLUMES,
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": pv},
                "spec": {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": sc,
                    "local": {"path": "/tmp"},
                    "nodeAffinity": {
                        "required": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": HOSTNAME, "operator": "In", "values": [node]}
                                    ]
                                }
                            ]
                        }
                    },
                },
            },
        )
        created.append((PERSISTENT_VOLUMES, pv))
        await scene.api.create(
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
            namespace=scene.namespace,
        )
        await scene.api.create(
            PODS,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "trainer"},
                "spec": {
                    "schedulerName": names.DEFAULT_SCHEDULER_NAME,
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {
                            "name": "main",
                            "image": TEST_IMAGE,
                            "command": ["/bin/sh", "-c", SHOW_MOUNT],
                            "resources": {"claims": [{"name": REQUEST}]},
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        }
                    ],
                    "resourceClaims": [{"name": REQUEST, "resourceClaimTemplateName": TEMPLATE}],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
                },
            },
            namespace=scene.namespace,
        )
        running = await scene.running("trainer")
        assert running["spec"]["nodeName"] == node

        async def bound() -> dict[str, Any] | None:
            claim = await scene.api.get(PERSISTENT_VOLUME_CLAIMS, "data", namespace=scene.namespace)
            return claim if (claim.get("status") or {}).get("phase") == "Bound" else None

        claim = await wait_for(bound, what="claim data Bound")
        assert claim["spec"]["volumeName"] == pv

        async def mounted() -> bool:
            code, out = await scene.kubectl("logs", "trainer", f"--namespace={scene.namespace}")
            return code == 0 and MOUNTED in out.splitlines()

        await wait_for(mounted, what="trainer reporting /data mounted")
    finally:
        await scene.delete_pod("trainer")
        with contextlib.suppress(APINotFoundError):
            await scene.api.delete(PERSISTENT_VOLUME_CLAIMS, "data", namespace=scene.namespace)
        for resource, name in reversed(created):
            with contextlib.suppress(APINotFoundError):
                await scene.api.delete(resource, name)
