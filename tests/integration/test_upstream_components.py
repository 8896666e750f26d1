"""`up --with-upstream`: kube-scheduler and kube-controller-manager work beside our apiserver.

Covers: both start with the release's DRA gates and answer /healthz, leader-elected under their
own identities as kind runs them (their Leases in kube-system); the scheduler binds a pod to a
fake Ready Node; the controller-manager's resourceclaim controller turns a pod's
ResourceClaimTemplate into a ResourceClaim (the upstream behaviour the operator's claims
controller mirrors, and the peer for later side-by-side runs).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.dra_objects import claim_spec, claim_template
from tests.support.skipping import skip_or_fail

from dra_operator import controlplane
from dra_operator.controlplane import node_manifest
from dra_operator.errors import APINotFoundError
from dra_operator.kube import LEASES, NAMESPACES, NODES, PODS, Client, dra

pytestmark = pytest.mark.controlplane


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[controlplane.ControlPlaneState]:
    binaries = controlplane.find_binaries()
    for name in ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager"):
        if not binaries.has(name):
            skip_or_fail(f"{name} missing in {binaries.directory}: run `make controlplane`")
    state = controlplane.up(state_dir=tmp_path / "state", binaries=binaries, with_upstream=True)
    try:
        yield state
    finally:
        controlplane.down(tmp_path / "state")


async def _wait_for(check: Any, timeout: float = 60.0) -> Any:
    async with asyncio.timeout(timeout):
        while True:
            found = await check()
            if found:
                return found
            await asyncio.sleep(0.2)


async def test_scheduler_binds_and_controller_manager_creates_claims(
    upstream: controlplane.ControlPlaneState,
) -> None:
    names = [c.name for c in upstream.components]
    assert names == ["etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager"]
    assert all(c.is_running() for c in upstream.components)
    await _exercise(upstream.admin_kubeconfig)


async def _exercise(kubeconfig: Path) -> None:
    async with Client.from_kubeconfig(kubeconfig) as api:
        for component in ("kube-scheduler", "kube-controller-manager"):

            async def holder(name: str = component) -> str:
                try:
                    lease = await api.get(LEASES, name, namespace="kube-system")
                except APINotFoundError:
                    return ""
                return str((lease.get("spec") or {}).get("holderIdentity") or "")

            assert await _wait_for(holder)
        ns = "upstream"
        await api.create(
            NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
        await api.create(NODES, node_manifest("worker"))
        await api.patch(NODES, "worker", {"spec": {"taints": []}})
        ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "fake"}
        await api.patch(NODES, "worker", {"status": {"conditions": [ready]}}, subresource="status")
        plain = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "plain", "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
        await api.create(PODS, plain)

        async def bound() -> str:
            pod = await api.get(PODS, "plain", namespace=ns)
            return str(pod["spec"].get("nodeName", ""))

        assert await _wait_for(bound) == "worker"

        template = claim_template("gpu", claim_spec("gpu.example.com"), namespace=ns)
        await api.create(dra("resourceclaimtemplates"), template)
        with_claim = {
            **plain,
            "metadata": {"name": "with-claim", "namespace": ns},
            "spec": {
                "containers": [
                    {"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}
                ],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
            },
        }
        await api.create(PODS, with_claim)

        async def generated() -> list[dict[str, Any]]:
            claims = await api.list(dra("resourceclaims"), namespace=ns)
            return list(claims["items"])

        (claim,) = await _wait_for(generated)
        annotations = claim["metadata"].get("annotations", {})
        assert annotations["resource.kubernetes.io/pod-claim-name"] == "gpu"
        assert claim["metadata"]["ownerReferences"][0]["name"] == "with-claim"
