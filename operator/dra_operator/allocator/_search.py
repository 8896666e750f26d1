"""The search: depth-first, first solution wins, in upstream's exact order.

This mirrors upstream's `allocateOne`/`allocateDevice` (v1.36 incubating) step for step, so the
same inputs pick the same devices: claims in order, requests in spec order, subrequests in
order, and for `ExactCount` devices in the (policy's) candidate order starting *after* the
previous pick of the same request, so combinations are tried, never permutations.

On top of upstream, two sound prunings that never change which solution is found first (they
only cut branches that cannot succeed): a request that needs k more devices fails at once when
fewer than k candidates from the current start could still serve it; and under a fixed
`matchAttribute` value only candidates with that value are counted (candidates are grouped by
attribute value), which removes upstream's exponential backtracking on unmatched constraints.
A step budget and deadline end the search with `Outcome.ABORTED`.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import partial

from dra_operator.allocator._capacity import consumed_capacity, fits_capacity, qualify
from dra_operator.allocator._constraints import MatchAttribute, lookup_attribute
from dra_operator.allocator._counters import CounterBook
from dra_operator.allocator._features import Features
from dra_operator.allocator._inputs import Budget, Ledger
from dra_operator.allocator._prepare import Prepared
from dra_operator.allocator._requests import (
    MAX_RESULTS,
    Candidate,
    Eligibility,
    Rejection,
    RequestData,
    claim_ref,
)
from dra_operator.allocator._taints import blocking_taint
from dra_operator.errors import AllocationInputError
from dra_operator.model import DeviceID, Quantity, ResourceClaim

_CLOCK_EVERY = 256  # steps between deadline checks


class Outcome(enum.Enum):
    FOUND = "found"
    NONE = "none"
    TOO_MANY = "too-many"  # upstream's errAllocationResultMaxSizeExceeded signal
    ABORTED = "aborted"


class Pick:
    __slots__ = ("candidate", "consumed", "request", "share_id")

    def __init__(
        self,
        request: RequestData,
        candidate: Candidate,
        share_id: str | None,
        consumed: dict[str, Quantity],
    ) -> None:
        self.request = request
        self.candidate = candidate
        self.share_id = share_id
        self.consumed = consumed


Undo = Callable[[], None]


class Search:
    """Mutable per-call search state (upstream's `allocator` struct)."""

    def __init__(
        self,
        *,
        claims: Sequence[ResourceClaim],
        prepared: Prepared,
        orders: Callable[[RequestData], Sequence[Candidate]],
        features: Features,
        ledger: Ledger,
        eligibility: Eligibility,
        budget: Budget,
        new_share_id: Callable[[], str],
    ) -> None:
        self.claims = claims
        self.prepared = prepared
        self._order_for = orders
        self.features = features
        self.ledger = ledger
        self.eligibility = eligibility
        self.budget = budget
        self.new_share_id = new_share_id
        self.picks: list[list[Pick]] = [[] for _ in claims]
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.steps = 0
        self._deadline = None if budget.timeout is None else budget.clock() + budget.timeout
        self._allocating: dict[DeviceID, set[int]] = {}
        self._capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self._counters = CounterBook(ledger)
        self._orders: dict[tuple[int, int, int], Sequence[Candidate]] = {}
        self._static: dict[tuple[int, int, int], list[int]] = {}
        self._groups: dict[tuple[tuple[int, int, int], str], dict[object, list[int]]] = {}
        self._positions: dict[tuple[int, int, int], dict[DeviceID, int]] = {}

    def run(self) -> Outcome:
        return self._allocate_one(0, 0, 0, 0, False, 0)

    # -- the recursion -------------------------------------------------------------------------

    def _allocate_one(self, c: int, r: int, s: int, d: int, in_sub: bool, start: int) -> Outcome:
        """Place device `d` of request (c, r, s) and everything after it.

        Invariant: on any outcome but FOUND, all state changes made below this call are undone.
        """
        self.steps += 1
        if self.steps > self.budget.max_steps:
            return Outcome.ABORTED
        if (
            self._deadline is not None
            and self.steps % _CLOCK_EVERY == 0
            and self.budget.clock() >= self._deadline
        ):
            return Outcome.ABORTED
        if c >= len(self.claims):
            return Outcome.FOUND
        if r >= len(self.claims[c].spec.requests):
            found = self._allocate_one(c + 1, 0, 0, 0, False, 0)
            return Outcome.NONE if found is Outcome.TOO_MANY else found

        count = self.prepared.subrequests[(c, r)]
        if not in_sub and count:
            all_too_many = True
            for sub in range(count):
                found = self._allocate_one(c, r, sub, d, True, 0)
                if found is Outcome.TOO_MANY:
                    continue
                all_too_many = False
                if found is Outcome.FOUND:
                    self.selected_sub[(c, r)] = sub
                    return found
                if found is Outcome.ABORTED:
                    return found
            return Outcome.TOO_MANY if all_too_many else Outcome.NONE

        data = self.prepared.requests[(c, r, s)]
        if data.all_devices and not data.devices:
            return Outcome.NONE
        if d >= data.num_devices:
            return self._allocate_one(c, r + 1, 0, 0, False, 0)
        if len(self.picks[c]) + data.num_devices - d > MAX_RESULTS:
            return Outcome.TOO_MANY

        if data.all_devices:
            undo = self._allocate_device(c, data, data.devices[d], must=True)
            if undo is None:
                return Outcome.NONE
            found = self._allocate_one(c, r, s, d + 1, in_sub, 0)
            if found is not Outcome.FOUND:
                undo()
            return found

        order = self._order(data)
        if (data.num_devices - d > 1 or self.prepared.constraints[c]) and not self._enough_left(
            c, data, d, start, order
        ):
            return Outcome.NONE
        for position in range(start, len(order)):
            candidate = order[position]
            if data.admin_access:
                if c in self._allocating.get(candidate.id, ()):
                    continue
            elif self._in_use(candidate.id):
                continue
            if self.eligibility.check(data, candidate) is not None:
                continue
            if self.features.consumable_capacity and not self._capacity_fits(data, candidate):
                continue
            undo = self._allocate_device(c, data, candidate, must=False)
            if undo is None:
                continue
            found = self._allocate_one(c, r, s, d + 1, in_sub, position + 1)
            if found is Outcome.FOUND:
                return found
            undo()
            if found is not Outcome.NONE:
                return found
        return Outcome.NONE

    # -- taking one device ---------------------------------------------------------------------

    def _allocate_device(
        self, c: int, data: RequestData, candidate: Candidate, *, must: bool
    ) -> Undo | None:
        """Upstream's `allocateDevice`: None when the device cannot be taken (state unchanged)."""
        device, device_id = candidate.device, candidate.id
        multi = self.features.consumable_capacity and bool(device.allow_multiple_allocations)
        if not multi and data.admin_access and c in self._allocating.get(device_id, ()):
            return None
        if not data.admin_access and self._in_use(device_id):
            return None
        if not self.features.partitionable_devices and device.consumes_counters:
            return None
        reserved = False
        if device.consumes_counters and not (multi and self._capacity_in_use(device_id)):
            if not self._counters.reserve(candidate.pool, device):
                return None
            reserved = True
        undo: list[Callable[[], None]] = []
        if reserved:
            undo.append(lambda: self._counters.release(candidate.pool, device))

        def rollback() -> None:
            for step in reversed(undo):
                step()

        if self.features.device_taints and blocking_taint(device, data.tolerations):
            rollback()
            return None
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        for constraint in self.prepared.constraints[c]:
            if not constraint.add(base, sub, device, device_id.driver):
                rollback()
                if must:
                    raise AllocationInputError(
                        f"claim {claim_ref(self.claims[c])}, request {data.name}: cannot add "
                        f"device {device_id} because a claim constraint would not be satisfied"
                    )
                return None
            undo.append(partial(constraint.remove, base, sub))
        if not multi:
            self._allocating.setdefault(device_id, set()).add(c)
            undo.append(lambda: self._allocating[device_id].discard(c))
        consumed: dict[str, Quantity] = {}
        share_id: str | None = None
        if self.features.consumable_capacity:
            if not self._capacity_fits(data, candidate):
                rollback()
                return None
            if multi:
                consumed = consumed_capacity(
                    qualify(data.capacity, device_id.driver), device.capacity
                )
                share_id = self.new_share_id()
                undo.append(self._insert_capacity(device_id, consumed))
        picks = self.picks[c]
        picks.append(Pick(data, candidate, share_id, consumed))
        undo.append(lambda: _del_last(picks))
        return rollback

    def _insert_capacity(self, device_id: DeviceID, consumed: dict[str, Quantity]) -> Undo:
        existed = device_id in self._capacity
        totals = self._capacity.setdefault(device_id, {})
        for name, quantity in consumed.items():
            totals[name] = totals.get(name, Fraction(0)) + quantity.value

        def remove() -> None:
            current = self._capacity.get(device_id)
            if current is not None:
                for name, quantity in consumed.items():
                    current[name] = current.get(name, Fraction(0)) - quantity.value
                if all(v == 0 for v in current.values()):
                    del self._capacity[device_id]
            if existed and device_id not in self._capacity:
                self._capacity[device_id] = {}

        return remove

    # -- availability --------------------------------------------------------------------------

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.ledger.exclusive or bool(self._allocating.get(device_id))

    def _capacity_in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.ledger.consumed_capacity or device_id in self._capacity

    def _capacity_fits(self, data: RequestData, candidate: Candidate) -> bool:
        allocating = self._capacity.get(candidate.id)
        return bool(
            fits_capacity(
                self.ledger.consumed_capacity.get(candidate.id),
                qualify(data.capacity, candidate.id.driver),
                candidate.device.capacity,
                {k: Quantity(v) for k, v in allocating.items()} if allocating else None,
            )
        )

    # -- pruning -------------------------------------------------------------------------------

    def _order(self, data: RequestData) -> Sequence[Candidate]:
        found = self._orders.get(data.key)
        if found is None:
            found = self._orders[data.key] = self._order_for(data)
        return found

    def _enough_left(
        self, c: int, data: RequestData, d: int, start: int, order: Sequence[Candidate]
    ) -> bool:
        """Whether at least the still-needed number of candidates remain from `start` on."""
        need = data.num_devices - d
        positions = self._static_positions(data, order)
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        for constraint in self.prepared.constraints[c]:
            if not isinstance(constraint, MatchAttribute) or not constraint.applies_to(base, sub):
                continue
            if constraint.count == 0:
                continue
            fixed = constraint.fixed_value()
            if fixed is not None:
                groups = self._value_groups(data, order, positions, constraint.attribute)
                positions = groups.get((fixed.kind, fixed.value), [])
            else:
                positions = [
                    p
                    for p in positions
                    if p >= start and constraint.is_compatible(order[p].device, order[p].id.driver)
                ]
        left = len(positions) - bisect.bisect_left(positions, start)
        if left < need:
            return False
        if not self._allocating:
            return True
        where = self._position_index(data, order)
        for device_id, holders in self._allocating.items():
            if not holders or (data.admin_access and c not in holders):
                continue
            position = where.get(device_id)
            if position is None or position < start:
                continue
            index = bisect.bisect_left(positions, position)
            if index < len(positions) and positions[index] == position:
                left -= 1
        return left >= need

    def _static_positions(self, data: RequestData, order: Sequence[Candidate]) -> list[int]:
        """Positions of candidates that could ever serve `data` in this call (an upper bound)."""
        found = self._static.get(data.key)
        if found is not None:
            return found
        found = []
        for position, candidate in enumerate(order):
            device = candidate.device
            if not data.admin_access and candidate.id in self.ledger.exclusive:
                continue
            if isinstance(self.eligibility.peek(data, candidate), Rejection):
                continue
            if not self.features.partitionable_devices and device.consumes_counters:
                continue
            if self.features.device_taints and blocking_taint(device, data.tolerations):
                continue
            if self.features.consumable_capacity and not fits_capacity(
                self.ledger.consumed_capacity.get(candidate.id),
                qualify(data.capacity, candidate.id.driver),
                device.capacity,
                None,
            ):
                continue
            found.append(position)
        self._static[data.key] = found
        return found

    def _value_groups(
        self, data: RequestData, order: Sequence[Candidate], positions: list[int], name: str
    ) -> dict[object, list[int]]:
        key = (data.key, name)
        found = self._groups.get(key)
        if found is None:
            found = {}
            for position in positions:
                candidate = order[position]
                attribute = lookup_attribute(candidate.device, candidate.id.driver, name)
                if attribute is not None:
                    found.setdefault((attribute.kind, attribute.value), []).append(position)
            self._groups[key] = found
        return found

    def _position_index(self, data: RequestData, order: Sequence[Candidate]) -> dict[DeviceID, int]:
        found = self._positions.get(data.key)
        if found is None:
            found = self._positions[data.key] = {c.id: i for i, c in enumerate(order)}
        return found


def _del_last(picks: list[Pick]) -> None:
    picks.pop()
