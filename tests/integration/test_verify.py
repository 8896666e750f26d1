"""`dra-operator verify` on states built directly through the API with the admin identity.

Covers: a clean namespace exits 0 (also under the operator identity); two claims holding one
device, a reservation for a pod that does not exist, a bound pod whose claim is unallocated, a
pod bound to a node its claim's allocation excludes and a generated claim whose owner is gone
are each reported (and nothing else) with exit 1; a missing delete-protection finalizer is
only a warning (exit 0); the whole-cluster run sees the same violations.

The control plane is shared by the session and nothing deletes a namespace's contents (no
namespace controller), so these runs use `--namespace`, and every object is named by the
test's namespace. The API server refuses some broken states itself (`reservedFor` without an
allocation, more than 256 entries), so those are left to the unit tests.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import run_command
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import (
    claim_spec,
    consumer_pod,
    gpus,
    resource_claim,
    resource_slice,
)

from dra_operator import controlplane
from dra_operator.errors import APINotFoundError
from dra_operator.kube import PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
SLICES = dra("resourceslices")
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"


async def _verify(kubeconfig: Path, *args: str) -> tuple[int, str]:
    return await run_command("dra-operator", kubeconfig, "verify", *args)


async def _verify_json(kubeconfig: Path, *args: str) -> tuple[int, list[dict[str, str]]]:
    code, out = await _verify(kubeconfig, "-o", "json", *args)
    assert code in (0, 1), out
    violations: list[dict[str, str]] = json.loads(out)["violations"]
    return code, violations


def _found(violations: list[dict[str, str]]) -> set[tuple[str, str, str, str]]:
    return {(v["severity"], v["code"], v["kind"], v["name"]) for v in violations}


class Cluster:
    """Writes one test's objects: a pool of two devices on one node, claims and pods."""

    def __init__(self, api: Client, namespace: str, node: str) -> None:
        self.api, self.namespace, self.node = api, namespace, node
        self.driver = f"{namespace}.example.com"

    async def publish_pool(self) -> None:
        pool = resource_slice(
            self.node, self.driver, gpus(3), name=f"{self.namespace}-slice", pool="pool"
        )
        await self.api.create(SLICES, pool)

    async def unpublish_pool(self) -> None:
        with contextlib.suppress(APINotFoundError):
            await self.api.delete(SLICES, f"{self.namespace}-slice")

    async def claim(
        self,
        name: str,
        *,
        device: str | None = None,
        reserved_for: list[dict[str, str]] | None = None,
        finalizer: bool = True,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A claim of one device; allocated to `device` when given."""
        body = resource_claim(
            name,
            claim_spec("gpu"),
            finalizers=[DELETE_PROTECTION] if finalizer else [],
            **(metadata or {}),
        )
        created = await self.api.create(CLAIMS, body, namespace=self.namespace)
        if device is None:
            return created
        status: dict[str, Any] = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": self.driver, "pool": "pool", "device": device}
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [self.node]}
                            ]
                        }
                    ]
                },
            }
        }
        if reserved_for:
            status["reservedFor"] = reserved_for
        return await self.api.patch(
            CLAIMS, name, {"status": status}, namespace=self.namespace, subresource="status"
        )

    async def pod(
        self, name: str, claim: str, *, bound: bool = True, node: str | None = None
    ) -> dict[str, Any]:
        body = consumer_pod(name, claim=claim, node=(node or self.node) if bound else None)
        return await self.api.create(PODS, body, namespace=self.namespace)

    async def reserve(self, claim: str, pod: dict[str, Any]) -> None:
        current = await self.api.get(CLAIMS, claim, namespace=self.namespace)
        current["status"]["reservedFor"] = [_consumer(pod)]
        await self.api.update(CLAIMS, current, namespace=self.namespace, subresource="status")


def _consumer(pod: dict[str, Any]) -> dict[str, str]:
    meta = pod["metadata"]
    return {"resource": "pods", "name": meta["name"], "uid": meta["uid"]}


@pytest.fixture
async def cluster(
    admin_api: Client, namespace: str, make_node: NodeFactory
) -> AsyncIterator[Cluster]:
    node = await make_node()
    built = Cluster(admin_api, namespace, node["metadata"]["name"])
    await built.publish_pool()
    yield built
    await built.unpublish_pool()


async def _bound_pod_with_its_claim(cluster: Cluster) -> None:
    await cluster.claim("ok", device="gpu-1")
    pod = await cluster.pod("runner", "ok")
    await cluster.reserve("ok", pod)


async def test_clean_namespace_exits_zero(
    control_plane: controlplane.ControlPlaneState, cluster: Cluster
) -> None:
    await _bound_pod_with_its_claim(cluster)
    await cluster.claim("waiting")
    await cluster.pod("pending", "waiting", bound=False)

    code, out = await _verify(control_plane.admin_kubeconfig, "-n", cluster.namespace)
    assert (code, "No violations" in out) == (0, True), out


async def test_operator_identity_may_verify(
    control_plane: controlplane.ControlPlaneState, cluster: Cluster
) -> None:
    await _bound_pod_with_its_claim(cluster)

    code, out = await _verify(control_plane.operator_kubeconfig, "-n", cluster.namespace)

    assert code == 0, out


async def test_violations_are_reported_exactly(
    control_plane: controlplane.ControlPlaneState, cluster: Cluster, make_node: NodeFactory
) -> None:
    ns = cluster.namespace
    await cluster.claim("first", device="gpu-0")
    await cluster.claim("second", device="gpu-0")
    ghost = {"resource": "pods", "name": "ghost", "uid": str(uuid.uuid4())}
    await cluster.claim("dangling", device="gpu-1", reserved_for=[ghost])
    await cluster.claim("unallocated")
    await cluster.pod("stranded", "unallocated")
    orphan_owner = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "gone",
        "uid": str(uuid.uuid4()),
        "controller": True,
    }
    await cluster.claim(
        "gone-gpu-abcde",
        metadata={
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "ownerReferences": [orphan_owner],
        },
    )

    await cluster.claim("pinned", device="gpu-2")
    other_node = (await make_node())["metadata"]["name"]
    misplaced = await cluster.pod("misplaced", "pinned", node=other_node)
    await cluster.reserve("pinned", misplaced)

    code, violations = await _verify_json(control_plane.admin_kubeconfig, "-n", ns)

    assert code == 1
    assert _found(violations) == {
        ("error", "device-overallocated", "Device", f"{cluster.driver}/pool/gpu-0"),
        ("error", "reservation-stale", "ResourceClaim", f"{ns}/dangling"),
        ("error", "pod-claim-unallocated", "Pod", f"{ns}/stranded"),
        ("error", "owner-missing", "ResourceClaim", f"{ns}/gone-gpu-abcde"),
        ("error", "pod-node-not-admitted", "Pod", f"{ns}/misplaced"),
    }
    assert len(violations) == 5

    # The whole-cluster run sees the same (other tests may leave their own behind).
    code, everywhere = await _verify_json(control_plane.admin_kubeconfig)
    mine = [v for v in everywhere if v["name"].startswith((f"{ns}/", f"{cluster.driver}/"))]
    assert (code, _found(mine)) == (1, _found(violations))


async def test_missing_finalizer_only_warns(
    control_plane: controlplane.ControlPlaneState, cluster: Cluster
) -> None:
    await cluster.claim("unprotected", device="gpu-0", finalizer=False)

    code, violations = await _verify_json(control_plane.admin_kubeconfig, "-n", cluster.namespace)

    assert (code, _found(violations)) == (
        0,
        {("warning", "finalizer-missing", "ResourceClaim", f"{cluster.namespace}/unprotected")},
    )


async def test_table_names_each_violation(
    control_plane: controlplane.ControlPlaneState, cluster: Cluster
) -> None:
    await cluster.claim("first", device="gpu-0")
    await cluster.claim("second", device="gpu-0")

    code, out = await _verify(control_plane.admin_kubeconfig, "-n", cluster.namespace)

    assert code == 1
    assert "device-overallocated" in out
    assert "1 error(s), 0 warning(s)" in out
