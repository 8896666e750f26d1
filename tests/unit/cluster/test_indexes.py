"""Index functions: pods by claim and template, claims by owner pod, slices by pool and node."""

from __future__ import annotations

import pytest

from dra_operator.cluster import (
    SLICE_INDEXERS,
    ObjectKey,
    PoolKey,
    Store,
    claim_owner_pod_uids,
    pod_claim_keys,
    pod_template_keys,
    pools_on_node,
)
from dra_operator.model import (
    ObjectMeta,
    OwnerReference,
    Pod,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    PodStatus,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)

POD = Pod(
    metadata=ObjectMeta(name="p", namespace="ns", uid="pod-uid"),
    spec=PodSpec(
        resource_claims=(
            PodResourceClaim(name="shared", resource_claim_name="team-gpu"),
            PodResourceClaim(name="gpu", resource_claim_template_name="gpu-template"),
            PodResourceClaim(name="skipped", resource_claim_template_name="other"),
            PodResourceClaim(name="pending", resource_claim_template_name="gpu-template"),
        )
    ),
    status=PodStatus(
        resource_claim_statuses=(
            PodResourceClaimStatus(name="gpu", resource_claim_name="p-gpu-x7k2q"),
            PodResourceClaimStatus(name="skipped", resource_claim_name=None),
        )
    ),
)


def test_pod_claim_keys_are_the_resolved_claims() -> None:
    assert pod_claim_keys(POD) == [ObjectKey("ns", "team-gpu"), ObjectKey("ns", "p-gpu-x7k2q")]


def test_pod_template_keys_name_every_template() -> None:
    assert pod_template_keys(POD) == [
        ObjectKey("ns", "gpu-template"),
        ObjectKey("ns", "other"),
        ObjectKey("ns", "gpu-template"),
    ]


def owner(api_version: str, kind: str, *, controller: bool = True) -> OwnerReference:
    return OwnerReference(
        api_version=api_version, kind=kind, name="o", uid="u", controller=controller
    )


@pytest.mark.parametrize(
    ("owner_ref", "expected"),
    [
        pytest.param(owner("v1", "Pod"), ["u"], id="controller-pod"),
        pytest.param(owner("v1", "Pod", controller=False), [], id="not-controller"),
        pytest.param(owner("apps/v1", "Pod"), [], id="other-group"),
        pytest.param(owner("scheduling.k8s.io/v1alpha2", "PodGroup"), [], id="podgroup"),
    ],
)
def test_claims_are_indexed_by_their_controlling_pod(
    owner_ref: OwnerReference, expected: list[str]
) -> None:
    meta = ObjectMeta(name="c", namespace="ns", owner_references=(owner_ref,))
    claim = ResourceClaim(metadata=meta)
    assert claim_owner_pod_uids(claim) == expected


def slice_(name: str, pool: str, node: str | None) -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=name),
        driver="gpu.example.com",
        pool=ResourcePool(name=pool, generation=1, resource_slice_count=1),
        node_name=node,
        all_nodes=None if node else True,
    )


def test_pools_by_node() -> None:
    slices: Store[ResourceSlice] = Store(
        "resourceslices", lambda raw: SLICES[raw["name"]], SLICE_INDEXERS
    )
    for name in SLICES:
        slices.apply("ADDED", {"metadata": {"name": name, "resourceVersion": "1"}, "name": name})
    assert pools_on_node(slices, "node-a") == {PoolKey("gpu.example.com", "node-a")}
    assert pools_on_node(slices, None) == {PoolKey("gpu.example.com", "network")}
    assert pools_on_node(slices, "node-c") == frozenset()
    assert [
        e.key.name for e in slices.by_index("slice-pool", PoolKey("gpu.example.com", "node-a"))
    ] == ["a-1", "a-2"]


SLICES = {
    "a-1": slice_("a-1", "node-a", "node-a"),
    "a-2": slice_("a-2", "node-a", "node-a"),
    "b-1": slice_("b-1", "node-b", "node-b"),
    "net": slice_("net", "network", None),
}
