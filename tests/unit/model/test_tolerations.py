"""Toleration checks for device taints (upstream-dra.md §1.9) and node taints (core/v1)."""

import pytest

from dra_operator.model import (
    DeviceTaint,
    DeviceToleration,
    Taint,
    Toleration,
    tolerates,
    tolerates_node_taint,
)

TAINT = {"key": "example.com/maintenance", "value": "firmware", "effect": "NoExecute"}

CASES = [
    pytest.param({"key": "example.com/maintenance", "value": "firmware"}, True, id="equal"),
    pytest.param({"key": "example.com/maintenance", "value": "other"}, False, id="equal-other"),
    pytest.param({"key": "example.com/maintenance", "operator": "Exists"}, True, id="exists"),
    pytest.param({"operator": "Exists"}, True, id="exists-every-key"),
    pytest.param({"operator": "Exists", "effect": "NoSchedule"}, False, id="effect-differs"),
    pytest.param({"operator": "Exists", "effect": "NoExecute"}, True, id="effect-same"),
    pytest.param({"key": "other", "operator": "Exists"}, False, id="key-differs"),
    pytest.param({"value": "firmware"}, True, id="empty-key-equal-value"),
    pytest.param(
        {
            "key": "example.com/maintenance",
            "operator": "Equal",
            "value": "firmware",
            "effect": "NoExecute",
            "toleration_seconds": 0,
        },
        True,
        id="seconds-ignored",
    ),
    pytest.param(
        {"key": "example.com/maintenance", "operator": "In", "value": "firmware"},
        False,
        id="unknown-operator",
    ),
]


@pytest.mark.parametrize(("toleration", "expected"), CASES)
def test_device_toleration(toleration: dict, expected: bool) -> None:
    fields = {"operator": "Equal", **toleration}
    assert tolerates(DeviceToleration(**fields), DeviceTaint(**TAINT)) is expected


@pytest.mark.parametrize(("toleration", "expected"), CASES)
def test_node_toleration_same_rules(toleration: dict, expected: bool) -> None:
    assert tolerates_node_taint(Toleration(**toleration), Taint(**TAINT)) is expected


def test_device_toleration_with_empty_operator_means_equal() -> None:
    taint = DeviceTaint(key="k", value="v", effect="NoSchedule")
    assert tolerates(DeviceToleration(key="k", operator="", value="v"), taint)


@pytest.mark.parametrize(
    ("operator", "value", "taint_value", "enabled", "expected"),
    [
        pytest.param("Gt", "5", "7", True, True, id="gt"),
        pytest.param("Gt", "7", "7", True, False, id="gt-equal"),
        pytest.param("Lt", "10", "7", True, True, id="lt"),
        pytest.param("Lt", "-1", "-5", True, True, id="lt-negative"),
        pytest.param("Gt", "5", "7", False, False, id="gate-off"),
        pytest.param("Gt", "05", "7", True, False, id="leading-zero-refused"),
        pytest.param("Gt", "5", "seven", True, False, id="taint-not-a-number"),
        pytest.param("Gt", "5", "99999999999999999999", True, False, id="out-of-int64"),
    ],
)
def test_node_comparison_operators(
    operator: str, value: str, taint_value: str, enabled: bool, expected: bool
) -> None:
    toleration = Toleration(key="k", operator=operator, value=value)
    taint = Taint(key="k", value=taint_value, effect="NoSchedule")
    assert tolerates_node_taint(toleration, taint, comparison_operators=enabled) is expected
