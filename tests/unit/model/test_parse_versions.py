"""The same object written in v1alpha3, v1beta1, v1beta2 and v1 parses to the same model.

Covers: `basic` devices, flat requests, plain string/bool slice node fields, bare v1alpha3
capacities, and fields an older version lacks (compared against the v1 object without them).
"""

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dra_operator.model import (
    DeviceCapacity,
    Quantity,
    ResourceSlice,
    parse_object,
    parse_resource_slice,
)

DATA = Path(__file__).parent / "data"


def load(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / name).read_text())
    return result


def as_v1beta2(raw: dict[str, Any]) -> dict[str, Any]:
    # v1beta2 and v1 share every shape; only the apiVersion differs.
    return {**raw, "apiVersion": "resource.k8s.io/v1beta2"}


def drop_for_v1alpha3(raw: dict[str, Any]) -> dict[str, Any]:
    """The v1 object without what v1alpha3 never had."""
    raw = copy.deepcopy(raw)
    if raw["kind"] == "ResourceSlice":
        for device in raw["spec"]["devices"]:
            for name in ("allowMultipleAllocations", "bindsToNode", "bindingConditions"):
                device.pop(name, None)
            device.pop("bindingFailureConditions", None)
            for capacity in device.get("capacity", {}).values():
                capacity.pop("requestPolicy", None)
    if raw["kind"] in ("ResourceClaim", "ResourceClaimTemplate"):
        spec = raw["spec"] if raw["kind"] == "ResourceClaim" else raw["spec"]["spec"]
        for request in spec["devices"]["requests"]:
            request.get("exactly", {}).pop("capacity", None)
        for result in (
            raw.get("status", {}).get("allocation", {}).get("devices", {}).get("results", [])
        ):
            for name in ("shareID", "consumedCapacity", "bindingConditions"):
                result.pop(name, None)
            result.pop("bindingFailureConditions", None)
    if raw["kind"] == "DeviceClass":
        raw["spec"].pop("extendedResourceName", None)
    return raw


PAIRS = [
    ("v1beta1-resourceslice-gpu.json", "v1-resourceslice-gpu.json"),
    ("v1beta1-resourceslice-partitions.json", "v1-resourceslice-partitions.json"),
    ("v1beta1-resourceslice-counters.json", "v1-resourceslice-counters.json"),
    ("v1beta1-resourceclaim.json", "v1-resourceclaim.json"),
    ("v1beta1-resourceclaimtemplate.json", "v1-resourceclaimtemplate.json"),
    ("v1beta1-deviceclass.json", "v1-deviceclass.json"),
    ("v1beta2-devicetaintrule.json", "v1-devicetaintrule.json"),
    ("v1alpha3-devicetaintrule.json", "v1-devicetaintrule.json"),
]


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[p[0] for p in PAIRS])
def test_older_version_parses_to_the_v1_model(old: str, new: str) -> None:
    assert parse_object(load(old)) == parse_object(load(new))


ALPHA = [
    ("v1alpha3-resourceslice-gpu.json", "v1-resourceslice-gpu.json"),
    ("v1alpha3-resourceclaim.json", "v1-resourceclaim.json"),
    ("v1alpha3-resourceclaimtemplate.json", "v1-resourceclaimtemplate.json"),
    ("v1alpha3-deviceclass.json", "v1-deviceclass.json"),
]


@pytest.mark.parametrize(("old", "new"), ALPHA, ids=[p[0] for p in ALPHA])
def test_v1alpha3_parses_to_the_v1_model_minus_what_it_lacks(old: str, new: str) -> None:
    assert parse_object(load(old)) == parse_object(drop_for_v1alpha3(load(new)))


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("v1-*.json")))
def test_v1beta2_is_v1(name: str) -> None:
    raw = load(name)
    assert parse_object(as_v1beta2(raw)) == parse_object(raw)


def _slice(version: str, **spec: Any) -> ResourceSlice:
    raw = {
        "metadata": {"name": "s"},
        "spec": {
            "driver": "d.example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            **spec,
        },
    }
    return parse_resource_slice(raw, version)


@pytest.mark.parametrize("version", ["v1beta1", "v1alpha3"])
def test_plain_node_fields_empty_mean_unset(version: str) -> None:
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}
    parsed = _slice(version, nodeName="", allNodes=False, nodeSelector=selector)
    assert (parsed.node_name, parsed.all_nodes) == (None, None)
    assert parsed.node_selector is not None


def test_pointer_node_fields_keep_false_in_v1() -> None:
    parsed = _slice("v1", allNodes=False, nodeName="n")
    assert (parsed.node_name, parsed.all_nodes) == ("n", False)


def test_v1alpha3_capacity_is_a_bare_quantity() -> None:
    device = {"name": "d", "basic": {"capacity": {"memory": "1.5Gi"}}}
    parsed = _slice("v1alpha3", devices=[device])
    assert parsed.devices[0].capacity == {
        "d.example.com/memory": DeviceCapacity(value=Quantity.parse("1536Mi"))
    }


def test_v1beta1_device_without_basic_has_no_attributes() -> None:
    parsed = _slice("v1beta1", devices=[{"name": "d"}])
    assert parsed.devices[0].attributes == {}


def test_v1beta1_flat_request_gets_exact_count_defaults() -> None:
    raw = load("v1beta1-resourceclaimtemplate.json")
    request = raw["spec"]["spec"]["devices"]["requests"][0]
    del request["allocationMode"], request["count"]
    parsed = parse_object(raw)
    exactly = parsed.spec.requests[0].exactly  # type: ignore[union-attr]
    assert exactly is not None
    assert (exactly.allocation_mode.value, exactly.count) == ("ExactCount", 1)  # type: ignore[union-attr]
