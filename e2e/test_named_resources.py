"""1.30's resource.k8s.io/v1alpha2 on a real 1.30 API server (skipped elsewhere).

Covers: every v1alpha2 kind
created on the server reads back exactly as the model renders it (the fixtures of
tests/unit/model/data/v1alpha2, with status written through /status); 1.30 named
resources allocated with `allocator.allocate_named` from objects read as the operator's
RBAC-limited identity (deploy/'s ClusterRole), written back through /status with the
`dra.k8s.io/delete-protection` finalizer in 1.30's shape (which the server validates), and a
second claim allocated against the first never gets one of its instances (`verify.check_named`
finds no instance allocated twice or unpublished).

Not covered: a running operator allocating 1.30 named resources for pods (it runs classic DRA
there: e2e/test_classic.py; e2e/test_discovery.py checks what discovery reads).
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dra_operator.allocator import (
    NamedClaim,
    allocate_named,
    claim_parameters,
    class_parameters,
)
from dra_operator.app import CLASSIC_VERSION
from dra_operator.kube import NAMESPACES, Client, dra, load_kubeconfig
from dra_operator.model import v1alpha2
from dra_operator.verify import Code, Severity, check_named
from e2e._target import Target

pytestmark = pytest.mark.controlplane

DATA = Path(__file__).parents[1] / "tests" / "unit" / "model" / "data" / "v1alpha2"
PLURALS = {
    "ResourceClass": "resourceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "PodSchedulingContext": "podschedulingcontexts",
    "ResourceSlice": "resourceslices",
    "ResourceClassParameters": "resourceclassparameters",
    "ResourceClaimParameters": "resourceclaimparameters",
}
DRIVER = "gpu.e2e.dra-operator.dev"


def resource(plural: str) -> Any:
    return dra(plural, CLASSIC_VERSION)


@pytest.fixture
async def namespace(e2e_api: Client) -> AsyncIterator[str]:
    if CLASSIC_VERSION not in await e2e_api.served_versions("resource.k8s.io"):
        pytest.skip("the server does not serve resource.k8s.io/v1alpha2 (1.31 and newer)")
    served = await e2e_api.api_resources("resource.k8s.io", CLASSIC_VERSION)
    if not any(r.get("name") == "resourceslices" for r in served):
        pytest.skip("no 1.30 structured parameters in this v1alpha2 (1.27-1.29)")
    name = f"e2e-v1alpha2-{uuid.uuid4().hex[:8]}"
    await e2e_api.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    yield name
    await e2e_api.delete(NAMESPACES, name)


@pytest.fixture
async def operator_api(target: Target) -> AsyncIterator[Client]:
    async with Client(load_kubeconfig(target.operator_kubeconfig)) as api:
        yield api


def fresh(raw: dict[str, Any], namespace: str, name: str) -> dict[str, Any]:
    """A fixture as a new object: our namespace and name, no server-set metadata."""
    body = copy.deepcopy(raw)
    meta = body["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "generateName"):
        meta.pop(key, None)
    for key in ("ownerReferences", "finalizers"):  # no real owner; nothing to block cleanup
        meta.pop(key, None)
    meta["name"] = name
    if "namespace" in meta:
        meta["namespace"] = namespace
    return body


def served_json(obj: dict[str, Any]) -> dict[str, Any]:
    """What the model keeps of a server object (managedFields are not modelled)."""
    out = copy.deepcopy(obj)
    out["metadata"].pop("managedFields", None)
    return out


@pytest.mark.parametrize("fixture", sorted(p.name for p in DATA.glob("*.json")))
async def test_objects_read_back_as_the_model_renders_them(
    fixture: str, namespace: str, e2e_api: Client
) -> None:
    raw = json.loads((DATA / fixture).read_text())
    res = resource(PLURALS[raw["kind"]])
    name = f"{namespace}-{fixture.removesuffix('.json')}"
    body = fresh(raw, namespace, name)
    created = await e2e_api.create(res, body, namespace=namespace if res.namespaced else None)
    try:
        if "status" in raw:  # claims and scheduling contexts: written through /status
            status = copy.deepcopy(raw["status"])
            created["status"] = status
            created = await e2e_api.update(res, created, subresource="status")
            assert created["status"] == status
        got = served_json(
            await e2e_api.get(res, name, namespace=created["metadata"].get("namespace"))
        )
        assert v1alpha2.render_object(v1alpha2.parse_object(got)) == got
        assert {k: v for k, v in got.items() if k != "metadata"} == {
            k: v for k, v in body.items() if k != "metadata"
        }
    finally:
        if not res.namespaced:
            await e2e_api.delete(res, name)


def _instances(count: int) -> list[dict[str, Any]]:
    return [
        {"name": f"gpu-{i}", "attributes": [{"name": "memory", "quantity": f"{16 * (i + 1)}Gi"}]}
        for i in range(count)
    ]


async def test_named_resources_are_allocated_and_written_in_1_30_shape(
    namespace: str, e2e_api: Client, operator_api: Client
) -> None:
    cls_name = f"{namespace}.gpu"
    slices = [f"{namespace}-{node}" for node in ("node-a", "node-b")]
    await e2e_api.create(
        resource("resourceclasses"),
        {
            "apiVersion": v1alpha2.GROUP_VERSION,
            "kind": "ResourceClass",
            "metadata": {"name": cls_name},
            "driverName": DRIVER,
            "structuredParameters": True,
        },
    )
    try:
        for slice_name, node in zip(slices, ("node-a", "node-b"), strict=True):
            await e2e_api.create(
                resource("resourceslices"),
                {
                    "apiVersion": v1alpha2.GROUP_VERSION,
                    "kind": "ResourceSlice",
                    "metadata": {"name": slice_name},
                    "nodeName": node,
                    "driverName": DRIVER,
                    "namedResources": {"instances": _instances(3)},
                },
            )
        await e2e_api.create(
            resource("resourceclaimparameters"),
            {
                "apiVersion": v1alpha2.GROUP_VERSION,
                "kind": "ResourceClaimParameters",
                "metadata": {"name": "big", "namespace": namespace},
                "driverRequests": [
                    {
                        "driverName": DRIVER,
                        "requests": [
                            {
                                "namedResources": {
                                    "selector": 'attributes.quantity["memory"]'
                                    '.compareTo(quantity("20Gi")) > 0'
                                }
                            }
                        ],
                    }
                ],
            },
            namespace=namespace,
        )
        for claim in ("first", "second"):
            await e2e_api.create(
                resource("resourceclaims"),
                {
                    "apiVersion": v1alpha2.GROUP_VERSION,
                    "kind": "ResourceClaim",
                    "metadata": {"name": claim, "namespace": namespace},
                    "spec": {
                        "resourceClassName": cls_name,
                        "parametersRef": {
                            "apiGroup": "resource.k8s.io",
                            "kind": "ResourceClaimParameters",
                            "name": "big",
                        },
                    },
                },
                namespace=namespace,
            )
        picked = [
            await _allocate(operator_api, namespace, claim, cls_name, slices)
            for claim in ("first", "second")
        ]
        assert picked == [["gpu-1"], ["gpu-2"]]  # gpu-0 is too small; the second avoids gpu-1
        claims = await e2e_api.list(resource("resourceclaims"), namespace=namespace)
        listed = (await e2e_api.list(resource("resourceslices")))["items"]
        violations = check_named(
            [v1alpha2.parse_resource_claim(c) for c in claims["items"]],
            [v1alpha2.parse_resource_slice(s) for s in listed if s["metadata"]["name"] in slices],
        )
        # Clean but for the finalizer, which _allocate removes again so the namespace can go.
        assert {(v.code, v.severity) for v in violations} == {
            (Code.FINALIZER_MISSING, Severity.WARNING)
        }
    finally:
        for slice_name in slices:
            await e2e_api.delete(resource("resourceslices"), slice_name)
        await e2e_api.delete(resource("resourceclasses"), cls_name)


async def _allocate(
    api: Client, namespace: str, name: str, cls_name: str, slice_names: list[str]
) -> list[str]:
    """Read everything as the operator's identity, allocate on node-a, write, read back."""
    cls = v1alpha2.parse_resource_class(await api.get(resource("resourceclasses"), cls_name))
    listed = await api.list(resource("resourceslices"))
    slices = [
        v1alpha2.parse_resource_slice(s)
        for s in listed["items"]
        if s["metadata"]["name"] in slice_names
    ]
    claims_json = (await api.list(resource("resourceclaims"), namespace=namespace))["items"]
    claims = {c["metadata"]["name"]: v1alpha2.parse_resource_claim(c) for c in claims_json}
    params = await api.list(resource("resourceclaimparameters"), namespace=namespace)
    class_params = await api.list(resource("resourceclassparameters"), namespace=namespace)
    claim = claims[name]
    ready = NamedClaim(
        claim=claim,
        resource_class=cls,
        class_parameters=class_parameters(
            cls, [v1alpha2.parse_resource_class_parameters(p) for p in class_params["items"]]
        ),
        claim_parameters=claim_parameters(
            claim, cls, [v1alpha2.parse_resource_claim_parameters(p) for p in params["items"]]
        ),
    )
    [(driver, allocation)] = allocate_named(
        [ready],
        node="node-a",
        node_labels={"kubernetes.io/hostname": "node-a"},
        slices=slices,
        allocated=[c for c in claims.values() if c.status.allocation is not None],
    )
    current = next(c for c in claims_json if c["metadata"]["name"] == name)
    current["metadata"]["finalizers"] = [v1alpha2.FINALIZER]
    current = await api.update(resource("resourceclaims"), current)
    status = v1alpha2.ResourceClaimStatus(driver_name=driver, allocation=allocation)
    current["status"] = v1alpha2.render_claim_status(status)
    written = await api.update(resource("resourceclaims"), current, subresource="status")
    back = v1alpha2.parse_resource_claim(written)
    assert back.status == status
    assert back.metadata.finalizers == (v1alpha2.FINALIZER,)
    # The claim must not keep the namespace from going away.
    written["metadata"]["finalizers"] = []
    await api.update(resource("resourceclaims"), written)
    data = allocation.resource_handles[0].structured_data
    assert data is not None and data.node_name == "node-a"
    return [r.named_resources.name for r in data.results if r.named_resources]
