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
from dataclasses import dataclass
from fractions import Fraction

from dra_operator.allocator._features import Features
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
_MAX_INT64 = 2**63 - 1
_NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"


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


class CapacityError(Exception):
    """1.37's fail-closed capacity arithmetic: a request (or what it rounds up to) that the
    device's range arithmetic cannot represent, or a negative amount. Aborts the allocation
    (upstream: not "skip this device"); callers wrap it with the claim, request and device."""


@dataclass(frozen=True, slots=True)
class Arithmetic:
    """Which release's capacity arithmetic: 1.37 rounds into the step's format and fails closed
    (`since_137`); DRAFractionalCapacityRange rounds ranges in milli-units (`fractional`)."""

    since_137: bool = False
    fractional: bool = False

    @classmethod
    def of(cls, features: Features) -> Arithmetic:
        return cls(since_137=features.since_137, fractional=features.fractional_capacity_range)


OLD = Arithmetic()


def fits_capacity(
    existing: Consumption | None,
    requested: Consumption | None,
    capacities: Mapping[str, DeviceCapacity],
    allocating: Consumption | None,
    rules: Arithmetic = OLD,
) -> bool | None:
    """True when the request fits; False when not; None when it names an unknown capacity.

    Raises CapacityError (1.37) before any soft check, whichever capacity it concerns.
    """
    if requested and any(name not in capacities for name in requested):
        return None
    consumed = {
        name: consumed_amount(requested.get(name) if requested else None, capacity, rules, name)
        for name, capacity in capacities.items()
    }
    for name, capacity in capacities.items():
        amount = consumed[name]
        if violates_policy(amount, capacity.request_policy, rules):
            return False
        total = amount.value
        if existing and name in existing:
            total += existing[name].value
        if allocating and name in allocating:
            total += allocating[name].value
        if total > capacity.value.value:
            return False
    return True


def consumed_amount(
    requested: Quantity | None,
    capacity: DeviceCapacity,
    rules: Arithmetic = OLD,
    name: str = "",
) -> Quantity:
    """What one allocation consumes of `capacity`; raises CapacityError (1.37 rules only)."""
    amount = _consumed_amount(requested, capacity, rules, name)
    if rules.since_137 and amount.sign < 0:
        raise CapacityError(f'capacity "{_bare(name)}": capacity value is negative')
    return amount


def _consumed_amount(
    requested: Quantity | None, capacity: DeviceCapacity, rules: Arithmetic, name: str
) -> Quantity:
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.valid_range is not None:
        if rules.since_137:
            return _round_up_range_137(requested, policy.valid_range, rules.fractional, name)
        return _round_up_range(requested, policy.valid_range)
    if policy.valid_values:
        wanted = _nanos(requested)
        return next((v for v in policy.valid_values if wanted <= _nanos(v)), requested)
    return requested


def _bare(name: str) -> str:
    """The capacity name as the API spells it in a request (model keys are qualified)."""
    return name.rpartition("/")[2] if "/" in name else name


