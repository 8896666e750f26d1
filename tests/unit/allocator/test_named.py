"""1.30's named-resources allocation (classic-dra.md §6.2 and §6.4).

Covers: parameter lookup (direct, generated, defaults, not-found texts); first free instance
per request in slice order, class filter and request selector; instances of allocated claims
and of earlier claims of the same pod are never handed out again (upstream's same-snapshot
quirk is not copied); the 1.30 result shape (hostname node selector, shareable, vendor
parameters per driver and request); class `suitableNodes`; CEL errors in upstream's wording.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dra_operator.allocator import (
    NamedAllocationError,
    NamedClaim,
    allocate_named,
    claim_parameters,
    class_parameters,
)
from dra_operator.model import v1alpha2

DATA = Path(__file__).parents[1] / "model" / "data" / "v1alpha2"


def load(name: str) -> Any:
    return v1alpha2.parse_object(json.loads((DATA / name).read_text()))


def meta(name: str, namespace: str = "ml") -> v1alpha2.ResourceClaim:
    raw = json.loads((DATA / "resourceclaim-structured.json").read_text())
    raw["metadata"] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    del raw["status"]
    claim = v1alpha2.parse_object(raw)
    assert isinstance(claim, v1alpha2.ResourceClaim)
    return claim


def instance(name: str, memory: str, mig: bool) -> dict[str, Any]:
    return {
        "name": name,
        "attributes": [{"name": "memory", "quantity": memory}, {"name": "mig", "bool": mig}],
    }


def slice_on(node: str, *instances: dict[str, Any]) -> v1alpha2.ResourceSlice:
    raw = {
        "apiVersion": "resource.k8s.io/v1alpha2",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu"},
        "nodeName": node,
        "driverName": "gpu.example.com",
        "namedResources": {"instances": list(instances)},
    }
    return v1alpha2.parse_resource_slice(raw)


CLASS: v1alpha2.ResourceClass = load("resourceclass.json")
CLASS_PARAMS: v1alpha2.ResourceClassParameters = load("resourceclassparameters.json")
CLAIM_PARAMS: v1alpha2.ResourceClaimParameters = load("resourceclaimparameters.json")
NODE_A = {"gpu": "yes", "kubernetes.io/hostname": "node-a"}
SLICES = [
    slice_on(
        "node-a",
        instance("gpu-0", "16Gi", True),  # too small for request 0, taken by request 1
        instance("gpu-1", "80Gi", False),  # fails the class filter (mig)
        instance("gpu-2", "80Gi", True),
        instance("gpu-3", "40Gi", True),
    )
]


def named(claim: v1alpha2.ResourceClaim) -> NamedClaim:
    return NamedClaim(
        claim=claim,
        resource_class=CLASS,
        class_parameters=class_parameters(CLASS, [CLASS_PARAMS]),
        claim_parameters=claim_parameters(claim, CLASS, [CLAIM_PARAMS]),
    )


def picks(allocation: v1alpha2.AllocationResult) -> list[str]:
    data = allocation.resource_handles[0].structured_data
    assert data is not None
    return [r.named_resources.name for r in data.results if r.named_resources]


def test_first_free_instance_per_request_in_the_1_30_shape() -> None:
    [(driver, allocation)] = allocate_named(
        [named(meta("a"))], node="node-a", node_labels=NODE_A, slices=SLICES, allocated=[]
    )
    assert driver == "gpu.example.com"
    rendered = v1alpha2.render_allocation_result(allocation)
    assert rendered == {
        "resourceHandles": [
            {
                "driverName": "gpu.example.com",
                "structuredData": {
                    "vendorClassParameters": {"kind": "GpuConfig", "sharing": "timeslice"},
                    "vendorClaimParameters": None,
                    "nodeName": "node-a",
                    "results": [
                        {"vendorRequestParameters": None, "namedResources": {"name": "gpu-2"}},
                        {
                            "vendorRequestParameters": {"mig": "1g"},
                            "namedResources": {"name": "gpu-0"},
                        },
                    ],
                },
            }
        ],
        "availableOnNodes": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-a"]}
                    ]
                }
            ]
        },
        "shareable": True,
    }


def test_allocated_instances_are_not_handed_out_again() -> None:
    [(_, first)] = allocate_named(
        [named(meta("a"))], node="node-a", node_labels=NODE_A, slices=SLICES, allocated=[]
    )
    held = meta("a")
    held = v1alpha2.ResourceClaim(
        metadata=held.metadata,
        spec=held.spec,
        status=v1alpha2.ResourceClaimStatus(driver_name="gpu.example.com", allocation=first),
    )
    with pytest.raises(NamedAllocationError, match=r"\(unsuitable\)"):
        allocate_named(
            [named(meta("b"))], node="node-a", node_labels=NODE_A, slices=SLICES, allocated=[held]
        )


def test_claims_of_one_pod_never_share_an_instance() -> None:
    """Upstream 1.30 would give both default claims gpu-0; the second gets gpu-2 here."""
    claims = [named(_without_parameters(meta(n))) for n in ("a", "b")]
    results = allocate_named(claims, node="node-a", node_labels=NODE_A, slices=SLICES, allocated=[])
    assert [picks(a) for _, a in results] == [["gpu-0"], ["gpu-2"]]


def _without_parameters(claim: v1alpha2.ResourceClaim) -> v1alpha2.ResourceClaim:
    spec = v1alpha2.ResourceClaimSpec(resource_class_name=claim.spec.resource_class_name)
    return v1alpha2.ResourceClaim(metadata=claim.metadata, spec=spec)


def test_default_parameters_are_one_shareable_instance_of_the_class_driver() -> None:
    params = claim_parameters(_without_parameters(meta("a")), CLASS, [])
    assert params.shareable
    [driver] = params.driver_requests
    assert driver.driver_name == "gpu.example.com"
    assert [r.selector for r in driver.requests] == ["true"]


def test_unsuitable_node_of_the_class() -> None:
    with pytest.raises(NamedAllocationError, match=r"\(unsuitable\)"):
        allocate_named(
            [named(meta("a"))],
            node="node-a",
            node_labels={"gpu": "no"},
            slices=SLICES,
            allocated=[],
        )


def test_instances_of_other_nodes_are_not_used() -> None:
    with pytest.raises(NamedAllocationError, match=r"\(unsuitable\)"):
        allocate_named(
            [named(meta("a"))], node="node-b", node_labels=NODE_A, slices=SLICES, allocated=[]
        )


def test_missing_attribute_is_a_cel_error_in_upstream_words() -> None:
    bare = [slice_on("node-a", {"name": "gpu-9"})]
    with pytest.raises(NamedAllocationError) as err:
        allocate_named(
            [named(meta("a"))], node="node-a", node_labels=NODE_A, slices=bare, allocated=[]
        )
    assert str(err.value) == (
        'checking structured parameters failed: checking node "node-a" and resources of driver '
        '"gpu.example.com": evaluate filter CEL expression: no such key: mig'
    )


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        pytest.param(
            v1alpha2.ClaimParametersReference(
                api_group="resource.k8s.io", kind="ResourceClaimParameters", name="nope"
            ),
            "claim parameters ml/nope not found",
            id="direct",
        ),
        pytest.param(
            v1alpha2.ClaimParametersReference(
                api_group="gpu.example.com", kind="GpuClaimParameters", name="nope"
            ),
            "generated claim parameters for GpuClaimParameters.gpu.example.com ml/nope not found",
            id="generated",
        ),
    ],
)
def test_claim_parameters_not_found(ref: v1alpha2.ClaimParametersReference, message: str) -> None:
    claim = meta("a")
    claim = v1alpha2.ResourceClaim(
        metadata=claim.metadata,
        spec=v1alpha2.ResourceClaimSpec(resource_class_name="gpu.example.com", parameters_ref=ref),
    )
    with pytest.raises(NamedAllocationError, match=message):
        claim_parameters(claim, CLASS, [CLAIM_PARAMS])


def test_generated_claim_parameters_are_found_by_their_origin() -> None:
    ref = v1alpha2.ClaimParametersReference(
        api_group="gpu.example.com", kind="GpuClaimParameters", name="two"
    )
    claim = meta("a")
    claim = v1alpha2.ResourceClaim(
        metadata=claim.metadata,
        spec=v1alpha2.ResourceClaimSpec(resource_class_name="gpu.example.com", parameters_ref=ref),
    )
    assert claim_parameters(claim, CLASS, [CLAIM_PARAMS]) is CLAIM_PARAMS


def test_class_parameters_not_found() -> None:
    with pytest.raises(NamedAllocationError, match="class parameters dra-system/gpu-class"):
        class_parameters(CLASS, [])
