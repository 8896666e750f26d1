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
A step budget and a deadline end the search with `Outcome.ABORTED`. The pruning itself lives
in `_pruning`. Cheaper steps, same devices: in upstream order a step visits only the positions
its loop would not skip at once (one mask; see `_worth_trying`), and from the first step ends
when fewer of them share a fixed matchAttribute value than the request still needs.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache, partial

from dra_operator.allocator._capacity import Arithmetic, CapacityBook, CapacityError
from dra_operator.allocator._cel import DerivedValues
from dra_operator.allocator._constraints import Lookup, lookup_attribute
from dra_operator.allocator._counters import CounterBook
from dra_operator.allocator._features import Features
from dra_operator.allocator._groups import GroupBook
from dra_operator.allocator._inputs import Budget, Ledger
from dra_operator.allocator._prepare import Prepared
from dra_operator.allocator._pruning import Lookahead
from dra_operator.allocator._requests import (
    MAX_RESULTS,
    Candidate,
    Eligibility,
    RequestData,
    RequestKey,
    Verdicts,
    claim_ref,
)
from dra_operator.allocator._taints import blocking_taint
from dra_operator.errors import AllocationInputError
from dra_operator.model import DeviceID, Quantity, ResourceClaim

_CLOCK_EVERY = 256  # steps between deadline checks
_UNKNOWN = object()  # no verdict yet on a (request, device) pair


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


@lru_cache(maxsize=4)
def _exclusive_keys(exclusive: frozenset[DeviceID]) -> frozenset[tuple[str, str, str]]:
    """The ledger's devices as plain tuples (cheaper than `Candidate.id` per device). Cached:
    the ledger covers the whole cluster, and a caller shares one snapshot across every node
    it tries, so this runs once per snapshot, not once per node."""
    return frozenset((d.driver, d.pool, d.device) for d in exclusive)