def _round_up_range(requested: Quantity, valid: CapacityRequestPolicyRange) -> Quantity:
    if _nanos(requested) < _nanos(valid.min):
        return valid.min
    if valid.step is None:
        return requested
    step, low = _int_value(valid.step), _int_value(valid.min)
    steps = -(-(_int_value(requested) - low) // step)
    return Quantity(low + step * steps, QuantityFormat.BINARY_SI)


def _safe_milli(quantity: Quantity) -> int | None:
    """The value in milli-units when that is exact and fits int64 (upstream's safeMilliValue)."""
    milli = quantity.value * 1000
    if milli.denominator != 1 or not -(2**63) <= milli <= _MAX_INT64:
        return None
    return int(milli)


def _use_milli(valid: CapacityRequestPolicyRange, fractional: bool) -> bool:
    """DRAFractionalCapacityRange: milli arithmetic when min, max and step are exact milli
    values and the step is at least 1m (upstream's useMilli)."""
    if not fractional:
        return False
    for bound in (valid.min, valid.max, valid.step):
        if bound is not None and _safe_milli(bound) is None:
            return False
    step = _safe_milli(valid.step) if valid.step is not None else None
    return step is None or step >= 1


def _ceil_steps(added: int, step: int) -> int:
    """Go's `added/step`, plus one when there is a remainder (truncating division)."""
    steps = _go_div(added, step)
    return steps + 1 if _go_mod(added, step) != 0 else steps


def _round_up_range_137(
    requested: Quantity, valid: CapacityRequestPolicyRange, fractional: bool, name: str
) -> Quantity:
    """1.37's roundUpRange: the result in the step's format, errors where int64 ends."""
    if requested.value < valid.min.value:
        return valid.min
    step_q = valid.step
    if step_q is None:
        return requested
    prefix = f'capacity "{_bare(name)}": {_NOT_REPRESENTABLE}:'
    text = requested.canonical()
    if _use_milli(valid, fractional):
        wanted = _safe_milli(requested)
        if wanted is None:
            raise CapacityError(f"{prefix} request {text} is not a representable milli value")
        step, low = step_q.milli_value(), valid.min.milli_value()
        steps = _ceil_steps(wanted - low, step)
        if steps > _go_div(_MAX_INT64 - low, step):
            raise CapacityError(
                f"{prefix} rounding request {text} up to the next step passes the milli-value range"
            )
        milli = low + step * steps
        return Quantity(Fraction(milli, 1000), step_q.format)
    if requested.value > _MAX_INT64:
        raise CapacityError(f"{prefix} request {text} exceeds MaxInt64")
    step, low = step_q.int_value(), valid.min.int_value()
    steps = _ceil_steps(requested.int_value() - low, step)
    if low >= 0 and steps > _go_div(_MAX_INT64 - low, step):
        raise CapacityError(f"{prefix} rounding request {text} up to the next step passes MaxInt64")
    return Quantity(low + step * steps, step_q.format)


def violates_policy(
    value: Quantity, policy: CapacityRequestPolicy | None, rules: Arithmetic = OLD
) -> bool:
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
            if _use_milli(valid, rules.fractional):
                milli = _safe_milli(value)
                if milli is None:
                    return True
                offset, step = milli - valid.min.milli_value(), valid.step.milli_value()
            else:
                offset = _int_value(value) - _int_value(valid.min)
                step = _int_value(valid.step)
            return _go_mod(offset, step) != 0
        return False
    if policy.valid_values:
        return all(amount != _nanos(v) for v in policy.valid_values)
    return False


def _go_mod(a: int, b: int) -> int:
    """Go's `%` (sign of the dividend), which differs from Python's for negative operands."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _go_div(a: int, b: int) -> int:
    """Go's integer `/` (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


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
    requested: Consumption | None,
    capacities: Mapping[str, DeviceCapacity],
    rules: Arithmetic = OLD,
) -> Share | CapacityError | None:
    """What one allocation takes from each capacity of an otherwise unused device.

    None when it can never fit: it names a capacity the device lacks, violates a request
    policy or exceeds a capacity on its own (`fits_capacity` with nothing else in use).
    A CapacityError (returned, for the search to raise when it reaches the device) when 1.37
    fails closed; every amount is resolved before any soft check, as upstream does.
    """
    if requested and any(name not in capacities for name in requested):
        return None
    consumed: dict[str, Quantity] = {}
    totals: dict[str, int] = {}
    try:
        for name, capacity in capacities.items():
            consumed[name] = consumed_amount(
                requested.get(name) if requested else None, capacity, rules, name
            )
    except CapacityError as err:
        return err
    for name, capacity in capacities.items():
        amount = consumed[name]
        total = _nanos(capacity.value)
        if violates_policy(amount, capacity.request_policy, rules) or _nanos(amount) > total:
            return None
        totals[name] = total
    return Share(consumed, totals)


_Plan = Share | CapacityError | None


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
        "_rules",
        "_shared",
        "_shares",
    )

    def __init__(
        self,
        ledger: Mapping[DeviceID, Mapping[str, Quantity]],
        shared: frozenset[DeviceID] = frozenset(),
        rules: Arithmetic = OLD,
    ) -> None:
        self._ledger = ledger
        self._rules = rules
        self._shared = shared  # 1.37: devices with a persisted share, consumed capacity or not
        self._any_existing = bool(ledger)
        self._allocating: dict[int, dict[str, int]] = {}  # candidate index -> name -> nanos
        self._existing: dict[int, dict[str, int] | None] = {}
        self._shares: dict[tuple[int, int], Share | None] = {}  # id(requested), index
        self._plans: dict[_PlanKey, _Plan] = {}

    def share(self, requested: Consumption | None, candidate: Candidate) -> Share | None:
        """What the request would take from the device; None when it can never fit.

        Raises CapacityError when 1.37's arithmetic fails closed for this device.
        """
        # The requested mapping lives as long as the call (its claim does); hashing it by
        # content on every check cost more than the check.
        key = (id(requested), candidate.index)
        try:
            return self._shares[key]  # never an error: those are only kept as plans
        except KeyError:
            pass
        # Devices alike (a driver publishes many with the same capacities) share the plan.
        driver, capacities = candidate.pool.id.driver, candidate.device.capacity
        plan_key = (requested, driver, capacities)
        try:
            found = self._plans[plan_key]
        except KeyError:
            found = self._plans[plan_key] = plan_share(
                qualify(requested, driver), capacities, self._rules
            )
        if isinstance(found, CapacityError):
            raise found
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
        """Whether the request fits what the ledger leaves of the device (this attempt aside).

        True for a device whose arithmetic fails: pruning must let the search reach it.
        """
        if not requested and not candidate.device.capacity:
            return True
        try:
            share = self.share(requested, candidate)
        except CapacityError:
            return True
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
