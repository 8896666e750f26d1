"""Explanations: why a set of claims does not fit a node, as data and as actionable lines.

Computed only after the search failed, so it may re-examine every device: per claim and request
(each subrequest separately), how many devices of the node's usable pools were considered, how
many could serve it on their own, and the first reason each other device was rejected, grouped
(class selector, request selector, node mismatch, untolerated taint, in use, capacity,
counters, policy veto), checked in that order so the groups read as a funnel. Pools that could
not be used (incomplete, invalid) are listed too. When every request on its own has enough
devices, the failure is in the combination (constraints, or requests competing for the same
devices), which the summary says.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dra_operator.allocator._capacity import Arithmetic, CapacityError, fits_capacity, qualify
from dra_operator.allocator._constraints import MatchAttribute
from dra_operator.allocator._counters import CounterBook
from dra_operator.allocator._features import Features
from dra_operator.allocator._inputs import Ledger
from dra_operator.allocator._pools import Pool
from dra_operator.allocator._prepare import Prepared
from dra_operator.allocator._requests import (
    Candidate,
    Eligibility,
    Rejection,
    RequestData,
    SelectorFailure,
    claim_ref,
)
from dra_operator.allocator._taints import blocking_taint, describe_taint
from dra_operator.model import ResourceClaim


class Reason(enum.Enum):
    IN_USE = "in-use"
    BINDING_CONDITIONS = "binding-conditions"
    CLASS_SELECTOR = "class-selector"
    REQUEST_SELECTOR = "request-selector"
    SELECTOR_ERROR = "selector-error"
    NODE = "node"
    PARTITIONABLE_DISABLED = "partitionable-disabled"
    NODE_OPERATIONS = "node-operations"
    TAINT = "taint"
    CAPACITY = "capacity"
    COUNTERS = "counters"
    POLICY = "policy"


_TEXT = {
    Reason.BINDING_CONDITIONS: "{n} with binding conditions (feature disabled)",
    Reason.CLASS_SELECTOR: "{n} rejected by selector {detail}",
    Reason.REQUEST_SELECTOR: "{n} rejected by request selector {detail}",
    Reason.SELECTOR_ERROR: "{n} failed selector evaluation",
    Reason.NODE: "{n} not usable on this node",
    Reason.IN_USE: "{n} in use",
    Reason.PARTITIONABLE_DISABLED: "{n} consume counters (partitionable devices disabled)",
    Reason.NODE_OPERATIONS: (
        "{n} skip node operations (DRAOptionalNodeOperations off or not declared by the node)"
    ),
    Reason.TAINT: "{n} with untolerated taint {detail}",
    Reason.CAPACITY: "{n} without enough capacity",
    Reason.COUNTERS: "{n} without enough shared counters",
    Reason.POLICY: "{n} vetoed by the allocation policy",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class RejectionGroup:
    reason: Reason
    detail: str
    count: int

    def __str__(self) -> str:
        return _TEXT[self.reason].format(n=self.count, detail=self.detail)


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestExplanation:
    claim: str
    request: str  # "name" or "parent/sub"
    considered: int
    usable: int
    needed: int  # 0 for "All" (at least one device)
    rejected: tuple[RejectionGroup, ...]

    @property
    def is_short(self) -> bool:
        return self.usable < max(self.needed, 1)

    def __str__(self) -> str:
        text = f"request {self.request}: {self.usable}/{self.considered} devices usable"
        if self.needed > 1:
            text += f" ({self.needed} needed)"
        if self.rejected:
            text += ": " + ", ".join(str(group) for group in self.rejected)
        return text


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolProblem:
    pool: str
    problem: str  # "incomplete" or "invalid"
    reason: str = ""

    def __str__(self) -> str:
        if self.problem == "incomplete":
            return f"pool {self.pool}: incomplete (being updated), its devices are not used"
        return f"pool {self.pool}: invalid ({self.reason}), its devices are not used"


@dataclass(frozen=True, slots=True, kw_only=True)
class Explanation:
    """Why the claims could not be allocated on `node`; `summary` is the headline."""

    node: str
    summary: str
    requests: tuple[RequestExplanation, ...]
    pools: tuple[PoolProblem, ...]
    steps: int
    aborted: bool = False

    def lines(self) -> list[str]:
        out = [self.summary]
        out += [f"claim {r.claim}, {r}" for r in self.requests]
        out += [str(p) for p in self.pools]
        return out

    def __str__(self) -> str:
        return "; ".join(self.lines())


def explain(
    *,
    claims: Sequence[ResourceClaim],
    prepared: Prepared,
    pools: Sequence[Pool],
    candidates: Sequence[Candidate],
    node: str,
    features: Features,
    ledger: Ledger,
    eligibility: Eligibility,
    orders: Callable[[RequestData], Sequence[Candidate]],
    steps: int,
    aborted: bool,
    node_operations: bool = False,
) -> Explanation:
    counters = CounterBook(ledger)
    requests = tuple(
        _explain_request(
            claim_ref(claims[data.key[0]]),
            data,
            candidates,
            features,
            ledger,
            eligibility,
            counters,
            frozenset(candidate.index for candidate in orders(data)),
            node_operations,
        )
        for data in prepared.requests.values()
    )
    problems = tuple(
        PoolProblem(
            pool=str(pool.id),
            problem="incomplete" if pool.is_incomplete else "invalid",
            reason=pool.invalid_reason,
        )
        for pool in pools
        if not pool.is_usable
    )
    return Explanation(
        node=node,
        summary=_summary(claims, prepared, requests, problems, steps, aborted),
        requests=requests,
        pools=problems,
        steps=steps,
        aborted=aborted,
    )


def _summary(
    claims: Sequence[ResourceClaim],
    prepared: Prepared,
    requests: Sequence[RequestExplanation],
    problems: Sequence[PoolProblem],
    steps: int,
    aborted: bool,
) -> str:
    if aborted:
        return f"search budget exhausted after {steps} steps"
    suffix = (
        "; invalid resource pools were encountered"
        if any(p.problem == "invalid" for p in problems)
        else ""
    )
    if any(r.is_short for r in requests):
        return "not enough usable devices" + suffix
    for index, constraints in enumerate(prepared.constraints):
        if constraints:
            names = ", ".join(
                f"matchAttribute {c.attribute}"
                if isinstance(c, MatchAttribute)
                else f"distinctAttribute {c.attribute}"
                for c in constraints
            )
            return (
                f"no combination of usable devices satisfies the requests and the constraints "
                f"of claim {claim_ref(claims[index])} ({names})" + suffix
            )
    return "the requests together need more devices than are usable" + suffix


def _explain_request(
    claim: str,
    data: RequestData,
    candidates: Sequence[Candidate],
    features: Features,
    ledger: Ledger,
    eligibility: Eligibility,
    counters: CounterBook,
    allowed: frozenset[int],
    node_operations: bool,
) -> RequestExplanation:
    tally: Counter[tuple[Reason, str]] = Counter()
    usable = 0
    for candidate in candidates:
        found = _reject(data, candidate, features, ledger, eligibility, counters, node_operations)
        if found is None and candidate.index not in allowed:
            found = Reason.POLICY, ""
        if found is None:
            usable += 1
        else:
            tally[found] += 1
    groups = tuple(
        RejectionGroup(reason=reason, detail=detail, count=count)
        for (reason, detail), count in sorted(tally.items(), key=_group_order)
    )
    return RequestExplanation(
        claim=claim,
        request=data.full_name,
        considered=len(candidates),
        usable=usable,
        needed=0 if data.all_devices else data.num_devices,
        rejected=groups,
    )


_REASON_ORDER = {reason: index for index, reason in enumerate(Reason)}


def _group_order(item: tuple[tuple[Reason, str], int]) -> tuple[int, int, str]:
    (reason, detail), count = item
    return -count, _REASON_ORDER[reason], detail


def _reject(
    data: RequestData,
    candidate: Candidate,
    features: Features,
    ledger: Ledger,
    eligibility: Eligibility,
    counters: CounterBook,
    node_operations: bool,
) -> tuple[Reason, str] | None:
    device = candidate.device
    found = eligibility.peek(data, candidate)
    if isinstance(found, SelectorFailure):
        return Reason.SELECTOR_ERROR, ""
    if isinstance(found, Rejection):
        return Reason(found.kind), found.detail
    if (
        features.is_experimental_tier
        and candidate.slice.skip_node_operations
        and not node_operations
    ):
        return Reason.NODE_OPERATIONS, ""
    if device.consumes_counters and not features.partitionable_devices:
        return Reason.PARTITIONABLE_DISABLED, ""
    if features.device_taints:
        taint = blocking_taint(device, data.tolerations)
        if taint is not None:
            return Reason.TAINT, describe_taint(taint)
    if not data.admin_access and candidate.id in ledger.exclusive:
        return Reason.IN_USE, ""
    if features.consumable_capacity and not _fits(candidate, data, ledger, features):
        return Reason.CAPACITY, ""
    if device.consumes_counters and not (
        features.consumable_capacity
        and device.allow_multiple_allocations
        and candidate.id in ledger.consumed_capacity
    ):
        if not counters.reserve(candidate):
            return Reason.COUNTERS, ""
        counters.release(candidate)
    return None


def _fits(candidate: Candidate, data: RequestData, ledger: Ledger, features: Features) -> bool:
    """Capacity against the ledger; a device 1.37's arithmetic refuses does not fit."""
    try:
        return bool(
            fits_capacity(
                ledger.consumed_capacity.get(candidate.id),
                qualify(data.capacity, candidate.driver),
                candidate.device.capacity,
                None,
                Arithmetic.of(features),
            )
        )
    except CapacityError:
        return False
