"""The answer to a ResourcePoolStatusRequest: kube-controller-manager v1.37.2's cases
(pkg/controller/resourcepoolstatusrequest, controller_test.go and views_test.go)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from dra_operator import model
from dra_operator.controllers.poolstatus import answer

DRIVER = "test.example.com"
NOW = datetime.datetime(2026, 11, 27, 12, 0, tzinfo=datetime.UTC)


def request(driver: str = DRIVER, **spec: Any) -> model.ResourcePoolStatusRequest:
    return model.parse_resource_pool_status_request(
        {"metadata": {"name": "test-request"}, "spec": {"driver": driver, **spec}}
    )


def make_slice(
    name: str,
    pool: str,
    node: str | None,
    devices: int | list[dict[str, Any]],
    *,
    driver: str = DRIVER,
    generation: int = 1,
    count: int = 1,
    **spec: Any,
) -> model.ResourceSlice:
    listed = (
        [{"name": f"device-{i}"} for i in range(devices)] if isinstance(devices, int) else devices
    )
    body: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
        "devices": listed,
        **spec,
    }
    if node is None:
        body["allNodes"] = True
    else:
        body["nodeName"] = node
    return model.parse_resource_slice({"metadata": {"name": name}, "spec": body})


def claim(name: str, pool: str, device: str, **result: Any) -> model.ResourceClaim:
    return model.parse_resource_claim(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {
                                "request": "req",
                                "driver": result.pop("driver", DRIVER),
                                "pool": pool,
                                "device": device,
                                **result,
                            }
                        ]
                    }
                }
            },
        },
        "v1",
    )


def status(
    req: model.ResourcePoolStatusRequest,
    slices: list[model.ResourceSlice],
    claims: list[model.ResourceClaim] = (),  # type: ignore[assignment]
    rules: list[model.DeviceTaintRule] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    return answer(req, slices, claims, rules, NOW).status


def totals(s: dict[str, Any], field: str) -> int:
    return sum(p.get(field, 0) for p in s.get("pools", ()))


def test_single_pool_no_allocations() -> None:
    s = status(request(), [make_slice("slice-1", "pool-1", "node-1", 4)])
    assert s == {
        "poolCount": 1,
        "pools": [
            {
                "driver": DRIVER,
                "poolName": "pool-1",
                "generation": 1,
                "nodeName": "node-1",
                "resourceSliceCount": 1,
                "totalDevices": 4,
                "allocatedDevices": 0,
                "availableDevices": 4,
                "unavailableDevices": 0,
            }
        ],
        "conditions": [
            {
                "type": "Complete",
                "status": "True",
                "lastTransitionTime": "2026-11-27T12:00:00Z",
                "reason": "CalculationComplete",
                "message": "Calculated status for 1 pools",
            }
        ],
    }


def test_single_pool_with_allocations() -> None:
    claims = [claim("claim-1", "pool-1", "device-0"), claim("claim-2", "pool-1", "device-1")]
    s = status(request(), [make_slice("slice-1", "pool-1", "node-1", 4)], claims)
    pool = s["pools"][0]
    assert (pool["totalDevices"], pool["allocatedDevices"], pool["availableDevices"]) == (4, 2, 2)


def test_admin_access_results_are_not_allocations() -> None:
    claims = [claim("claim-1", "pool-1", "device-0", adminAccess=True)]
    s = status(request(), [make_slice("slice-1", "pool-1", "node-1", 4)], claims)
    assert s["pools"][0]["allocatedDevices"] == 0


@pytest.mark.parametrize(
    ("slices", "spec", "pools", "total"),
    [
        pytest.param(
            [make_slice("s1", "pool-1", "node-1", 4), make_slice("s2", "pool-2", "node-2", 8)],
            {},
            2,
            12,
            id="multiple-pools",
        ),
        pytest.param(
            [
                make_slice("s1", "pool-1", "node-1", 4),
                make_slice("s2", "pool-2", "node-2", 8, driver="other.example.com"),
            ],
            {},
            1,
            4,
            id="filter-by-driver",
        ),
        pytest.param(
            [make_slice("s1", "pool-1", "node-1", 4), make_slice("s2", "pool-2", "node-2", 8)],
            {"poolName": "pool-1"},
            1,
            4,
            id="filter-by-pool-name",
        ),
        pytest.param(
            [make_slice("s1", "pool-1", "node-1", 4), make_slice("s2", "pool-1", "node-1", 4)],
            {},
            1,
            8,
            id="multiple-slices-same-pool",
        ),
        pytest.param(
            [
                make_slice("old", "pool-1", "node-1", 8, generation=1),
                make_slice("new-1", "pool-1", "node-1", 4, generation=2),
                make_slice("new-2", "pool-1", "node-1", 4, generation=2),
            ],
            {},
            1,
            8,
            id="older-generation-slices-ignored",
        ),
    ],
)
def test_pools_and_totals(
    slices: list[model.ResourceSlice], spec: dict[str, Any], pools: int, total: int
) -> None:
    s = status(request(**spec), slices)
    assert s["poolCount"] == pools == len(s["pools"])
    assert totals(s, "totalDevices") == total


def test_no_matching_pools() -> None:
    s = status(request("nonexistent.example.com"), [make_slice("s1", "pool-1", "node-1", 4)])
    assert s["poolCount"] == 0
    assert "pools" not in s
    assert s["conditions"][0]["message"] == "Calculated status for 0 pools"


def test_limit_truncates_but_counts_every_pool() -> None:
    slices = [make_slice("s1", "pool-1", "node-1", 4), make_slice("s2", "pool-2", "node-2", 8)]
    s = status(request(limit=1), slices)
    assert s["poolCount"] == 2
    assert [p["poolName"] for p in s["pools"]] == ["pool-1"]


def test_pools_sorted_by_name() -> None:
    slices = [make_slice(f"s{p}", p, "node-1", 1) for p in ("pool-c", "pool-a", "pool-b")]
    s = status(request(), slices)
    assert [p["poolName"] for p in s["pools"]] == ["pool-a", "pool-b", "pool-c"]


def test_incomplete_pool_has_validation_error_and_no_counts() -> None:
    slices = [make_slice(f"s{i}", "pool-1", "node-1", 4, count=5) for i in range(3)]
    result = answer(request(), slices, [], [], NOW)
    assert result.incomplete
    (pool,) = result.status["pools"]
    assert pool["validationError"] == (
        "PoolIncomplete: pool test.example.com/pool-1 is incomplete: observed 3/5 slices at "
        "generation 1"
    )
    assert "totalDevices" not in pool
    assert "resourceSliceCount" not in pool
    assert (
        result.status["conditions"][0]["message"] == "Calculated status for 1 pools (1 incomplete)"
    )


def test_mix_of_complete_and_incomplete_pools() -> None:
    slices = [
        make_slice("s1", "pool-1", "node-1", 4, count=1),
        make_slice("s2a", "pool-2", "node-2", 4, count=3),
        make_slice("s2b", "pool-2", "node-2", 4, count=3),
    ]
    result = answer(request(), slices, [], [], NOW)
    assert result.incomplete
    assert totals(result.status, "totalDevices") == 4
    assert sum("validationError" in p for p in result.status["pools"]) == 1


def test_complete_pools_are_not_incomplete() -> None:
    slices = [make_slice(f"s{i}", "pool-1", "node-1", 4, count=2) for i in range(2)]
    result = answer(request(), slices, [], [], NOW)
    assert not result.incomplete
    assert "validationError" not in result.status["pools"][0]


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [(("node-1", "node-1"), "node-1"), (("node-1", "node-2"), None), ((None, None), None)],
    ids=["same-node", "mixed-nodes", "no-node"],
)
def test_node_name(nodes: tuple[str | None, str | None], expected: str | None) -> None:
    slices = [make_slice(f"s{i}", "pool-1", node, 4) for i, node in enumerate(nodes)]
    assert status(request(), slices)["pools"][0].get("nodeName") == expected


@pytest.mark.parametrize(
    ("effect", "unavailable"), [("NoSchedule", 2), ("NoExecute", 2), ("None", 0)]
)
def test_tainted_devices_are_unavailable(effect: str, unavailable: int) -> None:
    devices: list[dict[str, Any]] = [{"name": f"device-{i}"} for i in range(4)]
    for device in devices[:2]:
        device["taints"] = [{"key": "example.com/maintenance", "effect": effect}]
    claims = [claim("c", "pool-1", "device-3")]
    pool = status(request(), [make_slice("s", "pool-1", "node-1", devices)], claims)["pools"][0]
    assert pool["unavailableDevices"] == unavailable
    assert pool["availableDevices"] == 4 - 1 - unavailable


def test_taint_rule_makes_selected_devices_unavailable() -> None:
    rule = model.parse_device_taint_rule(
        {
            "metadata": {"name": "r"},
            "spec": {
                "deviceSelector": {"driver": DRIVER, "pool": "pool-1", "device": "device-1"},
                "taint": {"key": "example.com/broken", "effect": "NoExecute"},
            },
        }
    )
    pool = status(request(), [make_slice("s", "pool-1", "node-1", 4)], rules=[rule])["pools"][0]
    assert (pool["unavailableDevices"], pool["availableDevices"]) == (1, 3)


def _partitioned(profiles: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "attributes": {"profile": {"string": profile}},
            "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": mem}}}],
        }
        for name, profile, mem in profiles
    ]


GPU = [("full-0", "Full", "80Gi"), ("half-0", "Half", "40Gi"), ("half-1", "Half", "40Gi")]
COUNTERS = [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]


@pytest.mark.parametrize(
    ("in_use", "allocatable"),
    [((), {"Full": 1, "Half": 2}), (("full-0",), {"Full": 0, "Half": 0})],
    ids=["all-fresh-independent-per-type", "in-use-full-consumes-counter"],
)
def test_partition_summary(in_use: tuple[str, ...], allocatable: dict[str, int]) -> None:
    resource_slice = make_slice(
        "s",
        "pool-0",
        "node-1",
        _partitioned(GPU),
        sharedCounters=COUNTERS,
        partitionTypeAttribute=f"{DRIVER}/profile",
    )
    claims = [claim(f"c-{d}", "pool-0", d) for d in in_use]
    pool = status(request(), [resource_slice], claims)["pools"][0]
    assert pool["partitionSummary"] == [
        {
            "attribute": f"{DRIVER}/profile",
            "type": t,
            "total": {"Full": 1, "Half": 2}[t],
            "allocatable": n,
        }
        for t, n in allocatable.items()
    ]


def test_request_default_attribute_applies_when_no_slice_declares_one() -> None:
    resource_slice = make_slice("s", "pool-0", "node-1", _partitioned(GPU), sharedCounters=COUNTERS)
    without = status(request(), [resource_slice])["pools"][0]
    assert "partitionSummary" not in without
    pool = status(request(defaultPartitionTypeAttribute=f"{DRIVER}/profile"), [resource_slice])
    assert [p["type"] for p in pool["pools"][0]["partitionSummary"]] == ["Full", "Half"]


def test_partition_cost_mismatch_is_a_validation_error() -> None:
    devices = _partitioned([("half-0", "Half", "40Gi"), ("half-1", "Half", "50Gi")])
    resource_slice = make_slice(
        "s",
        "pool-0",
        "node-1",
        devices,
        sharedCounters=COUNTERS,
        partitionTypeAttribute=f"{DRIVER}/profile",
    )
    pool = status(request(), [resource_slice])["pools"][0]
    assert pool["validationError"] == (
        'PartitionCostMismatch: devices of partition type "Half" in pool '
        "test.example.com/pool-0 consume different counters"
    )
    assert "partitionSummary" not in pool
    assert pool["totalDevices"] == 2  # the counts stay


def test_missing_partition_attribute_is_a_validation_error() -> None:
    devices = _partitioned(GPU)
    del devices[1]["attributes"]
    resource_slice = make_slice(
        "s",
        "pool-0",
        "node-1",
        devices,
        sharedCounters=COUNTERS,
        partitionTypeAttribute=f"{DRIVER}/profile",
    )
    pool = status(request(), [resource_slice])["pools"][0]
    assert pool["validationError"] == (
        'PartitionTypeMissing: device "half-0" in pool test.example.com/pool-0 does not carry '
        'partition type attribute "test.example.com/profile"'
    )


def test_shareable_summary() -> None:
    devices: list[dict[str, Any]] = [
        {
            "name": f"shareable-{i}",
            "allowMultipleAllocations": True,
            "capacity": {"memory": {"value": "40Gi"}},
        }
        for i in range(2)
    ] + [{"name": "plain"}]
    claims = [claim("c", "pool-0", "shareable-0", consumedCapacity={"memory": "10Gi"})]
    pool = status(request(), [make_slice("s", "pool-0", "node-1", devices)], claims)["pools"][0]
    assert pool["shareableSummary"] == {
        "fullyAvailableDevices": 1,
        "partiallyAvailableDevices": 1,
        "capacity": [{"name": "memory", "total": "80Gi", "consumed": "10Gi", "available": "70Gi"}],
    }
