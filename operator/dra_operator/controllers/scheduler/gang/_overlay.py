"""The claims as a PodGroup cycle sees them: the store plus the cycle's pending allocations.

A claim the group's pods share is allocated by the first pod of the cycle that needs it; the
pods after it must find it allocated (on the node its allocation selects), not "in the process
of being allocated", and must not allocate it a second time (kube-scheduler v1.37.2 records
such pending PodGroup allocations and its Filter reads their node selector). The store is not
touched: a cycle that fails leaves nothing behind but the ledger entries its caller rolls back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

from dra_operator.cluster import Change, Entry, ObjectKey, Store
from dra_operator.model import AllocationResult, ResourceClaim


def _unparsed(raw: Mapping[str, Any]) -> ResourceClaim:
    raise TypeError("a cycle's claim view takes no objects")


class PendingClaims(Store[ResourceClaim]):
    """Reads through to `base`; a claim allocated earlier in the cycle reads as allocated."""

    def __init__(self, base: Store[ResourceClaim]) -> None:
        super().__init__(base.kind, _unparsed)
        self._base = base
        self._pending: dict[ObjectKey, Entry[ResourceClaim]] = {}

    def pend(self, key: ObjectKey, allocation: AllocationResult) -> None:
        """The claim at `key` is allocated (not yet written) by this cycle."""
        entry = self._base.get(key)
        if entry is None:
            return
        claim = entry.obj
        status = dataclasses.replace(claim.status, allocation=allocation)
        self._pending[key] = dataclasses.replace(
            entry, obj=dataclasses.replace(claim, status=status)
        )

    def get(self, key: ObjectKey) -> Entry[ResourceClaim] | None:
        pending = self._pending.get(key)
        return pending if pending is not None else self._base.get(key)

    def __len__(self) -> int:
        return len(self._base)

    def __iter__(self) -> Iterator[Entry[ResourceClaim]]:
        return (self._pending.get(entry.key, entry) for entry in self._base)

    def by_index(self, index: str, value: Hashable) -> list[Entry[ResourceClaim]]:
        return [self._pending.get(e.key, e) for e in self._base.by_index(index, value)]

    def index_values(self, index: str) -> list[Hashable]:
        return self._base.index_values(index)

    def changes_since(self, revision: int) -> Sequence[Change[ResourceClaim]] | None:
        return self._base.changes_since(revision)