class Orders:
    """Each request's candidate order, and whether it is upstream's (index == position).

    Shared by the search and its pruning; holding neither, it keeps them out of a reference
    cycle, so a call's whole state is freed when the call returns, not by the cycle collector.
    """

    __slots__ = ("_candidates", "_found", "_order_for")

    def __init__(
        self,
        candidates: Sequence[Candidate],
        order_for: Callable[[RequestData], Sequence[Candidate]],
    ) -> None:
        self._candidates = candidates
        self._order_for = order_for
        self._found: dict[RequestKey, tuple[Sequence[Candidate], bool]] = {}

    def __call__(self, data: RequestData) -> tuple[Sequence[Candidate], bool]:
        found = self._found.get(data.key)
        if found is None:
            order = self._order_for(data)
            upstream = order is self._candidates or all(c.index == i for i, c in enumerate(order))
            found = self._found[data.key] = (order, upstream)
        return found


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
        on_solution: Callable[[Search], bool] | None = None,
        node_operations: bool = False,
    ) -> None:
        self.claims = claims
        # Experimental tier (1.37): devices whose slice skips node operations are not taken
        # unless the gate is on and the node declares the feature (`node_operations`).
        self._skips_blocked = features.is_experimental_tier and not node_operations
        self.prepared = prepared
        self.candidates = candidates
        self.features = features
        self.ledger = ledger
        self.eligibility = eligibility
        self.budget = budget
        self.new_share_id = new_share_id
        self._on_solution = on_solution
        self.picks: list[list[Pick]] = [[] for _ in claims]
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.steps = 0
        self._deadline = None if budget.timeout is None else budget.clock() + budget.timeout
        self._exclusive = [False] * len(candidates)
        self._exclusive_mask = 0
        if ledger.exclusive:
            keys = _exclusive_keys(ledger.exclusive)
            self._exclusive = [c.key in keys for c in candidates]
            self._exclusive_mask = sum(1 << i for i, used in enumerate(self._exclusive) if used)
        self._holders: list[set[int] | None] = [None] * len(candidates)
        self._taken = 0  # bit i: candidate i is picked (non-shared) in this attempt
        self._capacity = CapacityBook(
            ledger.consumed_capacity,
            frozenset(share.device for share in ledger.shares)
            if features.since_137
            else frozenset(),
            Arithmetic.of(features),
        )
        self._counters = CounterBook(ledger)
        self._groups = GroupBook(ledger) if features.compatibility_groups else None
        self._derived = DerivedValues(features) if prepared.derived_claims else None
        self._orders = Orders(candidates, orders)
        self._contexts: dict[RequestKey, tuple[Sequence[Candidate], bool, Verdicts, bool]] = {}
        self._num_claims = len(claims)
        self._num_requests = [len(claim.spec.requests) for claim in claims]
        self._subrequests = [
            [prepared.subrequests[(c, r)] for r in range(count)]
            for c, count in enumerate(self._num_requests)
        ]
        minimum = sum(d.num_devices + 1 for d in prepared.requests.values())
        self._warmup = 2 * minimum + 2 * len(claims) + 16
        self._lookahead = Lookahead(
            claims=claims,
            prepared=prepared,
            candidates=candidates,
            features=features,
            eligibility=eligibility,
            exclusive=self._exclusive,
            capacity=self._capacity,
            order=self._orders,
        )

    def run(self) -> Outcome:
        return self._allocate_one(0, 0, 0, 0, False, 0)

    def chosen_subrequests(self) -> dict[tuple[int, int], int]:
        """The subrequest each prioritized request uses in the current picks."""
        return {
            (p.request.key[0], p.request.key[1]): p.request.key[2]
            for picks in self.picks
            for p in picks
            if p.request.parent
        }

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
        if c >= self._num_claims:
            # A policy exploring alternatives records this one and lets the search go on.
            if self._on_solution is None or self._on_solution(self):
                return Outcome.FOUND
            return Outcome.NONE
        if r >= self._num_requests[c]:
            found = self._allocate_one(c + 1, 0, 0, 0, False, 0)
            return Outcome.NONE if found is Outcome.TOO_MANY else found

        count = self._subrequests[c][r]
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
        lookahead = self._lookahead
        if (
            self.steps > self._warmup
            and lookahead.can_prune()
            and lookahead.is_doomed(c, r, data, d, start, self._taken)
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

        order, upstream, verdicts, visit_all = self._step_context(data)
        admin = data.admin_access
        exclusive, holders = self._exclusive, self._holders
        check = self.eligibility.check
        known = verdicts.by_index
        capacity = self.features.consumable_capacity
        asks_capacity = bool(data.capacity)
        # Devices without a fixed matchAttribute value would be refused by the constraint
        # inside _allocate_device with no lasting effect; skipping them there is the same.
        # (Only after the selector check, which may raise what upstream raises.)
        allowed = lookahead.within_fixed_values(c, data, -1) if self.prepared.constraints[c] else -1
        positions: Iterable[int]
        if upstream and not admin and not visit_all:
            worth = self._worth_trying(data, d, start, len(order), verdicts, allowed)
            if worth is None:
                return Outcome.NONE
            positions = _set_bits(worth)
        else:
            positions = range(start, len(order))
        for position in positions:
            candidate = order[position]
            index = candidate.index
            held = holders[index]
            if admin:
                if held and c in held:
                    continue
            elif exclusive[index] or held:
                continue
            if known.get(index, _UNKNOWN) is not None and check(data, candidate) is not None:
                continue
            if not (allowed >> index) & 1:
                continue
            if capacity and (asks_capacity or candidate.device.capacity):
                try:
                    if not self._capacity.fits(data.capacity, candidate):
                        continue
                except CapacityError as err:
                    raise self._capacity_error(c, data, candidate, "checking", err) from err
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

    def _worth_trying(
        self, data: RequestData, d: int, start: int, end: int, verdicts: Verdicts, allowed: int
    ) -> int | None:
        """Positions from `start` the loop would not skip at once (upstream order), as a mask;
        None when they cannot complete the request, so the loop cannot succeed.

        Leaves out what the loop would pass over without any effect: devices taken or in use
        (non-admin requests), rejected by a selector, or known to be selectable but outside a
        fixed matchAttribute value. Devices not judged yet stay in: reaching them may raise
        what upstream raises. The loop still checks every position.

        When fewer devices are left within the fixed value than the request still needs,
        upstream's loop would visit the rest only to fail: the devices it would judge on the
        way are judged now, and unless one of them fails to evaluate (which upstream would
        raise, so the loop must run), the branch ends here. This is the pruning a search with
        a `matchAttribute` needs most, and it costs a few mask operations per step.
        """
        skip = self._taken | self._exclusive_mask | verdicts.rejected
        worth = ((1 << end) - (1 << start)) & ~skip  # an order may end early (a policy's veto)
        if (worth & allowed).bit_count() >= data.num_devices - d:
            return worth & ~(verdicts.selectable & ~allowed)
        peek, order = self.eligibility.peek, self.candidates
        for index in _set_bits(worth & ~verdicts.judged):
            peek(data, order[index])
        if worth & ~(verdicts.selectable | verdicts.rejected):
            return worth & ~(verdicts.selectable & ~allowed)  # a failing device: reach it
        return None

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
        if self._skips_blocked and candidate.slice.skip_node_operations:
            return None  # DRAOptionalNodeOperations off, or the node does not declare it
        if not self.features.partitionable_devices and device.consumes_counters:
            return None
        undo: list[Undo] = []

        def rollback() -> None:
            for step in reversed(undo):
                step()

        if device.consumes_counters and not (multi and self._capacity.is_in_use(candidate)):
            groups = self._groups
            if groups is None:
                if not self._counters.reserve(candidate):
                    return None
            else:
                restore = groups.admit(candidate)
                if restore is None:
                    return None
                if not self._counters.reserve(candidate):
                    restore()
                    return None
                undo.append(restore)
            undo.append(partial(self._counters.release, candidate))
        if (
            self.features.device_taints
            and device.taints
            and blocking_taint(device, data.tolerations)
        ):
            rollback()
            return None
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        derived = self._derived
        lookup: Lookup = (
            lookup_attribute
            if derived is None or not data.derived
            else derived.lookup(data.derived, candidate)
        )
        for constraint in self.prepared.constraints[c]:
            try:
                added = constraint.add(base, sub, device, candidate.driver, lookup)
            except AllocationInputError:
                rollback()
                raise
            if not added:
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
            # The search loop (must=False) checked the capacity just before calling this.
            try:
                fits = not must or self._capacity.fits(data.capacity, candidate)
            except CapacityError as err:
                rollback()
                raise self._capacity_error(c, data, candidate, "rechecking", err) from err
            if not fits:
                rollback()
                return None
            share = self._capacity.share(data.capacity, candidate) if multi else None
            if share is not None:
                consumed = dict(share.consumed)
                share_id = self.new_share_id()
                undo.append(self._capacity.insert(share, index))
        picks = self.picks[c]
        picks.append(Pick(data, candidate, share_id, consumed))
        undo.append(partial(_drop_last, picks))
        return rollback

    def _capacity_error(
        self, c: int, data: RequestData, candidate: Candidate, doing: str, err: CapacityError
    ) -> AllocationInputError:
        """1.37's fail-closed capacity error in upstream's words."""
        return AllocationInputError(
            f"claim {claim_ref(self.claims[c])}, request {data.name}: {doing} capacity for "
            f"device {candidate.id}: {err}"
        )

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

    # -- pruning -------------------------------------------------------------------------------

    def _step_context(self, data: RequestData) -> tuple[Sequence[Candidate], bool, Verdicts, bool]:
        """What every step of the request needs: its order (and whether it is upstream's), its
        verdicts and whether every device must be tried (`Lookahead.must_visit_all`), looked
        up once per request and call instead of once per step."""
        found = self._contexts.get(data.key)
        if found is None:
            order, upstream = self._orders(data)
            found = self._contexts[data.key] = (
                order,
                upstream,
                self.eligibility.known(data),
                self._lookahead.must_visit_all(data),
            )
        return found


def _set_bits(mask: int) -> Iterator[int]:
    """The indices of the bits set in `mask`, lowest first."""
    while mask:
        lowest = mask & -mask
        yield lowest.bit_length() - 1
        mask ^= lowest


def _drop_last(picks: list[Pick]) -> None:
    picks.pop()
