"""Consumable capacity (DRAConsumableCapacity): does a request fit what is left of a device.

Upstream's `CmpRequestOverCapacity` and its helpers: every capacity of the device is consumed
(the request's amount rounded up to the request policy, or the policy default, or the whole
capacity when nothing is requested); a value that violates the policy, or a total above the
device's capacity, does not fit; naming a capacity the device lacks makes the device unusable.
Dedicated devices only use this as a filter; shares record the consumption, which the search
keeps per attempt in `CapacityBook` as integer nano-units.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dra_operator.allocator._requests import Candidate
from dra_operator.model import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    DeviceCapacity,
    DeviceID,
    Quantity,
    QuantityFormat,
)

Consumption = Mapping[str, Quantity]
_PlanKey = tuple[Consumption | None, str, Mapping[str, DeviceCapacity]]  # request, driver, device

# Quantities carry at most nano precision, so nano-units are exact integers; integer
# arithmetic on them is many times cheaper than on the rational `Quantity.value`.
_NANO = 10**9


def _nanos(quantity: Quantity) -> int:
    value = quantity.value
    return value.numerator * _NANO // value.denominator


def _int_value(quantity: Quantity) -> int:
    """`Quantity.int_value()` (rounded up, away from zero) from the nano-units."""
    nanos = _nanos(quantity)
    return -(-nanos // _NANO) if nanos >= 0 else nanos // _NANO


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
        wanted = _nanos(requested)
        return next((v for v in policy.valid_values if wanted <= _nanos(v)), requested)
    return requested


def _round_up_range(requested: Quantity, valid: CapacityRequestPolicyRange) -> Quantity:
    if _nanos(requested) < _nanos(valid.min):
        return valid.min
    if valid.step is None:
        return requested
    step, low = _int_value(valid.step), _int_value(valid.min)
    steps = -(-(_int_value(requested) - low) // step)
    return Quantity(low + step * steps, QuantityFormat.BINARY_SI)


def violates_policy(value: Quantity, policy: CapacityRequestPolicy | None) -> bool:
    if policy is None:
        return False
    amount = _nanos(value)
    if policy.default is not None and amount == _nanos(policy.default):
        return False
    if policy.valid_range is not None:
        valid = policy.valid_range
        if valid.max is not None and amount > _nanos(valid.max):
            return True
        if valid.step is not None:
            offset = _int_value(value) - _int_value(valid.min)
            return _go_mod(offset, _int_value(valid.step)) != 0
        return False
    if policy.valid_values:
        return all(amount != _nanos(v) for v in policy.valid_values)
    return False


def _go_mod(a: int, b: int) -> int:
    """Go's `%` (sign of the dividend), which differs from Python's for negative operands."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


class Share:
    """What one allocation takes from a device: quantities for the result, nanos for sums."""

    __slots__ = ("amounts", "consumed")

    def __init__(self, consumed: dict[str, Quantity], totals: dict[str, int]) -> None:
        self.consumed = consumed
        # (capacity name, consumed, the device's total), all in nano-units
        self.amounts = tuple(
            (name, _nanos(quantity), totals[name]) for name, quantity in consumed.items()
        )


def plan_share(
    requested: Consumption | None, capacities: Mapping[str, DeviceCapacity]
) -> Share | None:
    """What one allocation takes from each capacity of an otherwise unused device.

    None when it can never fit: it names a capacity the device lacks, violates a request
    policy or exceeds a capacity on its own (`fits_capacity` with nothing else in use).
    """
    if requested and any(name not in capacities for name in requested):
        return None
    consumed: dict[str, Quantity] = {}
    totals: dict[str, int] = {}
    for name, capacity in capacities.items():
        amount = consumed_amount(requested.get(name) if requested else None, capacity)
        total = _nanos(capacity.value)
        if violates_policy(amount, capacity.request_policy) or _nanos(amount) > total:
            return None
        consumed[name] = amount
        totals[name] = total
    return Share(consumed, totals)


