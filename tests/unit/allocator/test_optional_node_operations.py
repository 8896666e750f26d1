"""DRAOptionalNodeOperations (1.37 alpha, KEP-5945): slices whose devices need no kubelet call.

Upstream's experimental allocator takes a device whose slice sets `skipNodeOperations` only
when the gate is on and the node declares "DRAOptionalNodeOperations" in
`status.declaredFeatures`, and copies the list into the result. The stable and incubating
tiers (every gate that selects experimental off) neither check nor copy it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from allocator_builders import (
    NODE1,
    Case,
    Features,
    all_request,
    allocation,
    check,
    claim,
    device,
    device_class,
    local_node_selector,
    node,
    request,
    result,
    slice_with_devices,
)

from dra_operator.allocator import CELSelectors, Ledger, allocate
from dra_operator.allocator import Node as AllocatorNode

A = "driver-a"
CLASS = device_class("class-a", A)
LOCAL = local_node_selector()
ON = Features(optional_node_operations=True, release=37)
LISTS = Features(list_type_attributes=True, release=37)  # experimental tier, gate off
DECLARED = replace(node(), declared_features=frozenset({"DRAOptionalNodeOperations"}))


def skipping(*devices, ops: tuple[str, ...] = ("*",)):
    piece = slice_with_devices("slice-1", NODE1, "pool-1", A, *devices)
    return replace(piece, skip_node_operations=ops)


def skipped_result(name: str = "device-1", ops: tuple[str, ...] = ("*",)):
    return replace(result("req-0", A, "pool-1", name), skip_node_operations=ops)


SCENARIOS = [
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=[CLASS],
            features=ON,
            slices=[skipping(device("device-1"))],
            node=DECLARED,
            expect=[allocation(LOCAL, skipped_result())],
            releases=(37,),
        ),
        id="optional-node-operations",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=[CLASS],
            features=ON,
            slices=[skipping(device("device-1"))],
            node=node(),
            explains="",
            releases=(37,),
        ),
        id="optional-node-operations-missing-feature",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)


def test_experimental_tier_with_the_gate_off_skips_such_devices() -> None:
    check(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=[CLASS],
            features=LISTS,
            slices=[skipping(device("device-1"))],
            node=DECLARED,
            releases=(37,),
        )
    )


def test_other_tiers_allocate_such_devices_without_copying_the_list() -> None:
    check(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=[CLASS],
            features=Features.for_kubernetes("1.37"),
            slices=[skipping(device("device-1"))],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
            releases=(37,),
        )
    )


def test_all_mode_fails_when_one_device_may_not_be_taken() -> None:
    """The device is selectable, so `All` needs it; allocateDevice then refuses it."""
    plain = slice_with_devices("slice-2", NODE1, "pool-2", A, device("device-2"))
    check(
        Case(
            claims=[claim("claim-0", all_request("req-0", "class-a"))],
            classes=[CLASS],
            features=ON,
            slices=[skipping(device("device-1")), plain],
            node=node(),
            releases=(37,),
        )
    )


def test_explanation_names_the_reason() -> None:
    got = allocate(
        [claim("claim-0", request("req-0", "class-a"))],
        classes=[CLASS],
        slices=[
            skipping(device("device-1"), ops=("NodePrepareResources", "NodeUnprepareResources"))
        ],
        node=AllocatorNode(name=NODE1),
        features=ON,
        selectors=CELSelectors(ON),
        ledger=Ledger(),
    )
    assert got.explanation is not None
    assert "1 skip node operations" in str(got.explanation.requests[0].rejected[0])
