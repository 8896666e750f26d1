"""core/v1 Pod and Node parsing and the scheduler's effective pod requests.

Covers every Pod/Node field the control plane reads, effective requests (sum of containers,
sidecars, the init-container peak, pod-level requests, overhead) and error paths.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from dra_operator.errors import InvalidObjectError
from dra_operator.model import (
    Container,
    ContainerResourceClaim,
    FrozenMap,
    Node,
    Pod,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    Quantity,
    Taint,
    Toleration,
    effective_requests,
    node_matches,
    parse_node,
    parse_object,
    parse_pod,
)

DATA = Path(__file__).parent / "data"


def pod_raw() -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / "core-v1-pod.json").read_text())
    return result


def q(text: str) -> Quantity:
    return Quantity.parse(text)


def test_pod_fields_the_control_plane_reads() -> None:
    pod = parse_object(pod_raw())
    assert isinstance(pod, Pod)
    assert pod.metadata.deletion_timestamp is not None
    assert pod.metadata.owner_references[0].kind == "StatefulSet"
    spec = pod.spec
    assert (spec.node_name, spec.scheduler_name, spec.priority) == (
        "worker-1",
        "dra-operator",
        1000,
    )
    assert spec.resource_claims == (
        PodResourceClaim(name="gpus", resource_claim_template_name="single-gpu"),
        PodResourceClaim(name="shared", resource_claim_name="team-nic"),
    )
    assert spec.containers[0].claims == (
        ContainerResourceClaim(name="gpus"),
        ContainerResourceClaim(name="shared", request="nic"),
    )
    assert spec.containers[0].limits == {"memory": q("8Gi")}
    assert spec.init_containers[1].restart_policy == "Always"
    assert spec.tolerations[0] == Toleration(
        key="node.kubernetes.io/not-ready",
        operator="Exists",
        effect="NoExecute",
        toleration_seconds=300,
    )
    assert spec.node_selector == {"kubernetes.io/os": "linux"}
    assert spec.required_node_affinity is not None
    assert node_matches("worker-1", {"gpu": "true"}, spec.required_node_affinity)
    assert spec.overhead == {"cpu": q("100m"), "memory": q("64Mi")}
    status = pod.status
    assert status.phase == "Pending"
    assert status.resource_claim_statuses == (
        PodResourceClaimStatus(name="gpus", resource_claim_name="trainer-0-gpus-9xk2d"),
        PodResourceClaimStatus(name="shared"),
    )
    assert status.conditions[0].reason == "Unschedulable"
    extended = status.extended_resource_claim_status
    assert extended is not None
    assert extended.request_mappings[0].request_name == "container-0-request-0"


def test_effective_requests_of_the_fixture_pod() -> None:
    # containers 1 + 250m + sidecar 500m = 1750m vs init peak 2 + 0 = 2 -> 2, + 100m overhead
    # memory 4Gi + 128Mi vs 1Gi -> 4Gi+128Mi, + 64Mi overhead
    pod = parse_pod(pod_raw())
    assert pod.effective_requests == {
        "cpu": q("2100m"),
        "memory": q("4Gi") + q("192Mi"),
        "example.com/foo": q("1"),
    }


def c(name: str, sidecar: bool = False, **requests: str) -> Container:
    return Container(
        name=name,
        requests=FrozenMap({k: q(v) for k, v in requests.items()}),
        restart_policy="Always" if sidecar else None,
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(PodSpec(), {}, id="empty"),
        pytest.param(
            PodSpec(containers=(c("a", cpu="1"), c("b", cpu="2", memory="1Gi"))),
            {"cpu": "3", "memory": "1Gi"},
            id="sum-of-containers",
        ),
        pytest.param(
            PodSpec(containers=(c("a", cpu="1"),), init_containers=(c("i", cpu="3"),)),
            {"cpu": "3"},
            id="init-peak-wins",
        ),
        pytest.param(
            PodSpec(containers=(c("a", cpu="4"),), init_containers=(c("i", cpu="3"),)),
            {"cpu": "4"},
            id="containers-win",
        ),
        pytest.param(
            PodSpec(
                containers=(c("a", cpu="1"),),
                init_containers=(c("s", True, cpu="1"), c("i", cpu="3")),
            ),
            {"cpu": "4"},
            id="sidecar-runs-beside-later-init",
        ),
        pytest.param(
            PodSpec(
                containers=(c("a", cpu="1"),),
                init_containers=(c("i", cpu="3"), c("s", True, cpu="1")),
            ),
            {"cpu": "3"},
            id="sidecar-after-init",
        ),
        pytest.param(
            PodSpec(
                containers=(c("a", cpu="1", memory="1Gi"),),
                resource_requests=FrozenMap({"cpu": q("5"), "example.com/x": q("1")}),
            ),
            {"cpu": "5", "memory": "1Gi"},
            id="pod-level-cpu-only",
        ),
        pytest.param(
            PodSpec(containers=(c("a", cpu="1"),), overhead=FrozenMap({"cpu": q("250m")})),
            {"cpu": "1250m"},
            id="overhead",
        ),
    ],
)
def test_effective_requests(spec: PodSpec, expected: dict[str, str]) -> None:
    assert effective_requests(spec) == {k: q(v) for k, v in expected.items()}


def test_node_fields() -> None:
    raw = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker-1", "labels": {"gpu": "true"}},
        "spec": {
            "unschedulable": True,
            "taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
        },
        "status": {
            "allocatable": {"cpu": "7800m", "memory": "30Gi", "pods": "110"},
            "conditions": [
                {"type": "MemoryPressure", "status": "False"},
                {"type": "Ready", "status": "True", "reason": "KubeletReady"},
            ],
        },
    }
    node = parse_object(raw)
    assert isinstance(node, Node)
    assert (node.name, node.labels, node.unschedulable, node.ready) == (
        "worker-1",
        {"gpu": "true"},
        True,
        True,
    )
    assert node.taints == (Taint(key="dedicated", value="ml", effect="NoSchedule"),)
    assert node.allocatable["pods"] == q("110")


def test_node_without_ready_condition_is_not_ready() -> None:
    assert not parse_node({"metadata": {"name": "n"}}).ready


def test_node_declared_features_are_read() -> None:
    raw = {"metadata": {"name": "n"}, "status": {"declaredFeatures": ["DRAOptionalNodeOperations"]}}
    assert parse_node(raw).declared_features == ("DRAOptionalNodeOperations",)


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        pytest.param(
            lambda r: r["spec"]["containers"][0]["resources"]["requests"].update(cpu="one"),
            'spec.containers[0].resources.requests["cpu"]',
            id="request",
        ),
        pytest.param(
            lambda r: r["spec"]["resourceClaims"][1].pop("name"),
            "spec.resourceClaims[1].name",
            id="claim-name",
        ),
        pytest.param(
            lambda r: r["spec"]["initContainers"][1].update(restartPolicy=1),
            "spec.initContainers[1].restartPolicy",
            id="restart-policy",
        ),
        pytest.param(
            lambda r: r["spec"]["affinity"]["nodeAffinity"].update(
                requiredDuringSchedulingIgnoredDuringExecution=[]
            ),
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
            id="affinity",
        ),
        pytest.param(
            lambda r: r["status"]["resourceClaimStatuses"][0].update(resourceClaimName=5),
            "status.resourceClaimStatuses[0].resourceClaimName",
            id="claim-status",
        ),
        pytest.param(lambda r: r["spec"].update(priority="high"), "spec.priority", id="priority"),
    ],
)
def test_pod_error_paths(edit: Any, path: str) -> None:
    raw = pod_raw()
    edit(raw)
    with pytest.raises(InvalidObjectError) as info:
        parse_pod(raw)
    assert info.value.path == path
