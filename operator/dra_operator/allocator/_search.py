"""The search: depth-first, first solution wins, in upstream's exact order.

This mirrors upstream's `allocateOne`/`allocateDevice` (v1.36 incubating) step for step, so the
same inputs pick the same devices: claims in order, requests in spec order, subrequests in
order, and for `ExactCount` devices in the (policy's) candidate order starting *after* the
previous pick of the same request, so combinations are tried, never permutations.

Beyond upstream, pruning that never changes which solution is found first — it only cuts
branches that cannot succeed. Once a search needs more steps than a straight run would, every
step checks, with bitmasks over candidate indices: that the current request still has enough
candidates left from its start position (only those with a `matchAttribute` constraint's fixed
value, when one applies: candidates grouped by attribute value), and that every later request
could still be served from the devices not yet taken (an `All` request needs all of its
devices free). Devices only get taken deeper in a branch, so a doomed branch stays doomed.
A step budget and a deadline end the search with `Outcome.ABORTED`.
"""

from __future__ import annotations

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
    RequestKey,
    SelectorFailure,
    claim_ref,
)
from dra_operator.allocator._taints import blocking_taint
from dra_operator.errors import AllocationInputError
from dra_operator.model import Quantity, ResourceClaim

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
# A later request's alternatives (one, or one per subrequest); each is the request data.
_Future = list[list[RequestData]]


