"""explain for extended resources backed by DRA: per node, the special claim it would allocate.

node-1 has two GPUs in a slice; node-2 advertises `example.com/gpu` natively (device plugin).
A pod asking for 3 does not fit node-1 (explained by the special claim's request) and fits
node-2 without any claim; a pod whose special claim exists shows it allocated.
"""

from __future__ import annotations

from dataclasses import replace

from tests.unit.hooks.scenario import DRIVER, FEATURES, GPU_CLASS, gpu, node_slice

from dra_operator.cli._diagnose import diagnose_pod
from dra_operator.model import (
    AllocationResult,
    Container,
    ContainerExtendedResourceRequest,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    FrozenMap,
    Node,
    ObjectMeta,
    Pod,
    PodExtendedResourceClaimStatus,
    PodSpec,
    PodStatus,
    Quantity,
    ResourceClaim,
    ResourceClaimStatus,
)
from dra_operator.verify import ClusterState

GPU = "example.com/gpu"
CLASS = replace(GPU_CLASS, extended_resource_name=GPU)


def _pod(count: int, status: PodExtendedResourceClaimStatus | None = None) -> Pod:
    container = Container(name="c", requests=FrozenMap({GPU: Quantity(count)}))
    return Pod(
        metadata=ObjectMeta(name="p", namespace="ns", uid="pod-uid"),
        spec=PodSpec(containers=(container,)),
        status=PodStatus(extended_resource_claim_status=status),
    )


def _state(pod: Pod, *claims: ResourceClaim) -> ClusterState:
    return ClusterState(
        claims=claims,
        slices=(node_slice(gpu("gpu-0"), gpu("gpu-1")),),
        pods=(pod,),
        nodes=(
            Node(
                metadata=ObjectMeta(name="node-1"),
                allocatable=FrozenMap({"pods": Quantity(110)}),  # NodeResourcesFit counts pods
                ready=True,
            ),
            Node(
                metadata=ObjectMeta(name="node-2"),
                allocatable=FrozenMap({GPU: Quantity(4), "pods": Quantity(110)}),
                ready=True,
            ),
        ),
        classes=(CLASS,),
    )


def test_each_node_is_tried_with_the_claim_it_would_allocate() -> None:
    found = diagnose_pod(_state(_pod(3)), "ns", "p", FEATURES)
    assert found is not None
    assert found.extended == (f"{GPU}: 3 from DeviceClass gpu",)
    assert found.pending == ("ns/<extended-resources>",)
    node1, node2 = found.nodes
    assert not node1.fits
    (request,) = node1.requests
    assert (request.claim, request.request, request.needed) == (
        "ns/<extended-resources>",
        "container-0-request-0",
        3,
    )
    assert request.blocking == "considered: only 2 devices on this node"
    assert node2.fits
    assert node2.summary == "no claim needed: the node advertises the extended resources"


def test_an_existing_special_claim_is_shown_allocated() -> None:
    result = DeviceRequestAllocationResult(
        request="container-0-request-0", driver=DRIVER, pool="node-1", device="gpu-0"
    )
    allocation = AllocationResult(devices=DeviceAllocationResult(results=(result,)))
    claim = ResourceClaim(
        metadata=ObjectMeta(name="p-extended-resources-abcde", namespace="ns"),
        status=ResourceClaimStatus(allocation=allocation),
    )
    mapping = ContainerExtendedResourceRequest(
        container_name="c", resource_name=GPU, request_name="container-0-request-0"
    )
    status = PodExtendedResourceClaimStatus(
        request_mappings=(mapping,), resource_claim_name="p-extended-resources-abcde"
    )
    found = diagnose_pod(_state(_pod(1, status), claim), "ns", "p", FEATURES)
    assert found is not None
    assert found.is_allocated
    assert [c.claim for c in found.allocated] == ["ns/p-extended-resources-abcde"]
