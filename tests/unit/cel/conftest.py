"""A reference device and an `outcome` helper shared by the CEL tests."""

from __future__ import annotations

import pytest

from dra_operator import cel
from dra_operator.errors import CELCompileError, CELCostLimitError, CELRuntimeError
from dra_operator.model import (
    AttributeKind,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    FrozenMap,
    Quantity,
)

DRIVER = "gpu.example.com"


def attr(kind: AttributeKind, value: object) -> DeviceAttribute:
    return DeviceAttribute(kind=kind, value=value)  # type: ignore[arg-type]


K = AttributeKind
GPU = Device(
    name="gpu-0",
    attributes=FrozenMap(
        {
            f"{DRIVER}/model": attr(K.STRING, "a100"),
            f"{DRIVER}/cores": attr(K.INT, 108),
            f"{DRIVER}/enabled": attr(K.BOOL, True),
            f"{DRIVER}/driverVersion": attr(K.VERSION, "1.4.2+build7"),
            "numa.example.com/node": attr(K.INT, 1),
        }
    ),
    capacity=FrozenMap(
        {
            f"{DRIVER}/memory": DeviceCapacity(value=Quantity.parse("40Gi")),
            f"{DRIVER}/slices": DeviceCapacity(value=Quantity.parse("7")),
            f"{DRIVER}/power": DeviceCapacity(value=Quantity.parse("250m")),
        }
    ),
    allow_multiple_allocations=True,
)


def outcome(
    expression: str,
    device: Device = GPU,
    *,
    features: cel.CELFeatures = cel.DEFAULT_FEATURES,
    driver: str = DRIVER,
) -> tuple[str, object]:
    """("match", bool) | ("compile", text) | ("runtime", text) | ("cost", text)."""
    try:
        selector = cel.compile_selector(expression, features=features)
    except CELCompileError as exc:
        return ("compile", str(exc))
    try:
        return ("match", selector.matches(cel.device_view(driver, device)))
    except CELCostLimitError as exc:
        return ("cost", str(exc))
    except CELRuntimeError as exc:
        return ("runtime", str(exc))


@pytest.fixture(scope="session")
def gpu_view() -> cel.DeviceView:
    return cel.device_view(DRIVER, GPU)


@pytest.fixture(name="outcome", scope="session")
def outcome_fixture() -> object:
    return outcome
