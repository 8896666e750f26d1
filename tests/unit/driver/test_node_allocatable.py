"""`dra-operator driver --node-allocatable`: profiles become devices that are node-allocatable
resources, published as one more slice of the node's pool."""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_operator.driver import load_inventory
from dra_operator.driver._node_allocatable import node_allocatable_document
from dra_operator.errors import InvalidObjectError
from dra_operator.model import Quantity, node_allocatable_claim_requests

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "driver" / "inventory.yaml"


def test_profiles_add_a_slice_of_node_allocatable_devices() -> None:
    document = node_allocatable_document(["cpu=2x1", "memory=1x4Gi", "hugepages-2Mi=2x512Mi"])
    assert document is not None
    inventory = load_inventory(EXAMPLE, node="node-a", extra=[document])
    manifests = inventory.manifests(generation=1)
    published = manifests[-1]["spec"]
    assert published["nodeName"] == "node-a"
    assert [d["name"] for d in published["devices"]] == [
        "cpu-0",
        "cpu-1",
        "memory-0",
        "hugepages-2Mi-0",
        "hugepages-2Mi-1",
    ]
    assert {m["spec"]["pool"]["resourceSliceCount"] for m in manifests} == {len(manifests)}
    hugepages = inventory.devices["hugepages-2Mi-1"]
    mapping = hugepages.node_allocatable_resources["hugepages-2Mi"].mapping
    assert mapping is not None and mapping.device_multiplier == Quantity.parse("512Mi")
    resource = hugepages.attributes[f"{inventory.driver}/resource"]
    assert resource.value == "hugepages-2Mi"


def test_no_profiles_no_document() -> None:
    assert node_allocatable_document([]) is None
    assert node_allocatable_claim_requests([]) == {}


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ("gpu=1x1", "is not RESOURCE=COUNTxAMOUNT"),
        ("cpu=0x1", "is not RESOURCE=COUNTxAMOUNT"),
        ("cpu=1x-1", "the amount must be positive"),
        ("cpu=1xlots", "'cpu=1xlots'"),
    ],
)
def test_bad_profiles_are_refused(profile: str, message: str) -> None:
    with pytest.raises(InvalidObjectError) as raised:
        node_allocatable_document([profile])
    assert message in str(raised.value)


def test_a_resource_named_twice_is_refused() -> None:
    with pytest.raises(InvalidObjectError, match="names a resource twice: cpu-0"):
        node_allocatable_document(["cpu=1x1", "cpu=2x1"])
