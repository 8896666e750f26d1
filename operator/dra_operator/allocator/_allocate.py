"""`allocate`: one allocation attempt for a set of claims on one candidate node.

The pure entry point (architecture rule 3): gather the node's pools, prepare the claims, search
in the policy's order, then build the results or explain the failure. Fatal input problems
raise `AllocationInputError` with upstream's texts; "does not fit" (including an exhausted
budget) is an `Explanation`, never an exception. Inputs are never mutated.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dra_operator.allocator._capacity import Arithmetic, fits_capacity, qualify
from dra_operator.allocator._constraints import DistinctAttribute
from dra_operator.allocator._explain import Explanation, explain
from dra_operator.allocator._features import Features
from dra_operator.allocator._inputs import (
    Budget,
    Ledger,
    Node,
    SelectorEvaluator,
    node_allows_skipping,
)
from dra_operator.allocator._policies import FirstFit, Policy
from dra_operator.allocator._pools import gather_pools
from dra_operator.allocator._prepare import Prepared, prepare
from dra_operator.allocator._requests import (
    Candidate,
    Eligibility,
    RequestData,
    RequestKey,
    candidates_of,
)
from dra_operator.allocator._result import build_results
from dra_operator.allocator._search import Outcome, Search
from dra_operator.allocator._selection import SelectionMemo
from dra_operator.model import AllocationResult, DeviceClass, ResourceClaim, ResourceSlice


@dataclass(frozen=True, slots=True, kw_only=True)
class Allocation:
    """The answer for one node: claim-aligned `results`, or an `explanation` of why not."""

    results: tuple[AllocationResult, ...] | None
    explanation: Explanation | None
    steps: int  # search steps taken (upstream's allocateOne invocations, plus pruning)
    score: float = 0.0  # the policy's score of `results` (rank candidate nodes by it)

    @property
    def is_allocated(self) -> bool:
        return self.results is not None


_IDS = random.Random()  # seeded from os.urandom: share IDs need uniqueness, not secrecy
_VERSION_4 = ~(0xF << 76) & ~(0x3 << 62), (0x4 << 76) | (0x2 << 62)  # version and variant bits


def _new_share_id() -> str:
    """A random (version 4) UUID like upstream's, made without `uuid.uuid4()`'s object and
    system call: a claim on shared devices makes one per device."""
    h = "%032x" % (_IDS.getrandbits(128) & _VERSION_4[0] | _VERSION_4[1])
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _order_sensitive(prepared: Prepared) -> bool:
    """Whether a claim constraint's verdict may depend on the order devices are tried in.

    Upstream's `distinctAttribute` keeps one value per request (the last device's) and forgets
    it when any of that request's devices is removed; a list-typed `matchAttribute` narrows its
    common values and never widens them again. Both make the sets the search accepts depend on
    its path, unlike a scalar `matchAttribute`.
    """
    return any(
        isinstance(constraint, DistinctAttribute) or constraint.list_types
        for constraints in prepared.constraints
        for constraint in constraints
    )


def allocate(
    claims: Sequence[ResourceClaim],
    *,
    classes: Mapping[str, DeviceClass] | Sequence[DeviceClass],
    slices: Sequence[ResourceSlice],
    node: Node | None,
    features: Features,
    selectors: SelectorEvaluator,
    ledger: Ledger | None = None,
    policy: Policy | None = None,
    budget: Budget | None = None,
    new_share_id: Callable[[], str] = _new_share_id,
    selection: SelectionMemo | None = None,
) -> Allocation:
    """Allocate `claims` (all unallocated, in order) together on `node`.

    Raises AllocationInputError for input upstream rejects as fatal. Thread-safe: all state
    lives in this call, except `selection`, selector outcomes a long-lived caller keeps across
    calls (one thread at a time). Cost: one selector evaluation per (request, device) reached
    (fewer with `selection`), plus the search, bounded by `budget`.
    """
    ledger = ledger if ledger is not None else Ledger()
    policy = policy if policy is not None else FirstFit()
    budget = budget if budget is not None else Budget()
    by_name = (
        dict(classes) if isinstance(classes, Mapping) else {c.metadata.name: c for c in classes}
    )
    claim_list = list(claims)
    pools = gather_pools(slices, node, features)
    eligibility = Eligibility(claim_list, selectors, features, node, selection)
    rules = Arithmetic.of(features)

    def capacity_check(data: RequestData, candidate: Candidate) -> bool:
        """`All` mode's pre-scan. 1.37 checks the static capacity only (#140769): a device
        whose remaining capacity is too small stays in the set, so the claim fails instead of
        getting the other devices. Raises CapacityError (1.37)."""
        if not features.consumable_capacity:
            return True
        return bool(
            fits_capacity(
                None if features.since_137 else ledger.consumed_capacity.get(candidate.id),
                qualify(data.capacity, candidate.driver),
                candidate.device.capacity,
                None,
                rules,
            )
        )

    upstream_order = candidates_of(pools)
    prepared = prepare(
        claim_list, by_name, pools, upstream_order, features, eligibility, capacity_check
    )

    orders: dict[RequestKey, Sequence[Candidate]] = {}

    def order_for(data: RequestData) -> Sequence[Candidate]:
        found = orders.get(data.key)
        if found is None:
            found = orders[data.key] = policy.order_candidates(data, upstream_order, ledger)
        return found

    for data in prepared.requests.values():
        if data.all_devices and data.devices:
            allowed = {candidate.index for candidate in order_for(data)}
            if any(candidate.index not in allowed for candidate in data.devices):
                data.devices = []  # the policy vetoed a device the request must take

    node_name = node.name if node is not None else ""
    node_operations = node_allows_skipping(node, features)
    best: list[tuple[float, tuple[AllocationResult, ...]]] = []
    seen = 0

    def on_solution(search: Search) -> bool:
        """Keep the best-scored complete allocation; True once enough were seen."""
        nonlocal seen
        seen += 1
        picked = [p.candidate for picks in search.picks for p in picks]
        score = policy.score(picked, ledger)
        if not best or score > best[0][0]:
            results = build_results(
                claim_list,
                search.picks,
                prepared,
                search.chosen_subrequests(),
                node_name,
                features,
            )
            best[:] = [(score, results)]
        return seen > policy.alternatives

    def new_search(orders: Callable[[RequestData], Sequence[Candidate]], limit: Budget) -> Search:
        return Search(
            claims=claim_list,
            prepared=prepared,
            candidates=upstream_order,
            orders=orders,
            features=features,
            ledger=ledger,
            eligibility=eligibility,
            budget=limit,
            new_share_id=new_share_id,
            on_solution=on_solution if policy.alternatives > 0 else None,
            node_operations=node_operations,
        )

    started = budget.clock()
    search = new_search(order_for, budget)
    outcome = search.run()
    steps = search.steps
    if outcome is Outcome.NONE and not best and _order_sensitive(prepared):
        # Upstream's constraints can refuse in one order a set they accept in another, so a
        # policy's order may miss what upstream's finds: then try the policy's devices in
        # upstream's order too, with what is left of the budget.
        def upstream_subset(data: RequestData) -> Sequence[Candidate]:
            allowed = {candidate.index for candidate in order_for(data)}
            return [candidate for candidate in upstream_order if candidate.index in allowed]

        if any(upstream_subset(d) != list(order_for(d)) for d in prepared.requests.values()):
            timeout = budget.timeout
            if timeout is not None:
                timeout = max(0.0, started + timeout - budget.clock())
            rest = Budget(max_steps=budget.max_steps - steps, timeout=timeout, clock=budget.clock)
            search = new_search(upstream_subset, rest)
            outcome = search.run()
            steps += search.steps
    if best:  # an exploring policy: its best allocation, even if the budget ran out later
        return Allocation(results=best[0][1], explanation=None, steps=steps, score=best[0][0])
    if outcome is Outcome.FOUND:
        results = build_results(
            claim_list, search.picks, prepared, search.selected_sub, node_name, features
        )
        picked = [p.candidate for picks in search.picks for p in picks]
        return Allocation(
            results=results,
            explanation=None,
            steps=steps,
            score=policy.score(picked, ledger),
        )
    explanation = explain(
        claims=claim_list,
        prepared=prepared,
        pools=pools,
        candidates=upstream_order,
        node=node_name,
        features=features,
        ledger=ledger,
        eligibility=eligibility,
        orders=order_for,
        steps=steps,
        aborted=outcome is Outcome.ABORTED,
        node_operations=node_operations,
    )
    return Allocation(results=None, explanation=explanation, steps=steps)