class CapacityBook:
    """Per-attempt consumable-capacity accounting (upstream's allocatingCapacity).

    Sums are integers of nano-units, so the search compares plain ints instead of rational
    quantities. The share a request takes from a device is computed once per (capacity
    request, device) and call; what the ledger already consumes, once per device.
    """

    __slots__ = (
        "_allocating",
        "_any_existing",
        "_existing",
        "_ledger",
        "_plans",
        "_shared",
        "_shares",
    )

    def __init__(
        self,
        ledger: Mapping[DeviceID, Mapping[str, Quantity]],
        shared: frozenset[DeviceID] = frozenset(),
    ) -> None:
        self._ledger = ledger
        self._shared = shared  # 1.37: devices with a persisted share, consumed capacity or not
        self._any_existing = bool(ledger)
        self._allocating: dict[int, dict[str, int]] = {}  # candidate index -> name -> nanos
        self._existing: dict[int, dict[str, int] | None] = {}
        self._shares: dict[tuple[int, int], Share | None] = {}  # id(requested), index
        self._plans: dict[_PlanKey, Share | None] = {}

    def share(self, requested: Consumption | None, candidate: Candidate) -> Share | None:
        """What the request would take from the device; None when it can never fit."""
        # The requested mapping lives as long as the call (its claim does); hashing it by
        # content on every check cost more than the check.
        key = (id(requested), candidate.index)
        try:
            return self._shares[key]
        except KeyError:
            pass
        # Devices alike (a driver publishes many with the same capacities) share the plan.
        driver, capacities = candidate.pool.id.driver, candidate.device.capacity
        plan_key = (requested, driver, capacities)
        try:
            found = self._plans[plan_key]
        except KeyError:
            found = self._plans[plan_key] = plan_share(qualify(requested, driver), capacities)
        self._shares[key] = found
        return found

    def fits(self, requested: Consumption | None, candidate: Candidate) -> bool:
        """Upstream's `CmpRequestOverCapacity` with the ledger's and this attempt's shares."""
        share = self.share(requested, candidate)
        if share is None:
            return False
        existing = self._existing_of(candidate) if self._any_existing else None
        allocating = self._allocating.get(candidate.index)
        if not existing and not allocating:
            return True
        for name, amount, total in share.amounts:
            if existing:
                amount += existing.get(name, 0)
            if allocating:
                amount += allocating.get(name, 0)
            if amount > total:
                return False
        return True

    def fits_ledger(self, requested: Consumption | None, candidate: Candidate) -> bool:
        """Whether the request fits what the ledger leaves of the device (this attempt aside)."""
        if not requested and not candidate.device.capacity:
            return True
        share = self.share(requested, candidate)
        if share is None:
            return False
        existing = self._existing_of(candidate)
        return not existing or all(
            amount + existing.get(name, 0) <= total for name, amount, total in share.amounts
        )

    def is_in_use(self, candidate: Candidate) -> bool:
        """Whether any share of the device exists, in the ledger or in this attempt (1.37 also
        counts a share the ledger knows only by its ID, #140437)."""
        return (
            candidate.index in self._allocating
            or self._existing_of(candidate) is not None
            or candidate.id in self._shared
        )

    def insert(self, share: Share, index: int) -> Callable[[], None]:
        """Add a share of the device; returns its undo."""
        allocating = self._allocating
        existed = index in allocating
        totals = allocating.setdefault(index, {})
        for name, amount, _ in share.amounts:
            totals[name] = totals.get(name, 0) + amount

        def remove() -> None:
            current = allocating.get(index)
            if current is not None:
                for name, amount, _ in share.amounts:
                    current[name] = current.get(name, 0) - amount
                if all(v == 0 for v in current.values()):
                    del allocating[index]
            if existed and index not in allocating:
                allocating[index] = {}

        return remove

    def _existing_of(self, candidate: Candidate) -> dict[str, int] | None:
        """What the ledger's shares of the device consume; None when it has none."""
        try:
            return self._existing[candidate.index]
        except KeyError:
            pass
        consumed = self._ledger.get(candidate.id)
        found = None if consumed is None else {name: _nanos(q) for name, q in consumed.items()}
        self._existing[candidate.index] = found
        return found
