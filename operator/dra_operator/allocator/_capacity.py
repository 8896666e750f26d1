"""Consumable capacity (DRAConsumableCapacity): does a request fit what is left of a device.

Upstream's `CmpRequestOverCapacity` and its helpers: every capacity of the device is consumed
(the request's amount rounded up to the request policy, or the policy default, or the whole
capacity when nothing is requested); a value that violates the policy, or a total above the
device's capacity, does not fit; naming a capacity the device lacks makes the device unusable.
Dedicated devices only use this as a filter; shares record the consumption.
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator.model import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    DeviceCapacity,
    Quantity,
    QuantityFormat,
)

Consumption = Mapping[str, Quantity]


def qualify(requested: Consumption | None, driver: str) -> Consumption | None:
    """Request names as the model keys device capacities: bare names in the driver's domain."""
    if not requested:
        return requested
    return {name if "/" in name else f"{driver}/{name}": value for name, value in requested.items()}


def unqualify(consumed: Mapping[str, Quantity], driver: str) -> dict[str, Quantity]:
    """Result keys as the driver published them (bare within its own domain)."""
    prefix = f"{driver}/"
    return {name.removeprefix(prefix): value for name, value in consumed.items()}


def fits_capacity(
    existing: Consumption | None,
    requested: Consumption | None,
    capacities: Mapping[str, DeviceCapacity],
    allocating: Consumption | None,
) -> bool | None:
    """True when the request fits; False when not; None when it names an unknown capacity."""
    if requested and any(name not in capacities for name in requested):
        return None
    for name, capacity in capacities.items():
        consumed = consumed_amount(requested.get(name) if requested else None, capacity)
        if violates_policy(consumed, capacity.request_policy):
            return False
        total = consumed.value
        if existing and name in existing:
            total += existing[name].value
        if allocating and name in allocating:
            total += allocating[name].value
        if total > capacity.value.value:
            return False
    return True


def consumed_capacity(
    requested: Consumption | None, capacities: Mapping[str, DeviceCapacity]
) -> dict[str, Quantity]:
    """What one share takes from each capacity of the device."""
    return {
        name: consumed_amount(requested.get(name) if requested else None, capacity)
        for name, capacity in capacities.items()
    }


def consumed_amount(requested: Quantity | None, capacity: DeviceCapacity) -> Quantity:
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.valid_range is not None:
        return _round_up_range(requested, policy.valid_range)
    if policy.valid_values:
        return next((v for v in policy.valid_values if requested <= v), requested)
    return requested


def _round_up_range(requested: Quantity, valid: CapacityRequestPolicyRange) -> Quantity:
    if requested < valid.min:
        return valid.min
    if valid.step is None:
        return requested
    step, low = valid.step.int_value(), valid.min.int_value()
    steps = -(-(requested.int_value() - low) // step)
    return Quantity(low + step * steps, QuantityFormat.BINARY_SI)


def violates_policy(value: Quantity, policy: CapacityRequestPolicy | None) -> bool:
    if policy is None:
        return False
    if policy.default is not None and value == policy.default:
        return False
    if policy.valid_range is not None:
        valid = policy.valid_range
        if valid.max is not None and value > valid.max:
            return True
        if valid.step is not None:
            offset = value.int_value() - valid.min.int_value()
            return _go_mod(offset, valid.step.int_value()) != 0
        return False
    if policy.valid_values:
        return all(value != v for v in policy.valid_values)
    return False


def _go_mod(a: int, b: int) -> int:
    """Go's `%` (sign of the dividend), which differs from Python's for negative operands."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r
