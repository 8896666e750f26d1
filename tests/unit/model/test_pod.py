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
    ContainerImage,
    ContainerPort,
    ContainerResourceClaim,
    FrozenMap,
    Node,
    NodeSelector,
    NodeSelectorTerm,
    Pod,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    PreferredSchedulingTerm,
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


def test_pod_claims_of_1_30_and_older_name_their_source() -> None:
    """1.26-1.30 nest the claim or template name under `source` (flattened in 1.31)."""
    raw = pod_raw()
    raw["spec"]["resourceClaims"] = [
        {"name": "gpus", "source": {"resourceClaimTemplateName": "single-gpu"}},
        {"name": "shared", "source": {"resourceClaimName": "team-nic"}},
    ]
    pod = parse_object(raw)
    assert isinstance(pod, Pod)
    assert pod.spec.resource_claims == (
        PodResourceClaim(name="gpus", resource_claim_template_name="single-gpu"),
        PodResourceClaim(name="shared", resource_claim_name="team-nic"),
    )
    raw["spec"]["resourceClaims"][1]["source"]["resourceClaimName"] = 7
    with pytest.raises(InvalidObjectError) as err:
        parse_object(raw)
    assert err.value.path == "spec.resourceClaims[1].source.resourceClaimName"


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


def test_missing_defaults_fill_only_containers_that_name_nothing() -> None:
    # kube-scheduler's scoring view: a container without a cpu (memory) request asks 100m (200Mi)
    defaults = FrozenMap({"cpu": q("100m"), "memory": q("200Mi")})
    spec = PodSpec(
        containers=(c("a"), c("b", cpu="0", memory="1Gi")),
        init_containers=(c("s", True, memory="10Mi"), c("i", cpu="1")),
    )
    assert effective_requests(spec, defaults) == {
        # app 100m + 0 + sidecar 100m = 200m against init peak 1 + 100m sidecar = 1100m
        "cpu": q("1100m"),
        # app 200Mi + 1Gi + sidecar 10Mi against init 200Mi + 10Mi
        "memory": q("1Gi") + q("210Mi"),
    }
    assert effective_requests(spec) == {"cpu": q("1"), "memory": q("1Gi") + q("10Mi")}


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


def scheduling_pod_raw() -> dict[str, Any]:
    """A pod with the fields kube-scheduler's basic plugins read."""
    return {
        "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "schedulingGates": [{"name": "example.com/quota"}, {"name": "example.com/wait"}],
            "preemptionPolicy": "Never",
            "initContainers": [
                {
                    "name": "proxy",
                    "image": "envoy:1",
                    "restartPolicy": "Always",
                    "ports": [{"containerPort": 15001, "hostPort": 15001}],
                }
            ],
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1.27",
                    "ports": [
                        {"containerPort": 80},
                        {
                            "containerPort": 8443,
                            "hostPort": 443,
                            "hostIP": "10.0.0.1",
                            "protocol": "UDP",
                        },
                    ],
                }
            ],
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 20,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "In", "values": ["a"]}
                                ]
                            },
                        },
                        {"weight": 5, "preference": {}},
                    ]
                }
            },
        },
    }


def test_pod_fields_the_scheduler_plugins_read() -> None:
    pod = parse_pod(scheduling_pod_raw())
    spec = pod.spec
    assert spec.scheduling_gates == ("example.com/quota", "example.com/wait")
    assert spec.preemption_policy == "Never"
    assert spec.init_containers[0].ports == (ContainerPort(container_port=15001, host_port=15001),)
    web = spec.containers[0]
    assert web.image == "nginx:1.27"
    assert web.ports == (
        ContainerPort(container_port=80),
        ContainerPort(container_port=8443, host_port=443, host_ip="10.0.0.1", protocol="UDP"),
    )
    assert [t.weight for t in spec.preferred_node_affinity] == [20, 5]
    first = spec.preferred_node_affinity[0]
    assert isinstance(first, PreferredSchedulingTerm)
    assert node_matches("n", {"zone": "a"}, NodeSelector(node_selector_terms=(first.preference,)))
    assert spec.preferred_node_affinity[1].preference == NodeSelectorTerm()
    assert spec.required_node_affinity is None


def test_pod_without_scheduling_fields_has_their_defaults() -> None:
    spec = parse_pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}).spec
    assert (spec.scheduling_gates, spec.preemption_policy, spec.preferred_node_affinity) == (
        (),
        "",
        (),
    )
    assert (spec.containers[0].image, spec.containers[0].ports) == ("", ())


def test_node_images_are_read() -> None:
    raw = {
        "metadata": {"name": "n"},
        "status": {
            "images": [
                {"names": ["nginx:1.27", "nginx@sha256:abc"], "sizeBytes": 190000000},
                {"names": ["pause:3.10"]},
            ]
        },
    }
    assert parse_node(raw).images == (
        ContainerImage(names=("nginx:1.27", "nginx@sha256:abc"), size_bytes=190000000),
        ContainerImage(names=("pause:3.10",)),
    )


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
        pytest.param(
            lambda r: r["spec"]["containers"][0].update(
                ports=[{"containerPort": 80, "hostPort": "x"}]
            ),
            "spec.containers[0].ports[0].hostPort",
            id="host-port",
        ),
        pytest.param(
            lambda r: r["spec"].update(schedulingGates=[{}]),
            "spec.schedulingGates[0].name",
            id="scheduling-gate",
        ),
        pytest.param(
            lambda r: r["spec"]["affinity"]["nodeAffinity"].update(
                preferredDuringSchedulingIgnoredDuringExecution=[{"weight": 1}]
            ),
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
            ".preference",
            id="preferred-affinity",
        ),
    ],
)
def test_pod_error_paths(edit: Any, path: str) -> None:
    raw = pod_raw()
    edit(raw)
    with pytest.raises(InvalidObjectError) as info:
        parse_pod(raw)
    assert info.value.path == path