class Search:
    """Mutable per-call search state (upstream's `allocator` struct)."""

    def __init__(
        self,
        *,
        claims: Sequence[ResourceClaim],
        prepared: Prepared,
        candidates: Sequence[Candidate],
        orders: Callable[[RequestData], Sequence[Candidate]],
        features: Features,
        ledger: Ledger,
        eligibility: Eligibility,
        budget: Budget,
        new_share_id: Callable[[], str],
    ) -> None:
        self.claims = claims
        self.prepared = prepared
        self.candidates = candidates
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
        self._exclusive = [c.id in ledger.exclusive for c in candidates]
        self._holders: list[set[int] | None] = [None] * len(candidates)
        self._taken = 0  # bit i: candidate i is picked (non-shared) in this attempt
        self._capacity: dict[int, dict[str, Fraction]] = {}
        self._counters = CounterBook(ledger)
        self._orders: dict[RequestKey, tuple[Sequence[Candidate], bool]] = {}
        self._consumption: dict[tuple[RequestKey, int], dict[str, Fraction] | None] = {}
        minimum = sum(d.num_devices + 1 for d in prepared.requests.values())
        self._warmup = 2 * minimum + 2 * len(claims) + 16
        self._eligible: dict[RequestKey, int] = {}
        self._all_masks: dict[RequestKey, list[int]] = {}
        self._groups: dict[str, dict[object, int]] = {}
        self._suffixes: dict[RequestKey, list[int]] = {}
        self._futures: dict[tuple[int, int], _Future] = {}
        self._prunable: bool | None = None

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
        if (
            self.steps > self._warmup
            and self._can_prune()
            and self._is_doomed(c, r, data, d, start)
        ):
            return Outcome.NONE

        if data.all_devices:
            undo = self._allocate_device(c, data, data.devices[d], must=True)
            if undo is None:
                return Outcome.NONE
            found = self._allocate_one(c, r, s, d + 1, in_sub, 0)
            if found is not Outcome.FOUND:
                undo()
            return found

        order, _ = self._order(data)
        admin = data.admin_access
        exclusive, holders = self._exclusive, self._holders
        check = self.eligibility.check
        capacity = self.features.consumable_capacity
        for position in range(start, len(order)):
            candidate = order[position]
            index = candidate.index
            held = holders[index]
            if admin:
                if held and c in held:
                    continue
            elif exclusive[index] or held:
                continue
            if check(data, candidate) is not None:
                continue
            if capacity and not self._capacity_fits(data, candidate):
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
        device, index = candidate.device, candidate.index
        multi = self.features.consumable_capacity and bool(device.allow_multiple_allocations)
        held = self._holders[index]
        if not multi and data.admin_access and held and c in held:
            return None
        if not data.admin_access and (self._exclusive[index] or held):
            return None
        if not self.features.partitionable_devices and device.consumes_counters:
            return None
        undo: list[Undo] = []

        def rollback() -> None:
            for step in reversed(undo):
                step()

        if device.consumes_counters and not (multi and self._capacity_in_use(candidate)):
            if not self._counters.reserve(candidate.pool, device):
                return None
            undo.append(partial(self._counters.release, candidate.pool, device))
        if (
            self.features.device_taints
            and device.taints
            and blocking_taint(device, data.tolerations)
        ):
            rollback()
            return None
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        for constraint in self.prepared.constraints[c]:
            if not constraint.add(base, sub, device, candidate.id.driver):
                rollback()
                if must:
                    raise AllocationInputError(
                        f"claim {claim_ref(self.claims[c])}, request {data.name}: cannot add "
                        f"device {candidate.id} because a claim constraint would not be satisfied"
                    )
                return None
            undo.append(partial(constraint.remove, base, sub))
        if not multi:
            self._hold(index, c)
            undo.append(partial(self._release, index, c))
        consumed: dict[str, Quantity] = {}
        share_id: str | None = None
        if self.features.consumable_capacity:
            if not self._capacity_fits(data, candidate):
                rollback()
                return None
            if multi:
                requested = qualify(data.capacity, candidate.id.driver)
                consumed = consumed_capacity(requested, device.capacity)
                share_id = self.new_share_id()
                undo.append(self._insert_capacity(index, consumed))
        picks = self.picks[c]
        picks.append(Pick(data, candidate, share_id, consumed))
        undo.append(partial(_drop_last, picks))
        return rollback

    def _hold(self, index: int, claim: int) -> None:
        held = self._holders[index]
        if held is None:
            held = self._holders[index] = set()
        if not held:
            self._taken |= 1 << index
        held.add(claim)

    def _release(self, index: int, claim: int) -> None:
        held = self._holders[index]
        assert held is not None
        held.discard(claim)
        if not held:
            self._taken &= ~(1 << index)

    def _insert_capacity(self, index: int, consumed: dict[str, Quantity]) -> Undo:
        existed = index in self._capacity
        totals = self._capacity.setdefault(index, {})
        for name, quantity in consumed.items():
            totals[name] = totals.get(name, Fraction(0)) + quantity.value

        def remove() -> None:
            current = self._capacity.get(index)
            if current is not None:
                for name, quantity in consumed.items():
                    current[name] = current.get(name, Fraction(0)) - quantity.value
                if all(v == 0 for v in current.values()):
                    del self._capacity[index]
            if existed and index not in self._capacity:
                self._capacity[index] = {}

        return remove

    # -- capacity ------------------------------------------------------------------------------

    def _capacity_in_use(self, candidate: Candidate) -> bool:
        return candidate.id in self.ledger.consumed_capacity or candidate.index in self._capacity

    def _capacity_fits(self, data: RequestData, candidate: Candidate) -> bool:
        """Upstream's `CmpRequestOverCapacity` with this attempt's shares; memoised per pair."""
        capacities = candidate.device.capacity
        if not capacities and not data.capacity:
            return True
        key = (data.key, candidate.index)
        try:
            consumption = self._consumption[key]
        except KeyError:
            requested = qualify(data.capacity, candidate.id.driver)
            # With nothing else in use this is a pure policy check; None: never fits.
            if fits_capacity(None, requested, capacities, None):
                consumption = {
                    k: v.value for k, v in consumed_capacity(requested, capacities).items()
                }
            else:
                consumption = None
            self._consumption[key] = consumption
        if consumption is None:
            return False
        existing = self.ledger.consumed_capacity.get(candidate.id)
        allocating = self._capacity.get(candidate.index)
        if not existing and not allocating:
            return True
        for name, amount in consumption.items():
            total = amount
            if existing and name in existing:
                total += existing[name].value
            if allocating and name in allocating:
                total += allocating[name]
            if total > capacities[name].value.value:
                return False
        return True

    # -- pruning -------------------------------------------------------------------------------

    def _order(self, data: RequestData) -> tuple[Sequence[Candidate], bool]:
        """The request's candidate order, and whether it is upstream's (index == position)."""
        found = self._orders.get(data.key)
        if found is None:
            order = self._order_for(data)
            found = (order, all(c.index == i for i, c in enumerate(order)))
            self._orders[data.key] = found
        return found

    def _can_prune(self) -> bool:
        """Whether cutting branches can never hide a fatal error upstream would raise.

        Upstream raises when its search *reaches* a device whose selector fails to evaluate,
        or an `All` device a claim constraint refuses; a pruned branch might have been the one
        to reach it. So pruning is off when any request has such a device or such a request
        exists. Decided once, on the first hard step (it evaluates every selector).
        """
        if self._prunable is None:
            self._prunable = not any(
                self._has_selector_failures(data) or self._is_constrained_all(data)
                for data in self.prepared.requests.values()
            )
        return self._prunable

    def _has_selector_failures(self, data: RequestData) -> bool:
        peek = self.eligibility.peek
        return any(isinstance(peek(data, c), SelectorFailure) for c in self.candidates)

    def _is_constrained_all(self, data: RequestData) -> bool:
        if not data.all_devices:
            return False
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        return any(con.applies_to(base, sub) for con in self.prepared.constraints[data.key[0]])

    def _is_doomed(self, c: int, r: int, data: RequestData, d: int, start: int) -> bool:
        """Whether this branch cannot succeed, whatever the later choices (sound, not complete)."""
        taken = self._taken
        if not data.all_devices:
            mask = self._eligible_mask(data)
            if not data.admin_access:
                mask &= ~taken
            mask = self._within_fixed_values(c, data, mask)
            if (mask & self._suffix(data, start)).bit_count() < data.num_devices - d:
                return True
        elif not data.admin_access and self._all_mask(data, d) & taken:
            return True
        for alternatives in self._future(c, r):
            if not any(self._could_serve(c, alt, taken) for alt in alternatives):
                return True
        return False

    def _could_serve(self, c: int, data: RequestData, taken: int) -> bool:
        if data.admin_access:
            return True
        if data.all_devices:
            return bool(data.devices) and not self._all_mask(data, 0) & taken
        mask = self._eligible_mask(data) & ~taken
        if data.key[0] == c:
            mask = self._within_fixed_values(c, data, mask)
        return mask.bit_count() >= data.num_devices

    def _within_fixed_values(self, c: int, data: RequestData, mask: int) -> int:
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        for constraint in self.prepared.constraints[c]:
            if isinstance(constraint, MatchAttribute) and constraint.applies_to(base, sub):
                fixed = constraint.fixed_value()
                if fixed is not None:
                    groups = self._value_groups(constraint.attribute)
                    mask &= groups.get((fixed.kind, fixed.value), 0)
        return mask

    def _future(self, c: int, r: int) -> _Future:
        """Plain later requests (this claim's after `r`, then every later claim's)."""
        found = self._futures.get((c, r))
        if found is None:
            found = []
            for claim in range(c, len(self.claims)):
                first = r + 1 if claim == c else 0
                for request in range(first, len(self.claims[claim].spec.requests)):
                    count = self.prepared.subrequests[(claim, request)]
                    keys = [(claim, request, sub) for sub in range(count or 1)]
                    found.append([self.prepared.requests[key] for key in keys])
            self._futures[(c, r)] = found
        return found

    def _eligible_mask(self, data: RequestData) -> int:
        """Candidates that could ever serve `data` in this call, ignoring this attempt's picks."""
        found = self._eligible.get(data.key)
        if found is not None:
            return found
        found = 0
        features, ledger = self.features, self.ledger
        for candidate in self.candidates:
            device = candidate.device
            if not data.admin_access and self._exclusive[candidate.index]:
                continue
            if isinstance(self.eligibility.peek(data, candidate), Rejection):
                continue
            if not features.partitionable_devices and device.consumes_counters:
                continue
            if features.device_taints and blocking_taint(device, data.tolerations):
                continue
            if features.consumable_capacity and not fits_capacity(
                ledger.consumed_capacity.get(candidate.id),
                qualify(data.capacity, candidate.id.driver),
                device.capacity,
                None,
            ):
                continue
            found |= 1 << candidate.index
        self._eligible[data.key] = found
        return found

    def _all_mask(self, data: RequestData, d: int) -> int:
        """The non-shared devices an `All` request still has to take, from its `d`-th on."""
        found = self._all_masks.get(data.key)
        if found is None:
            found = [0] * (len(data.devices) + 1)
            shared_ok = self.features.consumable_capacity
            for position in range(len(data.devices) - 1, -1, -1):
                candidate = data.devices[position]
                bit = 0
                if not (shared_ok and candidate.device.allow_multiple_allocations):
                    bit = 1 << candidate.index
                found[position] = found[position + 1] | bit
            self._all_masks[data.key] = found
        return found[d]

    def _suffix(self, data: RequestData, start: int) -> int:
        """Candidates at or after `start` in the request's order, as a mask of indices."""
        order, identity = self._order(data)
        if identity:
            return ~((1 << start) - 1)
        suffixes = self._suffixes.get(data.key)
        if suffixes is None:
            suffixes = [0] * (len(order) + 1)
            for position in range(len(order) - 1, -1, -1):
                suffixes[position] = suffixes[position + 1] | (1 << order[position].index)
            self._suffixes[data.key] = suffixes
        return suffixes[min(start, len(order))]

    def _value_groups(self, name: str) -> dict[object, int]:
        found = self._groups.get(name)
        if found is None:
            found = {}
            for candidate in self.candidates:
                attribute = lookup_attribute(candidate.device, candidate.id.driver, name)
                if attribute is not None:
                    key = (attribute.kind, attribute.value)
                    found[key] = found.get(key, 0) | (1 << candidate.index)
            self._groups[name] = found
        return found


def _drop_last(picks: list[Pick]) -> None:
    picks.pop()
