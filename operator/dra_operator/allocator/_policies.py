"""Allocation policies: the seam through which callers steer *which* fitting devices are used.

The allocator consumes this Protocol (hooks implement more). A policy orders the candidate
devices of each request (the search then takes the first fitting combination in that order)
and scores a node's complete allocation, so callers choosing among feasible nodes can rank
them (higher is better). `FirstFit` keeps upstream's order exactly and scores every node alike,
which makes the allocator answer as upstream does.
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
from dra_operator.model import AllocationResult


class Policy(Protocol):
    """How to order candidates and rank complete allocations; must be deterministic."""

    @property
    def name(self) -> str: ...

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        """The search order for `request` (a permutation of `candidates`, upstream order in)."""
        ...

    def score(self, results: Sequence[AllocationResult], ledger: Ledger) -> float:
        """How good a complete allocation is (for ranking candidate nodes); higher is better."""
        ...


@dataclass(frozen=True, slots=True)
class FirstFit:
    """Upstream's behaviour: pools by (driver, pool), slices by name, devices as published."""

    name: str = "FirstFit"

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        return candidates

    def score(self, results: Sequence[AllocationResult], ledger: Ledger) -> float:
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


def _used_fraction(results: Sequence[AllocationResult], ledger: Ledger) -> float:
    pools = {(r.driver, r.pool) for a in results for r in a.devices.results}
    used = sum(1 for d in ledger.exclusive if (d.driver, d.pool) in pools)
    return float(used)


@dataclass(frozen=True, slots=True)
class BinPack:
    """Fill the most-used pools first, so whole pools (and nodes) stay free for big requests."""

    name: str = "BinPack"

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        usage = _pool_usage(candidates, ledger)
        return sorted(candidates, key=lambda c: -usage[c.pool.id])

    def score(self, results: Sequence[AllocationResult], ledger: Ledger) -> float:
        return _used_fraction(results, ledger)


@dataclass(frozen=True, slots=True)
class Spread:
    """Use the least-used pools first, spreading load (and failure impact) evenly."""

    name: str = "Spread"

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        usage = _pool_usage(candidates, ledger)
        return sorted(candidates, key=lambda c: usage[c.pool.id])

    def score(self, results: Sequence[AllocationResult], ledger: Ledger) -> float:
        return -_used_fraction(results, ledger)


@dataclass(frozen=True, slots=True)
class TopologyAffinity:
    """Prefer devices sharing one value of `attribute` (a NUMA node, a PCIe root...).

    Candidates are grouped by the attribute's value, the largest group first (ties in upstream
    order), so a multi-device request lands inside one group whenever one is big enough.
    """

    attribute: str
    name: str = "TopologyAffinity"

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        groups: dict[object, list[Candidate]] = {}
        for candidate in candidates:
            if ledger.is_allocated(candidate.id):
                key: object = ("in-use",)
            else:
                found = lookup_attribute(candidate.device, candidate.id.driver, self.attribute)
                key = None if found is None else (found.kind, found.value)
            groups.setdefault(key, []).append(candidate)
        ranked = sorted(
            groups.items(),
            key=lambda kv: (kv[0] is None or kv[0] == ("in-use",), -len(kv[1])),
        )
        return [candidate for _, members in ranked for candidate in members]

    def score(self, results: Sequence[AllocationResult], ledger: Ledger) -> float:
        return 0.0


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
