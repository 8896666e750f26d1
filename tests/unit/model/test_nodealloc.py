"""Node-allocatable resources through DRA: parsing, what claims add to a pod's requests
(k8s.io/component-helpers v0.37.2 `addDRANodeAllocatableClaimResources`), the statuses the
scheduler computes and the sharing rule (kube-scheduler v1.37.2,
nodeallocatabledynamicresources.go)."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator import model
from dra_operator.controllers.scheduler.framework import pod_requests
from dra_operator.model import Quantity

DRIVER = "cpu.example.com"


def q(text: str) -> Quantity:
    return Quantity.parse(text)


def pod(status: list[dict[str, Any]] | None = None, **spec: Any) -> model.Pod:
    raw: dict[str, Any] = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"},
        "spec": {
            "containers": [
                {
                    "name": "c0",
                    "resources": {
                        "requests": {"cpu": "1", "memory": "1Gi"},
                        "claims": [{"name": "cpus"}],
                    },
                },
                {"name": "c1", "resources": {"claims": [{"name": "cpus"}]}},
            ],
            "resourceClaims": [{"name": "cpus", "resourceClaimName": "numa0"}],
            **spec,
        },
    }
    if status is not None:
        raw["status"] = {"nodeAllocatableResourceClaimStatuses": status}
    return model.parse_pod(raw)


STATUS = [
    {
        "resourceClaimName": "numa0",
        "containers": ["c0", "c1"],
        "mapping": [{"name": "cpu", "quantity": "4"}],
        "overhead": [{"name": "memory", "perPod": "100Mi", "perContainer": "10Mi"}],
    }
]


def test_claim_statuses_add_mapping_and_overhead_to_the_requests() -> None:
    requests = pod(STATUS).effective_requests
    assert requests["cpu"] == q("5")
    assert requests["memory"] == q("1Gi") + q("100Mi") + q("20Mi")  # perContainer x 2


def test_pod_level_requests_override_the_claimed_cpu_and_memory() -> None:
    requests = pod(STATUS, resources={"requests": {"cpu": "8", "memory": "4Gi"}}).effective_requests
    assert (requests["cpu"], requests["memory"]) == (q("8"), q("4Gi"))


def test_overhead_per_container_counts_only_with_containers() -> None:
    status = [{"resourceClaimName": "x", "overhead": [{"name": "memory", "perContainer": "10Mi"}]}]
    assert pod(status).effective_requests["memory"] == q("1Gi")


def test_node_resources_fit_sees_the_claimed_amounts() -> None:
    assert pod_requests(pod(STATUS))["cpu"] == 5000
    assert pod_requests(pod())["cpu"] == 1000


def _slice(devices: list[dict[str, Any]], **spec: Any) -> model.ResourceSlice:
    body = {"driver": DRIVER, "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1}}
    return model.parse_resource_slice(
        {
            "metadata": {"name": "s"},
            "spec": {**body, "nodeName": "node-1", "devices": devices, **spec},
        }
    )


def _claim(
    name: str, *results: dict[str, Any], reserved: list[dict[str, str]] | None = None
) -> model.ResourceClaim:
    status: dict[str, Any] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "r", "driver": DRIVER, "pool": "node-1", **r} for r in results
                ]
            }
        }
    }
    if reserved:
        status["reservedFor"] = reserved
    return model.parse_resource_claim(
        {
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
            "spec": {},
            "status": status,
        },
        "v1",
    )


NODE = model.Node(metadata=model.ObjectMeta(name="node-1"))
CPU_DEVICES = [
    {
        "name": "numa0",
        "capacity": {"cpus": {"value": "32"}},
        "nodeAllocatableResources": {
            "cpu": {"mapping": {"capacityKey": "cpus", "capacityMultiplier": "1"}},
            "memory": {"overhead": {"perPod": "64Mi", "perContainer": "8Mi"}},
        },
    },
    {
        "name": "hp",
        "nodeAllocatableResources": {"hugepages-2Mi": {"mapping": {"deviceMultiplier": "1Gi"}}},
    },
    {"name": "plain"},
]


def test_device_fields_are_parsed() -> None:
    (numa, *_rest) = _slice(CPU_DEVICES).devices
    cpu = numa.node_allocatable_resources["cpu"]
    assert cpu.mapping is not None and cpu.mapping.capacity_key == "cpus"
    memory = numa.node_allocatable_resources["memory"]
    assert memory.overhead is not None and memory.overhead.per_container == q("8Mi")


def test_statuses_of_a_pods_claims() -> None:
    claims = {
        "cpus": _claim(
            "numa0", {"device": "numa0", "consumedCapacity": {"cpus": "4"}}, {"device": "hp"}
        ),
        "other": _claim("plain", {"device": "plain"}),
    }
    (status,) = model.node_allocatable_statuses(pod(), claims, [_slice(CPU_DEVICES)], NODE)
    assert status.resource_claim_name == "numa0"
    assert status.containers == ("c0", "c1")
    assert status.mapping == (("cpu", q("4")), ("hugepages-2Mi", q("1Gi")))
    assert status.overhead == (
        model.NodeAllocatableOverheadAmount(
            name="memory", per_pod=q("64Mi"), per_container=q("8Mi")
        ),
    )


@pytest.mark.parametrize(
    ("results", "slices", "error"),
    [
        (
            [{"device": "numa0"}],
            [_slice(CPU_DEVICES)],
            "claim ns/numa0, device numa0: ConsumedCapacity is nil, but Capacity key 'cpus' "
            "is set in NodeAllocatableResources for resource cpu",
        ),
        (
            [{"device": "gone"}],
            [_slice(CPU_DEVICES)],
            "claim ns/numa0, device gone, driver cpu.example.com: device gone not found in "
            "pool node-1 for driver cpu.example.com",
        ),
    ],
    ids=["capacity-key-without-consumed-capacity", "device-not-found"],
)
def test_upstream_error_texts(
    results: list[dict[str, Any]], slices: list[model.ResourceSlice], error: str
) -> None:
    with pytest.raises(ValueError) as raised:
        model.node_allocatable_statuses(pod(), {"cpus": _claim("numa0", *results)}, slices, NODE)
    assert str(raised.value) == error


def test_a_claim_with_a_mapped_device_is_never_shared() -> None:
    slices = [_slice(CPU_DEVICES)]
    other = {"resource": "pods", "name": "other", "uid": "uid-other"}
    mapped = _claim("numa0", {"device": "hp"}, reserved=[other])
    assert model.has_mapped_device(mapped, slices)
    assert model.mapped_claim_conflict(pod(), mapped, True) == (
        "node allocatable resource claim numa0 has a mapped device and cannot be shared across pods"
    )
    mine = _claim(
        "numa0", {"device": "hp"}, reserved=[{"resource": "pods", "name": "p", "uid": "uid-p"}]
    )
    assert model.mapped_claim_conflict(pod(), mine, True) is None
    overhead_only = _claim("x", {"device": "plain"}, reserved=[other])
    assert not model.has_mapped_device(overhead_only, slices)
    assert model.mapped_claim_conflict(pod(), overhead_only, False) is None
