"""The explain funnel on snapshots: each blocking stage named, allocated claims and pods."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.unit.hooks.scenario import DRIVER, FEATURES, GPU_CLASS, gpu, gpu_claim, node_slice

from dra_operator.cli._devices import device_rows
from dra_operator.cli._diagnose import diagnose_claim, diagnose_pod
from dra_operator.cli._explain import _table, group_reservations
from dra_operator.model import (
    AllocationResult,
    Device,
    DeviceAllocationResult,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceTaint,
    Node,
    ObjectMeta,
    Pod,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    PodStatus,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
    Taint,
)
from dra_operator.verify import ClusterState


def _allocated(claim: ResourceClaim, *devices: str) -> ResourceClaim:
    results = tuple(
        DeviceRequestAllocationResult(request="gpus", driver=DRIVER, pool="node-1", device=d)
        for d in devices
    )
    allocation = AllocationResult(devices=DeviceAllocationResult(results=results))
    return ResourceClaim(
        metadata=claim.metadata, spec=claim.spec, status=ResourceClaimStatus(allocation=allocation)
    )


def _state(
    *claims: ResourceClaim, devices: tuple[Device, ...] = (), pods: tuple[Pod, ...] = ()
) -> ClusterState:
    devices = devices or (gpu("gpu-0"), gpu("gpu-1"))
    return ClusterState(
        claims=claims,
        slices=(node_slice(*devices),),
        pods=pods,
        nodes=(
            Node(metadata=ObjectMeta(name="node-1")),
            Node(metadata=ObjectMeta(name="node-2")),
        ),
        classes=(GPU_CLASS,),
    )


TAINTED = (replace(gpu("gpu-0"), taints=(DeviceTaint(key="bad", effect="NoSchedule"),)),)


@pytest.mark.parametrize(
    ("state", "blocking"),
    [
        pytest.param(_state(gpu_claim(3)), "considered: only 2 devices on this node", id="too-few"),
        pytest.param(
            _state(
                _allocated(gpu_claim(name="a"), "gpu-0"),
                _allocated(gpu_claim(name="b"), "gpu-1"),
                gpu_claim(),
            ),
            "free: 2 in use",
            id="in-use",
        ),
        pytest.param(
            _state(gpu_claim(), devices=TAINTED),
            "taints: 1 with untolerated taint bad:NoSchedule",
            id="taint",
        ),
    ],
)
def test_the_blocking_stage_is_named(state: ClusterState, blocking: str) -> None:
    found = diagnose_claim(state, "default", "claim", FEATURES)
    assert found is not None and not found.is_allocated
    node1, node2 = found.nodes
    assert node2.requests[0].blocking == "considered: only 0 devices on this node"
    assert [request.blocking for request in node1.requests] == [blocking]


def test_a_fitting_unallocated_claim_says_so() -> None:
    found = diagnose_claim(_state(gpu_claim()), "default", "claim", FEATURES)
    assert found is not None
    assert [(v.node, v.fits) for v in found.nodes] == [("node-1", True), ("node-2", False)]


def test_an_allocated_claim_shows_devices_and_node() -> None:
    claim = _allocated(gpu_claim(), "gpu-1")
    found = diagnose_claim(_state(claim), "default", "claim", FEATURES)
    assert found is not None and found.is_allocated
    (held,) = found.allocated
    assert (held.node, held.devices) == ("(any node)", (f"gpus: {DRIVER}/node-1/gpu-1",))
    assert diagnose_claim(_state(claim), "default", "other", FEATURES) is None


def test_a_pod_tries_its_node_and_reports_missing_generated_claims() -> None:
    pod = Pod(
        metadata=ObjectMeta(name="p", namespace="default"),
        spec=PodSpec(
            node_name="node-1",
            resource_claims=(
                PodResourceClaim(name="g", resource_claim_name="claim"),
                PodResourceClaim(name="t", resource_claim_template_name="tmpl"),
                PodResourceClaim(name="none", resource_claim_template_name="tmpl"),
            ),
        ),
        status=PodStatus(resource_claim_statuses=(PodResourceClaimStatus(name="none"),)),
    )
    found = diagnose_pod(_state(gpu_claim(3), pods=(pod,)), "default", "p", FEATURES)
    assert found is not None
    assert found.pending == ("default/claim",)
    assert found.missing == ("(from template, for t)",)
    assert [v.node for v in found.nodes] == ["node-1"]


def test_devices_lists_holders_and_filters_by_node() -> None:
    state = _state(_allocated(gpu_claim(), "gpu-1"))
    rows = device_rows(state, "node-1")
    assert [(r["device"], r["claims"]) for r in rows] == [
        ("gpu-0", []),
        ("gpu-1", ["default/claim"]),
    ]
    assert device_rows(state, "node-2") == []


def test_an_unbound_pod_blocked_by_a_node_taint_names_it() -> None:
    """The claims would fit on node-1, but its taint keeps the pod off: that is the reason."""
    pod = Pod(
        metadata=ObjectMeta(name="p", namespace="default", uid="u1"),
        spec=PodSpec(resource_claims=(PodResourceClaim(name="g", resource_claim_name="claim"),)),
    )
    tainted = Node(
        metadata=ObjectMeta(name="node-1"),
        taints=(Taint(key="example.com/maintenance", effect="NoSchedule"),),
        ready=True,
    )
    state = replace(_state(gpu_claim(), pods=(pod,)), nodes=(tainted,))
    found = diagnose_pod(state, "default", "p", FEATURES)
    assert found is not None and not found.is_allocated
    (verdict,) = found.nodes
    assert not verdict.fits
    assert verdict.node_problems == ("node(s) had untolerated taint(s)",)
    assert verdict.plugin == "TaintToleration"
    assert _table(found).splitlines()[-2:] == [
        "  node node-1: node(s) had untolerated taint(s)",
        "    rejected by the TaintToleration Filter",
    ]


def test_a_classic_claim_is_left_to_its_driver() -> None:
    """docs/classic.md: no allocator funnel for a claim a classic driver allocates."""
    classic = replace(gpu_claim(), controller="classic.example.com")
    found = diagnose_claim(_state(classic), "default", "claim", FEATURES)
    assert found is not None and not found.is_allocated
    assert found.classic == ("default/claim by classic.example.com",)
    assert found.nodes == () and found.pending == ()
    assert "allocated by that classic driver" in _table(found)
    pod = Pod(
        metadata=ObjectMeta(name="p", namespace="default"),
        spec=PodSpec(resource_claims=(PodResourceClaim(name="g", resource_claim_name="claim"),)),
    )
    in_pod = diagnose_pod(_state(classic, pods=(pod,)), "default", "p", FEATURES)
    assert in_pod is not None and in_pod.classic == found.classic and not in_pod.pending


def test_a_1_30_named_resources_claim_is_named_not_explained() -> None:
    """docs/classic.md: 1.30's own allocator places it; explain says so instead of running
    the v1 allocator on a claim without device requests."""
    named_class = DeviceClass(
        metadata=ObjectMeta(name="named"), driver_name="n.example.com", structured_parameters=True
    )
    claim = ResourceClaim(
        metadata=ObjectMeta(name="claim", namespace="default"), resource_class_name="named"
    )
    state = replace(_state(claim), classes=(GPU_CLASS, named_class))
    found = diagnose_claim(state, "default", "claim", FEATURES)
    assert found is not None and not found.is_allocated
    assert found.named == ("default/claim of named",)
    assert found.nodes == () and found.pending == ()
    assert "1.30 named resources, allocated by the scheduler" in _table(found)
    pod = Pod(
        metadata=ObjectMeta(name="p", namespace="default"),
        spec=PodSpec(resource_claims=(PodResourceClaim(name="g", resource_claim_name="claim"),)),
    )
    in_pod = diagnose_pod(replace(state, pods=(pod,)), "default", "p", FEATURES)
    assert in_pod is not None and in_pod.named == found.named and not in_pod.pending


def test_a_claim_reserved_for_a_pod_group_says_so() -> None:
    held = _allocated(gpu_claim(), "gpu-1")
    group = ResourceClaimConsumerReference(
        api_group="scheduling.k8s.io", resource="podgroups", name="gang", uid="uid-gang"
    )
    held = replace(held, status=replace(held.status, reserved_for=(group,)))
    state = _state(held)
    found = diagnose_claim(state, "default", "claim", FEATURES)
    assert found is not None
    groups = group_reservations(state, "default")
    lines = _table(found, groups=groups).splitlines()
    assert lines[:2] == [
        f"claim {found.allocated[0].claim}: allocated on node (any node)",
        "  reserved for PodGroup gang, shared by its pods",
    ]
