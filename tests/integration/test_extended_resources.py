"""Extended resources backed by DRA (KEP-5004) against a real kube-apiserver, as the operator.

A DeviceClass maps `example.com/gpu` (`spec.extendedResourceName`); a pod for our scheduler
asks for `example.com/gpu: 2` in its container resources. The operator (claims, scheduler and
eviction controllers, in-process, under deploy/base's ClusterRole) must: create the special
claim as kube-scheduler does (generateName `<pod>-extended-resources-`, the annotation, the pod
as controller, request `container-0-request-<j>`), allocate and reserve it, write
`pod.status.extendedResourceClaimStatus`, bind the pod, and release and delete the claim with
the pod; leave a node that advertises `example.com/gpu` natively to its device plugin; evict
the pod when its device gets a NoExecute taint; and explain a pod that does not fit (the
FailedScheduling event and `dra-operator explain`). Nothing here depends on the Kubernetes
release beyond DRAExtendedResource being on (beta in 1.36, GA in 1.37).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from tests.support.cli import run_command
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import device_class, driver_of, gpus, resource_slice, unique_name
from tests.support.kubelet_standin import KubeletStandIn
from tests.support.operator import (
    InProcessOperator,
    failed_scheduling,
    verify_clean,
    wait_for,
)

from dra_operator import controlplane, names
from dra_operator.cli._cluster_options import Target
from dra_operator.cli._taint import change_taint
from dra_operator.errors import APINotFoundError
from dra_operator.kube import PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")
GPU = "example.com/gpu"
FINALIZER = "test.dra-operator.dev/keep"


@pytest.fixture
async def operator(run_operator: Any) -> AsyncIterator[InProcessOperator]:
    yield await run_operator(controllers=frozenset({"claims", "scheduler", "eviction"}))


@contextlib.asynccontextmanager
async def gpu_cluster(
    make_node: NodeFactory, cluster: Callable[..., Any], *, devices: int, native: str = ""
) -> AsyncIterator[tuple[str, str]]:
    """A node (advertising `native` example.com/gpu when given) with `devices` GPUs in a
    slice, and a class mapping example.com/gpu to them: (node, class)."""
    capacity = {GPU: native} if native else None
    node = (await make_node(capacity=capacity))["metadata"]["name"]
    gpu = unique_name("gpu")
    body = device_class(gpu)
    body["spec"]["extendedResourceName"] = GPU
    await cluster(CLASSES, body)
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(devices)))
    yield node, gpu


def gpu_pod(name: str, node: str, count: int = 2, **metadata: Any) -> dict[str, Any]:
    """A pod for our scheduler, pinned to `node`, asking for `count` example.com/gpu."""
    container = {
        "name": "c",
        "image": "x",
        "resources": {
            "requests": {"cpu": "100m", GPU: str(count)},
            "limits": {GPU: str(count)},
        },
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **metadata},
        "spec": {
            "schedulerName": names.DEFAULT_SCHEDULER_NAME,
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [container],
        },
    }


async def bound_to(api: Client, namespace: str, pod: str) -> str | None:
    found: str | None = (await api.get(PODS, pod, namespace=namespace))["spec"].get("nodeName")
    return found


async def special_claims(api: Client, namespace: str) -> list[dict[str, Any]]:
    items = (await api.list(CLAIMS, namespace=namespace)).get("items") or []
    annotation = names.EXTENDED_RESOURCE_CLAIM_ANNOTATION
    return [c for c in items if (c["metadata"].get("annotations") or {}).get(annotation)]


async def no_special_claims(api: Client, namespace: str, what: str) -> None:
    async def gone() -> bool:
        return not await special_claims(api, namespace)

    await wait_for(gone, what=f"the special claim {what}")


async def scheduled(api: Client, namespace: str, pod: str) -> dict[str, Any]:
    """The pod once bound with its extended-resource claim status written."""

    async def ready() -> dict[str, Any] | None:
        raw = await api.get(PODS, pod, namespace=namespace)
        status = raw.get("status") or {}
        if raw["spec"].get("nodeName") and status.get("extendedResourceClaimStatus"):
            return raw
        return None

    return await wait_for(ready, what=f"pod {pod} bound with its extended resource claim")


async def test_the_pod_gets_its_special_claim_status_and_loses_it_with_the_pod(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    async with gpu_cluster(make_node, cluster, devices=3) as (node, gpu):
        await admin_api.create(PODS, gpu_pod("p", node), namespace=namespace)
        pod = await scheduled(admin_api, namespace, "p")
        assert pod["spec"]["nodeName"] == node
        (claim,) = await special_claims(admin_api, namespace)
        meta = claim["metadata"]
        assert meta["name"].startswith("p-extended-resources-")
        assert meta["generateName"] == "p-extended-resources-"
        assert meta["annotations"] == {names.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
        assert meta["ownerReferences"] == [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "p",
                "uid": pod["metadata"]["uid"],
                "controller": True,
            }
        ]
        assert meta["finalizers"] == [names.DELETE_PROTECTION_FINALIZER]
        (request,) = claim["spec"]["devices"]["requests"]
        assert request["name"] == "container-0-request-1"  # sorted names: cpu, example.com/gpu
        assert request["exactly"]["deviceClassName"] == gpu
        assert request["exactly"]["count"] == 2
        results = claim["status"]["allocation"]["devices"]["results"]
        assert sorted(r["device"] for r in results) == ["gpu-0", "gpu-1"]
        assert {r["pool"] for r in results} == {node}
        assert [r["name"] for r in claim["status"]["reservedFor"]] == ["p"]
        assert pod["status"]["extendedResourceClaimStatus"] == {
            "requestMappings": [
                {"containerName": "c", "resourceName": GPU, "requestName": "container-0-request-1"}
            ],
            "resourceClaimName": meta["name"],
        }
        await verify_clean(control_plane, namespace)
        metrics = operator.operator.metrics.render().decode()
        assert 'scheduler_resourceclaim_creates_total{status="success"} 1.0' in metrics
        assert (
            'dynamic_resource_allocation_resourceclaim_creates_total{admin_access="false",'
            'owner_api_group="",owner_api_kind="Pod",status="success"} 1.0'
        ) in metrics

        await admin_api.delete(PODS, "p", namespace=namespace, grace_period_seconds=0)
        await no_special_claims(admin_api, namespace, "deleted with its pod")


async def test_a_node_advertising_the_resource_natively_takes_the_device_plugin_path(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
) -> None:
    async with gpu_cluster(make_node, cluster, devices=3, native="4") as (node, _):
        await admin_api.create(PODS, gpu_pod("p", node), namespace=namespace)
        assert await wait_for(lambda: bound_to(admin_api, namespace, "p")) == node
        pod = await admin_api.get(PODS, "p", namespace=namespace)
        assert "extendedResourceClaimStatus" not in (pod.get("status") or {})
        assert await special_claims(admin_api, namespace) == []


async def test_a_no_execute_device_taint_evicts_the_pod_and_frees_the_claim(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
    kubelet_standin: KubeletStandIn,
) -> None:
    async with gpu_cluster(make_node, cluster, devices=2) as (node, gpu):
        await admin_api.create(
            PODS, gpu_pod("p", node, finalizers=[FINALIZER]), namespace=namespace
        )
        await scheduled(admin_api, namespace, "p")
        options = {
            "target": Target(control_plane.admin_kubeconfig),
            "driver": driver_of(gpu),
            "pool": node,
            "device": "gpu-0",
            "key": "example.com/broken",
            "value": "true",
            "effect": "NoExecute",
            "effect_filter": None,
            "via": "slice",
            "name": None,
        }
        await change_taint(options, add=True)

        async def evicted() -> dict[str, Any] | None:
            pod = await admin_api.get(PODS, "p", namespace=namespace)
            return pod if pod["metadata"].get("deletionTimestamp") else None

        pod = await wait_for(evicted, what="pod p evicted")
        conditions = (pod.get("status") or {}).get("conditions") or []
        assert any(
            c["type"] == "DisruptionTarget" and c["reason"] == "DeletionByDeviceTaintManager"
            for c in conditions
        )
        await admin_api.patch(PODS, "p", {"metadata": {"finalizers": None}}, namespace=namespace)
        await no_special_claims(admin_api, namespace, "of the evicted pod deleted")


async def test_a_pod_that_does_not_fit_is_explained(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    async with gpu_cluster(make_node, cluster, devices=1) as (node, gpu):
        await admin_api.create(PODS, gpu_pod("p", node), namespace=namespace)
        messages = await wait_for(
            lambda: failed_scheduling(admin_api, namespace, "p"), what="FailedScheduling"
        )
        assert (
            f"cannot allocate extended resource {GPU} (request container-0-request-1"
            in (messages[0])
        )
        assert await special_claims(admin_api, namespace) == []
        code, text = await run_command(
            "dra-operator", control_plane.admin_kubeconfig, "explain", "pod", "p", "-n", namespace
        )
        assert code == 3, text
        assert f"extended resource {GPU}: 2 from DeviceClass {gpu}" in text, text
        assert f"node {node}: " in text, text
        assert "request container-0-request-1 (2 needed): considered 1" in text, text
    with contextlib.suppress(APINotFoundError):
        await admin_api.delete(PODS, "p", namespace=namespace, grace_period_seconds=0)
