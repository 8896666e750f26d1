"""Round trips: JSON of any version parsed into the model and rendered back is the same JSON.

Covers every kind's full renderer in v1, v1beta2, v1beta1 and v1alpha3 on realistic fixtures,
the API server's omission rules (omitempty, pointer fields kept when false, struct fields always
written), driver-qualified names written back in the driver's short form, and the
allocation/status renderers for every version that serves claims.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from dra_operator.errors import InvalidObjectError
from dra_operator.model import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    DeviceToleration,
    FrozenMap,
    Quantity,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
    parse_object,
    render_allocation_result,
    render_claim_status,
    render_device_class,
    render_device_taint_rule,
    render_resource_claim,
    render_resource_claim_template,
    render_resource_slice,
)

DATA = Path(__file__).parent / "data"
RENDERERS: dict[str, Any] = {
    "DeviceClass": render_device_class,
    "ResourceSlice": render_resource_slice,
    "ResourceClaim": render_resource_claim,
    "ResourceClaimTemplate": render_resource_claim_template,
    "DeviceTaintRule": render_device_taint_rule,
}


def load(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / name).read_text())
    return result


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("v1*.json")))
def test_fixture_round_trips_exactly_in_its_version(name: str) -> None:
    raw = load(name)
    version = raw["apiVersion"].rpartition("/")[2]
    rendered = RENDERERS[raw["kind"]](parse_object(raw), version)
    assert rendered == raw


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("v1beta1-*.json")))
def test_v1_object_renders_as_its_v1beta1_form(name: str) -> None:
    expected = load(name)
    v1 = parse_object(load(name.replace("v1beta1-", "v1-")))
    assert RENDERERS[expected["kind"]](v1, "v1beta1") == expected


def test_round_trip_is_stable_through_a_second_parse() -> None:
    raw = load("v1-resourceclaim.json")
    once = parse_object(raw)
    assert parse_object(render_resource_claim(once)) == once  # type: ignore[arg-type]


def test_claim_without_status_renders_the_empty_status_struct() -> None:
    raw = load("v1-resourceclaimtemplate.json")
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": raw["spec"]["spec"],
    }
    assert render_resource_claim(parse_object(claim)) == {**claim, "status": {}}  # type: ignore[arg-type]


def test_defaults_are_written_as_the_server_stores_them() -> None:
    raw = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "r",
                        "exactly": {"deviceClassName": "gpu", "tolerations": [{"key": "k"}]},
                    },
                    {"name": "all", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}},
                ]
            }
        },
    }
    requests = render_resource_claim(parse_object(raw))["spec"]["devices"]["requests"]  # type: ignore[arg-type]
    assert requests[0]["exactly"] == {
        "deviceClassName": "gpu",
        "allocationMode": "ExactCount",
        "count": 1,
        "tolerations": [{"key": "k", "operator": "Equal"}],
    }
    assert requests[1]["exactly"] == {"deviceClassName": "gpu", "allocationMode": "All"}


def test_qualified_names_of_the_own_driver_are_written_short() -> None:
    raw = load("v1-resourceslice-gpu.json")
    parsed = parse_object(raw)
    attributes = parsed.devices[0].attributes  # type: ignore[union-attr]
    assert "gpu.example.com/model" in attributes
    assert "pcie.example.com/root" in attributes
    rendered = render_resource_slice(parsed)  # type: ignore[arg-type]
    assert set(rendered["spec"]["devices"][0]["attributes"]) == set(
        raw["spec"]["devices"][0]["attributes"]
    )


def test_own_driver_prefix_is_dropped_on_render() -> None:
    raw = load("v1-resourceslice-gpu.json")
    attributes = raw["spec"]["devices"][0]["attributes"]
    attributes["gpu.example.com/serial"] = attributes.pop("uuid")
    rendered = render_resource_slice(parse_object(raw))  # type: ignore[arg-type]
    assert "serial" in rendered["spec"]["devices"][0]["attributes"]


def _allocation() -> AllocationResult:
    result = DeviceRequestAllocationResult(
        request="gpu",
        driver="gpu.example.com",
        pool="worker-1",
        device="gpu-0",
        admin_access=False,
        tolerations=(DeviceToleration(key="k", operator="Exists"),),
        share_id="abc",
        consumed_capacity=FrozenMap({"memory": Quantity.parse("0.5Gi")}),
    )
    return AllocationResult(devices=DeviceAllocationResult(results=(result,)))


@pytest.mark.parametrize("version", ["v1", "v1beta2", "v1beta1", "v1alpha3"])
def test_allocation_result_renders_in_every_claim_version(version: str) -> None:
    assert render_allocation_result(_allocation(), version) == {
        "devices": {
            "results": [
                {
                    "request": "gpu",
                    "driver": "gpu.example.com",
                    "pool": "worker-1",
                    "device": "gpu-0",
                    "adminAccess": False,
                    "tolerations": [{"key": "k", "operator": "Exists"}],
                    "shareID": "abc",
                    "consumedCapacity": {"memory": "512Mi"},
                }
            ]
        }
    }


def test_empty_allocation_still_writes_devices() -> None:
    assert render_allocation_result(AllocationResult()) == {"devices": {}}


def test_claim_status_renders_reservations() -> None:
    status = ResourceClaimStatus(
        allocation=_allocation(),
        reserved_for=(ResourceClaimConsumerReference(resource="pods", name="p", uid="u"),),
    )
    out = render_claim_status(status, "v1beta1")
    assert out["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "u"}]
    assert out["allocation"] == render_allocation_result(_allocation())
    assert render_claim_status(ResourceClaimStatus()) == {}


def test_unknown_version_is_refused() -> None:
    with pytest.raises(InvalidObjectError, match="unsupported version 'v2'"):
        render_allocation_result(_allocation(), "v2")


@pytest.mark.parametrize("version", ["v1", "v1beta2", "v1beta1"])
def test_skip_node_operations_round_trip_on_slices_and_results(version: str) -> None:
    """1.37 DRAOptionalNodeOperations: the slice's list, and the copy in each result."""
    raw = load("v1-resourceslice-gpu.json")
    raw["spec"]["skipNodeOperations"] = ["NodePrepareResources", "NodeUnprepareResources"]
    piece = parse_object(raw)
    assert piece.skip_node_operations == ("NodePrepareResources", "NodeUnprepareResources")  # type: ignore[union-attr]
    assert render_resource_slice(piece, "v1")["spec"]["skipNodeOperations"] == [  # type: ignore[arg-type]
        "NodePrepareResources",
        "NodeUnprepareResources",
    ]
    result = DeviceRequestAllocationResult(
        request="gpu", driver="d", pool="p", device="x", skip_node_operations=("*",)
    )
    rendered = render_allocation_result(
        AllocationResult(devices=DeviceAllocationResult(results=(result,))), version
    )
    assert rendered["devices"]["results"][0]["skipNodeOperations"] == ["*"]
