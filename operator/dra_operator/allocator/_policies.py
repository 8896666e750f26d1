"""Allocation policies: the seam through which callers steer *which* fitting devices are used.

The allocator consumes this Protocol (hooks implement more). A policy orders the candidate
devices of each request (the search takes the first fitting combination in that order) and
may leave devices out (a veto: the search and `All` requests never take them, explanations
count them as vetoed; it can never add a device or skip a check). It scores a complete
allocation from the devices it picked (higher is better; callers rank candidate nodes by
`Allocation.score`), and may ask the search to look at up to `alternatives` further complete
allocations within the budget, keeping the best-scored one. `FirstFit` keeps upstream's order,
scores everything alike and explores nothing, which makes the allocator answer exactly as
upstream does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from dra_operator.allocator._constraints import lookup_attribute
from dra_operator.allocator._inputs import Ledger
from dra_operator.allocator._pools import PoolID
from dra_operator.allocator._requests import Candidate, RequestData
from dra_operator.errors import AllocationInputError


class Policy(Protocol):
    """How to order candidates and rank complete allocations; must be deterministic."""

    @property
    def name(self) -> str: ...

    @property
    def alternatives(self) -> int:
        """How many further complete allocations to score after the first (0: first wins)."""
        ...

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        """The search order for `request`: `candidates` (upstream order) permuted, or a subset."""
        ...

    def score(self, picked: Sequence[Candidate], ledger: Ledger) -> float:
        """How good a complete allocation (all claims' devices) is; higher is better."""
        ...


@dataclass(frozen=True, slots=True)
class FirstFit:
    """Upstream's behaviour: pools by (driver, pool), slices by name, devices as published."""

    name: str = "FirstFit"
    alternatives: int = 0

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        return candidates

    def score(self, picked: Sequence[Candidate], ledger: Ledger) -> float:
        return 0.0


def _pool_usage(candidates: Sequence[Candidate], ledger: Ledger) -> dict[PoolID, float]:
    """Fraction of each pool's (node-visible) devices already allocated."""
    total: dict[PoolID, int] = {}
    used: dict[PoolID, int] = {}
    for candidate in candidates:
        pool = candidate.pool.id
        total[pool] = total.get(pool, 0) + 1
        if ledger.is_allocated(candidate.id):
            used[pool] = used.get(pool, 0) + 1
    return {pool: used.get(pool, 0) / count for pool, count in total.items()}


def _used_in_pools(picked: Sequence[Candidate], ledger: Ledger) -> float:
    """Devices already in use in the pools the allocation picks from."""
    pools = {(c.pool.id.driver, c.pool.id.pool) for c in picked}
    return float(sum(1 for d in ledger.exclusive if (d.driver, d.pool) in pools))


@dataclass(frozen=True, slots=True)
class BinPack:
    """Fill the most-used pools first, so whole pools (and nodes) stay free for big requests."""

    name: str = "BinPack"
    alternatives: int = 16

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        usage = _pool_usage(candidates, ledger)
        return sorted(candidates, key=lambda c: -usage[c.pool.id])

    def score(self, picked: Sequence[Candidate], ledger: Ledger) -> float:
        return _used_in_pools(picked, ledger)


@dataclass(frozen=True, slots=True)
class Spread:
    """Use the least-used pools first, spreading load (and failure impact) evenly."""

    name: str = "Spread"
    alternatives: int = 16

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        usage = _pool_usage(candidates, ledger)
        return sorted(candidates, key=lambda c: usage[c.pool.id])

    def score(self, picked: Sequence[Candidate], ledger: Ledger) -> float:
        return -_used_in_pools(picked, ledger)


@dataclass(frozen=True, slots=True)
class TopologyAffinity:
    """Prefer devices sharing one value of `attribute` (a NUMA node, a PCIe root...).

    Candidates are grouped by the attribute's value, the largest group first (ties in upstream
    order), so a multi-device request lands inside one group whenever one is big enough.
    """

    attribute: str
    name: str = "TopologyAffinity"
    alternatives: int = 16

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        groups: dict[object, list[Candidate]] = {}
        for candidate in candidates:
            if ledger.is_allocated(candidate.id):
                key: object = ("in-use",)
            else:
                found = lookup_attribute(candidate.device, candidate.driver, self.attribute)
                key = None if found is None else (found.kind, found.value)
            groups.setdefault(key, []).append(candidate)
        ranked = sorted(
            groups.items(),
            key=lambda kv: (kv[0] is None or kv[0] == ("in-use",), -len(kv[1])),
        )
        return [candidate for _, members in ranked for candidate in members]

    def score(self, picked: Sequence[Candidate], ledger: Ledger) -> float:
        """Fewer distinct values of the attribute among the picked devices is better."""
        values = set()
        for candidate in picked:
            found = lookup_attribute(candidate.device, candidate.driver, self.attribute)
            values.add(None if found is None else (found.kind, found.value))
        return -float(len(values))


def policy_named(name: str, *, attribute: str = "") -> Policy:
    """A built-in policy by name (`FirstFit`, `BinPack`, `Spread`, `TopologyAffinity`)."""
    key = name.lower().replace("-", "").replace("_", "")
    if key == "firstfit":
        return FirstFit()
    if key == "binpack":
        return BinPack()
    if key == "spread":
        return Spread()
    if key == "topologyaffinity":
        if not attribute:
            raise AllocationInputError("policy TopologyAffinity needs an attribute name")
        return TopologyAffinity(attribute=attribute)
    raise AllocationInputError(
        f"unknown policy {name}: expected FirstFit, BinPack, Spread or TopologyAffinity"
    )
