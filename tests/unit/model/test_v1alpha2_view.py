"""v1alpha2 (1.27–1.30) classes, claims and templates as the v1-shaped model reads them.

Covers: a ResourceClass as a DeviceClass (driver, `structuredParameters`, `suitableNodes`);
a classic allocation as 1.31's (`controller` = `status.driverName`, `availableOnNodes` as the
node selector, `shareable`), a 1.30 named-resources allocation without a controller; the
claim's class, `Immediate` and the server's WaitForFirstConsumer default; who allocates
(`classic_driver`) with and without the class; a template; other versions still go to the
v1 parsers; a malformed claim is an InvalidObjectError.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dra_operator.errors import InvalidObjectError
from dra_operator.model import (
    NodeSelector,
    parse_device_class,
    parse_resource_claim,
    parse_resource_claim_template,
)

DATA = Path(__file__).parent / "data" / "v1alpha2"


def load(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / name).read_text())
    return result


def test_a_resource_class_is_a_device_class() -> None:
    raw = load("resourceclass.json")
    device_class = parse_device_class(raw, "v1alpha2")
    assert device_class.metadata.name == "gpu.example.com"
    assert device_class.driver_name == "gpu.example.com"
    assert device_class.structured_parameters
    assert device_class.classic_driver == ""  # the scheduler allocates its claims
    assert isinstance(device_class.suitable_nodes, NodeSelector)
    raw["structuredParameters"] = False
    assert parse_device_class(raw, "v1alpha2").classic_driver == "gpu.example.com"
    del raw["structuredParameters"]
    assert parse_device_class(raw, "v1alpha2").classic_driver == "gpu.example.com"


def test_a_classic_allocation_reads_as_1_31s() -> None:
    claim = parse_resource_claim(load("resourceclaim-classic.json"), "v1alpha2")
    assert claim.resource_class_name == "classic.example.com"
    assert claim.immediate
    assert claim.spec.requests == ()
    allocation = claim.status.allocation
    assert allocation is not None
    assert allocation.controller == "classic.example.com"
    assert allocation.shareable is True
    assert allocation.node_selector is not None
    term = allocation.node_selector.node_selector_terms[0]
    assert term.match_fields[0].values == ("node-a",)
    assert [r.name for r in claim.status.reserved_for] == ["trainer-0"]
    assert claim.is_classic
    assert claim.classic_driver() == "classic.example.com"


def test_a_named_resources_allocation_has_no_controller() -> None:
    claim = parse_resource_claim(load("resourceclaim-structured.json"), "v1alpha2")
    allocation = claim.status.allocation
    assert allocation is not None
    assert allocation.controller == ""
    assert not claim.is_classic


def test_an_unallocated_claim_asks_its_class_who_allocates() -> None:
    raw = load("resourceclaim-classic.json")
    del raw["status"]
    del raw["spec"]["allocationMode"]
    claim = parse_resource_claim(raw, "v1alpha2")
    assert not claim.immediate  # WaitForFirstConsumer, the server's default
    assert claim.status.allocation is None
    assert not claim.is_classic
    assert claim.classic_driver() == ""  # the class is unknown
    resource_class = load("resourceclass.json")
    resource_class["structuredParameters"] = False
    assert claim.classic_driver(parse_device_class(resource_class, "v1alpha2")) == (
        "gpu.example.com"
    )


def test_a_template_keeps_what_generated_claims_inherit() -> None:
    raw = load("resourceclaimtemplate.json")
    template = parse_resource_claim_template(raw, "v1alpha2")
    assert template.metadata.name == raw["metadata"]["name"]
    expected = raw["spec"].get("metadata", {}).get("labels", {})
    assert dict(template.template_metadata.labels) == expected
    assert template.spec.requests == ()


def test_other_versions_still_parse_as_before() -> None:
    raw = {
        "metadata": {"name": "c", "namespace": "n"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "g"}}]}},
    }
    claim = parse_resource_claim(raw, "v1")
    assert claim.resource_class_name == ""
    assert claim.spec.requests[0].name == "r"


def test_a_malformed_v1alpha2_claim_is_reported() -> None:
    raw = copy.deepcopy(load("resourceclaim-classic.json"))
    raw["spec"]["resourceClassName"] = 7
    with pytest.raises(InvalidObjectError, match="resourceClassName"):
        parse_resource_claim(raw, "v1alpha2")
