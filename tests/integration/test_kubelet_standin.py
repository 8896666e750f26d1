"""The kubelet stand-in (tests/support/kubelet_standin.py) against the control plane.

Covers: a bound pod without claims becomes Running with Ready conditions; a bound pod whose
claim is not reserved for it stays Pending until the reservation is written, then runs (and
`dra-operator verify` finds the result clean); graceful deletion of a bound pod completes;
`finish` reports Succeeded or Failed; unbound pods are left alone.

The stand-in handles pods one at a time in event order, so "still Pending" is asserted after a
pod created later has been handled, never after a sleep.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import claim_spec, gpus, resource_claim, resource_slice
from tests.support.kubelet_standin import KubeletStandIn, is_gone, phase_is, wait_for_pod

from dra_operator import controlplane
from dra_operator.kube import PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
SLICES = dra("resourceslices")


def _pod(name: str, node: str | None, claim: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if node is not None:
        spec["nodeName"] = node
    if claim is not None:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def _phase(api: Client, namespace: str, name: str) -> str:
    pod = await api.get(PODS, name, namespace=namespace)
    phase: str = pod["status"]["phase"]
    return phase


async def test_bound_pod_runs_and_unbound_pod_waits(
    admin_api: Client, namespace: str, make_node: NodeFactory, kubelet_standin: KubeletStandIn
) -> None:
    node = (await make_node())["metadata"]["name"]
    await admin_api.create(PODS, _pod("unbound", None), namespace=namespace)
    await admin_api.create(PODS, _pod("bound", node), namespace=namespace)

    running = await wait_for_pod(admin_api, namespace, "bound", phase_is("Running"))

    assert running is not None
    conditions = {c["type"]: c["status"] for c in running["status"]["conditions"]}
    assert conditions["Ready"] == "True"
    assert running["status"]["containerStatuses"][0]["state"]["running"]
    assert await _phase(admin_api, namespace, "unbound") == "Pending"


async def test_pod_runs_once_its_claim_is_reserved(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    kubelet_standin: KubeletStandIn,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    driver = f"{namespace}.example.com"
    slice_name = f"{namespace}-slice"
    pool = resource_slice(node, driver, gpus(1), name=slice_name, pool="pool")
    await admin_api.create(SLICES, pool)
    claim = resource_claim(
        "c", claim_spec("gpu"), finalizers=["resource.kubernetes.io/delete-protection"]
    )
    await admin_api.create(CLAIMS, claim, namespace=namespace)
    pod = await admin_api.create(PODS, _pod("user", node, claim="c"), namespace=namespace)
    await admin_api.create(PODS, _pod("later", node), namespace=namespace)
    await wait_for_pod(admin_api, namespace, "later", phase_is("Running"))
    assert await _phase(admin_api, namespace, "user") == "Pending"

    result = {"request": "gpu", "driver": driver, "pool": "pool", "device": "gpu-0"}
    consumer = {"resource": "pods", "name": "user", "uid": pod["metadata"]["uid"]}
    status = {"allocation": {"devices": {"results": [result]}}, "reservedFor": [consumer]}
    await admin_api.patch(
        CLAIMS, "c", {"status": status}, namespace=namespace, subresource="status"
    )

    await wait_for_pod(admin_api, namespace, "user", phase_is("Running"))
    verify = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("dra-operator")),
        "verify",
        "--kubeconfig",
        str(control_plane.admin_kubeconfig),
        "--namespace",
        namespace,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await verify.communicate()
    await admin_api.delete(SLICES, slice_name)
    assert verify.returncode == 0, out.decode()


async def test_graceful_deletion_completes(
    admin_api: Client, namespace: str, make_node: NodeFactory, kubelet_standin: KubeletStandIn
) -> None:
    node = (await make_node())["metadata"]["name"]
    await admin_api.create(PODS, _pod("doomed", node), namespace=namespace)
    await wait_for_pod(admin_api, namespace, "doomed", phase_is("Running"))

    deleting = await admin_api.delete(PODS, "doomed", namespace=namespace)

    assert deleting["metadata"]["deletionTimestamp"]  # graceful: the kubelet must finish it
    assert await wait_for_pod(admin_api, namespace, "doomed", is_gone) is None


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
async def test_finish_reports_a_terminal_phase(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    kubelet_standin: KubeletStandIn,
    phase: str,
) -> None:
    node = (await make_node())["metadata"]["name"]
    await admin_api.create(PODS, _pod("job", node), namespace=namespace)
    await wait_for_pod(admin_api, namespace, "job", phase_is("Running"))

    finished = await kubelet_standin.finish(namespace, "job", phase)

    assert finished["status"]["phase"] == phase
    exit_code = finished["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"]
    assert exit_code == (0 if phase == "Succeeded" else 1)


async def test_only_the_served_nodes_are_handled(
    admin_api: Client, namespace: str, make_node: NodeFactory
) -> None:
    mine = (await make_node())["metadata"]["name"]
    other = (await make_node())["metadata"]["name"]
    async with KubeletStandIn(admin_api, namespace=namespace, nodes={mine}):
        await admin_api.create(PODS, _pod("elsewhere", other), namespace=namespace)
        await admin_api.create(PODS, _pod("here", mine), namespace=namespace)
        await wait_for_pod(admin_api, namespace, "here", phase_is("Running"))
    assert await _phase(admin_api, namespace, "elsewhere") == "Pending"
