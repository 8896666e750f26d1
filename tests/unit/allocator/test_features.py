"""Feature sets per Kubernetes release, and upstream's allocator tiers."""

from __future__ import annotations

import pytest

from dra_operator.allocator import Features
from dra_operator.errors import AllocationInputError


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        pytest.param("1.31", Features(admin_access=True), id="1.31-admin-access-ungated"),
        pytest.param("1.33", Features(), id="1.33-all-off"),
        pytest.param("v1.34.2", Features(admin_access=True, prioritized_list=True), id="1.34"),
        pytest.param(
            "1.36",
            Features(
                admin_access=True,
                prioritized_list=True,
                partitionable_devices=True,
                device_taints=True,
                device_binding_and_status=True,
                consumable_capacity=True,
            ),
            id="1.36",
        ),
    ],
)
def test_for_kubernetes(version: str, expected: Features) -> None:
    assert Features.for_kubernetes(version) == expected


@pytest.mark.parametrize("version", ["2.0", "1.26", "latest"])
def test_unknown_versions_are_input_errors(version: str) -> None:
    with pytest.raises(AllocationInputError, match=f"kubernetes version {version}"):
        Features.for_kubernetes(version)


def test_tiers() -> None:
    assert Features.for_kubernetes("1.35").is_stable_tier
    assert not Features.for_kubernetes("1.36").is_stable_tier
    assert not Features(list_type_attributes=True).is_stable_tier
