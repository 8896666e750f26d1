"""Sound pruning for the search: prove a branch cannot succeed, with bitmasks.

A bit per candidate index: `taken` (picked, non-shared, in this attempt), each request's
`eligible` devices (could ever serve it in this call: selectors, not held by the ledger,
taints, capacity against the ledger), the devices an `All` request must take, and candidates
grouped by attribute value for `matchAttribute`. A branch is doomed when the current request
has fewer candidates left from its start position than it still needs (within the fixed
value of a matchAttribute constraint, when one applies), or when a later request (or every
alternative of a prioritized list) could not be served by the devices not yet taken. Devices
are only taken deeper in a branch, so a doomed branch stays doomed: cutting it never changes
which solution the search finds first.

Pruning must also never hide a fatal error upstream would raise by *reaching* a device (a
selector that fails to evaluate, an `All` device a claim constraint refuses), so it stays off
when any request could meet one (`can_prune`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dra_operator.allocator._capacity import CapacityBook, CapacityError
from dra_operator.allocator._constraints import MatchAttribute, lookup_attribute
from dra_operator.allocator._features import Features
from dra_operator.allocator._prepare import Prepared
from dra_operator.allocator._requests import (
    Candidate,
    Eligibility,
    Rejection,
    RequestData,
    RequestKey,
    SelectorFailure,
)
from dra_operator.allocator._taints import blocking_taint
from dra_operator.model import DeviceAttribute, ResourceClaim

# A later request's alternatives (one, or one per subrequest).
_Future = list[list[RequestData]]


class Lookahead:
    """Per-call pruning state; all masks are computed lazily and kept for the call."""

    def __init__(
        self,
        *,
        claims: Sequence[ResourceClaim],
        prepared: Prepared,
        candidates: Sequence[Candidate],
        features: Features,
        eligibility: Eligibility,
        exclusive: list[bool],
        capacity: CapacityBook,
        order: Callable[[RequestData], tuple[Sequence[Candidate], bool]],
    ) -> None:
        self.claims = claims
        self.prepared = prepared
        self.candidates = candidates
        self.features = features
        self.eligibility = eligibility
        self._exclusive = exclusive
        self._capacity = capacity
        self._order_of = order
        self._eligible: dict[RequestKey, int] = {}
        self._eligible_alike: dict[tuple[object, ...], int] = {}
        self._all_masks: dict[RequestKey, list[int]] = {}
        self._groups: dict[str, dict[object, int]] = {}
        self._suffixes: dict[RequestKey, list[int]] = {}
        self._futures: dict[tuple[int, int], _Future] = {}
        self._prunable: bool | None = None
        self._matches: dict[RequestKey, list[MatchAttribute]] = {}
        self._fixed: dict[int, tuple[DeviceAttribute, int]] = {}  # id(constraint) -> mask
        self._visit_all: dict[RequestKey, bool] = {}

    def can_prune(self) -> bool:
        """Whether cutting branches can never hide a fatal error upstream would raise.

        Upstream raises when its search *reaches* a device whose selector fails to evaluate,
        or an `All` device a claim constraint refuses, or a derived attribute (1.37) that fails
        to compile or evaluate; a pruned branch might have been the one to reach it. So pruning
        is off when any request has such a device or such a request exists, or any request
        derives attributes. Decided once, on the first hard step (it evaluates every selector).
        """
        if self._prunable is None:
            self._prunable = not any(
                self.must_visit_all(data)
                or self._has_selector_failures(data)
                or self._is_constrained_all(data)
                for data in self.prepared.requests.values()
            )
        return self._prunable

    def must_visit_all(self, data: RequestData) -> bool:
        """Whether trying a device for `data` may raise after its selectors passed (1.37): the
        request derives attributes, or 1.37's capacity arithmetic fails closed on a device.
        Then the search tries every device upstream would (no shortcut may skip one)."""
        found = self._visit_all.get(data.key)
        if found is None:
            found = self._visit_all[data.key] = bool(data.derived) or self._fails_closed(data)
        return found

    def _fails_closed(self, data: RequestData) -> bool:
        """Whether any device's capacity arithmetic fails for the request (conservatively, its
        selectors aside: plans are cached per capacity shape, so this is cheap)."""
        if not (self.features.consumable_capacity and self.features.since_137):
            return False
        for candidate in self.candidates:
            if not candidate.device.capacity:
                continue
            try:
                self._capacity.share(data.capacity, candidate)
            except CapacityError:
                return True
        return False

    def _has_selector_failures(self, data: RequestData) -> bool:
        """Whether the search could reach a device whose selectors fail for `data`.

        A device the ledger holds is never reached by a request without adminAccess (upstream
        checks "in use" before any selector), so its selectors need not run here either.
        """
        peek, exclusive = self.eligibility.peek, self._exclusive
        admin = data.admin_access
        return any(
            isinstance(peek(data, c), SelectorFailure)
            for c in self.candidates
            if admin or not exclusive[c.index]
        )

    def _is_constrained_all(self, data: RequestData) -> bool:
        if not data.all_devices:
            return False
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        return any(con.applies_to(base, sub) for con in self.prepared.constraints[data.key[0]])

    def is_doomed(self, c: int, r: int, data: RequestData, d: int, start: int, taken: int) -> bool:
        """Whether this branch cannot succeed, whatever the later choices (sound, not complete)."""
        if not data.all_devices:
            mask = self._eligible_mask(data)
            if not data.admin_access:
                mask &= ~taken
            mask = self.within_fixed_values(c, data, mask)
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
            mask = self.within_fixed_values(c, data, mask)
        return mask.bit_count() >= data.num_devices

    def within_fixed_values(self, c: int, data: RequestData, mask: int) -> int:
        """`mask` without the devices a fixed matchAttribute value of claim `c` rules out.

        Unchanged when upstream may raise on a device it tries (`must_visit_all`) before a
        constraint on a fixed value would refuse it.
        """
        if self.must_visit_all(data):
            return mask
        for constraint in self._match_constraints(c, data):
            fixed = constraint.fixed_value()
            if fixed is not None:
                mask &= self._fixed_mask(constraint, fixed)
        return mask

    def _match_constraints(self, c: int, data: RequestData) -> list[MatchAttribute]:
        """The claim's matchAttribute constraints that apply to the request."""
        found = self._matches.get(data.key)
        if found is None:
            base, sub = (data.parent, data.name) if data.parent else (data.name, "")
            found = self._matches[data.key] = [
                constraint
                for constraint in self.prepared.constraints[c]
                if isinstance(constraint, MatchAttribute) and constraint.applies_to(base, sub)
            ]
        return found

    def _fixed_mask(self, constraint: MatchAttribute, fixed: DeviceAttribute) -> int:
        """The candidates sharing the constraint's fixed value, kept until the value changes."""
        known = self._fixed.get(id(constraint))
        if known is not None and known[0] is fixed:
            return known[1]
        mask = self._value_groups(constraint.attribute).get((fixed.kind, fixed.value), 0)
        self._fixed[id(constraint)] = (fixed, mask)
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
        # Requests alike (same verdicts, admin access, tolerations and capacity request) have
        # the same eligible devices: judge them once.
        alike = (
            self.eligibility.verdicts_key(data),
            data.admin_access,
            data.tolerations,
            data.capacity,
        )
        found = self._eligible_alike.get(alike)
        if found is None:
            found = self._eligible_alike[alike] = self._compute_eligible(data)
        self._eligible[data.key] = found
        return found

    def _compute_eligible(self, data: RequestData) -> int:
        found = 0
        features = self.features
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
            if features.consumable_capacity and not self._capacity.fits_ledger(
                data.capacity, candidate
            ):
                continue
            found |= 1 << candidate.index
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
        order, identity = self._order_of(data)
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
                attribute = lookup_attribute(candidate.device, candidate.driver, name)
                if attribute is not None:
                    key = (attribute.kind, attribute.value)
                    found[key] = found.get(key, 0) | (1 << candidate.index)
            self._groups[name] = found
        return found
