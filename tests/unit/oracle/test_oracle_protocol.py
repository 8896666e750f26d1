"""The Go oracle answers every op of its protocol as upstream v1.36 does, end to end.

These pin the texts and shapes the differential tests for the CEL engine and the allocator rely
on; the expected values were read from upstream's source and confirmed against the oracle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.oracle import JSON, Oracle, OracleError

DRIVER = "gpu.example.com"
NODE = {"metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1"}}}

GPU = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "a100"},
        "driverVersion": {"version": "1.10.0"},
    },
    "capacity": {"memory": {"value": "16Gi"}},
}


def test_version_names_the_release_and_every_feature(oracle: Oracle) -> None:
    assert oracle.version() == {
        "kubernetes": "v0.36.5",
        "features": [
            "adminAccess",
            "consumableCapacity",
            "deviceBindingAndStatus",
            "deviceTaints",
            "listTypeAttributes",
            "partitionableDevices",
            "prioritizedList",
        ],
    }


def test_the_137_oracle_knows_the_137_features(oracle_137: Oracle) -> None:
    assert oracle_137.version() == {
        "kubernetes": "v0.37.2",
        "features": [
            "adminAccess",
            "compatibilityGroups",
            "consumableCapacity",
            "derivedAttributes",
            "deviceBindingAndStatus",
            "deviceTaints",
            "fractionalCapacityRange",
            "listTypeAttributes",
            "optionalNodeOperations",
            "partitionableDevices",
            "prioritizedList",
        ],
    }


def _match(value: bool) -> JSON:
    return {"compileError": None, "match": value, "runtimeError": None}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param(f'device.driver == "{DRIVER}"', _match(True), id="driver-matches"),
        pytest.param('device.driver == "nic.example.com"', _match(False), id="driver-differs"),
        pytest.param(
            'device.attributes["gpu.example.com"].model == "a100"',
            _match(True),
            id="unqualified-attribute-in-driver-domain",
        ),
        pytest.param(
            'device.capacity["gpu.example.com"].memory.compareTo(quantity("8Gi")) >= 0',
            _match(True),
            id="quantity-compare",
        ),
        pytest.param(
            'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("32Gi"))',
            _match(False),
            id="quantity-compare-false",
        ),
        pytest.param(
            # 1.10.0 > 1.9.0 as versions, although "1.10.0" < "1.9.0" as strings.
            'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.9.0"))',
            _match(True),
            id="semver-compare",
        ),
        pytest.param(
            'device.attributes["other.example.com"].size() == 0',
            _match(True),
            id="unknown-domain-is-empty-map",
        ),
        pytest.param(
            'device.attributes["gpu.example.com"].memory == 1',
            {"compileError": None, "match": None, "runtimeError": "no such key: memory"},
            id="runtime-error-missing-key",
        ),
        pytest.param(
            'device.attributes["gpu.example.com"].model',
            {
                "compileError": None,
                "match": None,
                "runtimeError": "CEL result of type string could not be converted to bool: "
                "unsupported native conversion from string to 'bool'",
            },
            id="runtime-error-not-bool",
        ),
        pytest.param(
            '"x"',
            {
                "compileError": "must evaluate to bool or the unknown type, not string",
                "match": None,
                "runtimeError": None,
            },
            id="compile-error-result-type",
        ),
    ],
)
def test_cel_verdict(oracle: Oracle, expression: str, expected: JSON) -> None:
    assert oracle.cel(expression, GPU, DRIVER) == expected


def test_cel_compile_error_names_the_undeclared_field(oracle: Oracle) -> None:
    response = oracle.cel('device.drivr == "x"', GPU, DRIVER)
    assert response["match"] is None
    assert response["runtimeError"] is None
    assert response["compileError"] == (
        "compilation failed: ERROR: <input>:1:7: undefined field 'drivr'\n"
        ' | device.drivr == "x"\n'
        " | ......^"
    )


@pytest.mark.parametrize(
    ("features", "expected"),
    [
        pytest.param(
            {},
            {
                "compileError": None,
                "match": None,
                "runtimeError": "attribute models: unsupported attribute value",
            },
            id="list-attribute-without-feature",
        ),
        pytest.param({"listTypeAttributes": True}, _match(True), id="list-attribute-with-feature"),
    ],
)
def test_cel_list_attributes_follow_the_feature(
    oracle: Oracle, features: dict[str, bool], expected: JSON
) -> None:
    device = {"name": "gpu-0", "attributes": {"models": {"strings": ["a100", "h100"]}}}
    expression = 'device.attributes["gpu.example.com"].models.includes("h100")'
    assert oracle.cel(expression, device, DRIVER, features) == expected


def _device_class(name: str = DRIVER) -> JSON:
    return {
        "metadata": {"name": name},
        "spec": {
            "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
            "config": [{"opaque": {"driver": DRIVER, "parameters": {"mode": "fast"}}}],
        },
    }


def _slice(*devices: JSON) -> JSON:
    return {
        "metadata": {"name": "node-1-gpus"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "devices": list(devices),
        },
    }


def _claim(count: int = 1, device_class: str = DRIVER, **exactly: Any) -> JSON:
    # Objects as the API server stores them: allocationMode and count are defaulted.
    request = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    return {
        "metadata": {"name": "claim", "namespace": "default", "uid": "uid-1"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request | exactly}]}},
    }


def _allocated(device: str, **result: Any) -> JSON:
    return {
        "metadata": {"name": "earlier", "namespace": "default"},
        "spec": {"devices": {"requests": []}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "r", "driver": DRIVER, "pool": "node-1", "device": device}
                        | result
                    ]
                }
            }
        },
    }


def _result(device: str) -> JSON:
    return {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": device}],
            "config": [
                {
                    "source": "FromClass",
                    "requests": ["gpu"],
                    "opaque": {"driver": DRIVER, "parameters": {"mode": "fast"}},
                }
            ],
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
            ]
        },
    }


NOT_ALLOCATED = {"error": None, "allocated": False, "results": None}


@pytest.mark.parametrize(
    ("allocated", "expected"),
    [
        pytest.param(
            [], {"error": None, "allocated": True, "results": [_result("gpu-0")]}, id="free"
        ),
        pytest.param(
            [_allocated("gpu-0")],
            {"error": None, "allocated": True, "results": [_result("gpu-1")]},
            id="first-device-in-use",
        ),
        pytest.param(
            [_allocated("gpu-0", adminAccess=True)],
            {"error": None, "allocated": True, "results": [_result("gpu-0")]},
            id="admin-access-is-not-in-use",
        ),
        pytest.param(
            [_allocated("gpu-0"), _allocated("gpu-1")], NOT_ALLOCATED, id="all-devices-in-use"
        ),
    ],
)
def test_allocate_one_claim(oracle: Oracle, allocated: list[JSON], expected: JSON) -> None:
    response = oracle.allocate(
        node=NODE,
        classes=[_device_class()],
        slices=[_slice({"name": "gpu-0"}, {"name": "gpu-1"})],
        claims=[_claim()],
        allocated=allocated,
    )
    assert response == expected


def test_allocate_infeasible_count(oracle: Oracle) -> None:
    response = oracle.allocate(
        node=NODE,
        classes=[_device_class()],
        slices=[_slice({"name": "gpu-0"}, {"name": "gpu-1"})],
        claims=[_claim(count=3)],
    )
    assert response == NOT_ALLOCATED


def test_allocate_missing_class_is_fatal(oracle: Oracle) -> None:
    response = oracle.allocate(
        node=NODE,
        classes=[_device_class()],
        slices=[_slice({"name": "gpu-0"})],
        claims=[_claim(device_class="missing.example.com")],
    )
    assert response == {
        "error": "claim default/claim, request gpu: could not retrieve device class "
        'missing.example.com: deviceclass.resource.k8s.io "missing.example.com" not found',
        "allocated": False,
        "results": None,
    }


@pytest.mark.parametrize(
    ("in_use", "features", "fits"),
    [
        pytest.param("4Gi", {"consumableCapacity": True}, True, id="room-left"),
        pytest.param("8Gi", {"consumableCapacity": True}, False, id="capacity-used-up"),
        pytest.param("4Gi", {}, False, id="share-is-exclusive-without-the-feature"),
    ],
)
def test_allocate_counts_consumed_capacity_of_shares(
    oracle: Oracle, in_use: str, features: dict[str, bool], fits: bool
) -> None:
    shared = {
        "name": "gpu-0",
        "allowMultipleAllocations": True,
        "capacity": {"memory": {"value": "16Gi"}},
    }
    earlier = _allocated(
        "gpu-0",
        shareID="11111111-2222-3333-4444-555555555555",
        consumedCapacity={"memory": in_use},
    )
    response = oracle.allocate(
        node=NODE,
        classes=[_device_class()],
        slices=[_slice(shared)],
        claims=[_claim(capacity={"requests": {"memory": "10Gi"}})],
        allocated=[earlier],
        features=features,
    )
    assert response["error"] is None
    assert response["allocated"] is fits
    if fits:
        (result,) = response["results"][0]["devices"]["results"]
        assert result["device"] == "gpu-0"
        assert result["consumedCapacity"] == {"memory": "10Gi"}


def test_allocate_invalid_pool_rules_out_only_this_node(oracle: Oracle) -> None:
    first = _slice({"name": "gpu-0"})
    first["spec"]["pool"]["resourceSliceCount"] = 2
    second = _slice({"name": "gpu-0"})
    second["metadata"]["name"] = "node-1-more-gpus"
    second["spec"]["pool"]["resourceSliceCount"] = 2
    response = oracle.allocate(
        node=NODE, classes=[_device_class()], slices=[first, second], claims=[_claim()]
    )
    assert response == NOT_ALLOCATED | {"nodeError": "invalid resource pools were encountered"}


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        pytest.param({"op": "nope"}, 'unknown op "nope"', id="unknown-op"),
        pytest.param(
            {"op": "cel", "expression": "true", "device": {"name": "d"}, "driver": DRIVER, "x": 1},
            'unknown field "x"',
            id="unknown-field",
        ),
        pytest.param(
            {
                "op": "cel",
                "expression": "true",
                "device": {},
                "driver": DRIVER,
                "features": {"y": True},
            },
            'unknown feature "y"',
            id="unknown-feature",
        ),
        pytest.param(
            {
                "op": "allocate",
                "node": None,
                "classes": [],
                "slices": [],
                "allocated": [],
                "claims": [],
            },
            '"node" is required',
            id="allocate-without-node",
        ),
    ],
)
def test_bad_requests_raise(oracle: Oracle, request_: JSON, message: str) -> None:
    with pytest.raises(OracleError, match=message):
        oracle.request(request_)


BENCH = Path(__file__).resolve().parents[3] / "bench"


def test_bench_selectors_have_their_declared_verdict(oracle: Oracle) -> None:
    data = json.loads((BENCH / "cel_selectors.json").read_text())
    verdicts = {
        selector["name"]: oracle.cel(
            selector["expression"], data["device"], data["driver"], data["features"]
        )
        for selector in data["selectors"]
    }
    declared = {selector["name"]: _match(selector["match"]) for selector in data["selectors"]}
    assert verdicts == declared


@pytest.mark.parametrize(
    "path", [pytest.param(path, id=path.stem) for path in sorted(BENCH.glob("scenarios/*.json"))]
)
def test_bench_scenarios_are_requests_that_fit(oracle: Oracle, path: Path) -> None:
    response = oracle.request(json.loads(path.read_text()))
    assert response["error"] is None
    assert response["allocated"] is True
