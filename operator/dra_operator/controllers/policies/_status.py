"""AllocationPolicy status: observedGeneration, Accepted/Invalid and the claims each governs.

One queue key stands for "every policy": a change that may move any status (a policy, a claim
or a namespace changed) adds it after `STATUS_DELAY`, and the queue keeps the earliest due time,
so a burst of changes costs one pass. A pass computes every policy's status
(`hooks.policy_status`, `hooks.governed_counts`) and writes, through the status subresource,
only those that differ from what the server last showed: an unchanged policy costs no write,
and our own write coming back through the watch computes equal and stops there.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from dra_operator import errors
from dra_operator.cluster import Store
from dra_operator.controllers import Result
from dra_operator.hooks import AllocationPolicy, governed_counts, policy_status
from dra_operator.model import ResourceClaim

ALL_POLICIES: Final = "allocationpolicies"
"""The one queue key: recompute every policy's status."""

STATUS_DELAY: Final = 1.0
"""Seconds between a change and the pass that reflects it (changes meanwhile join it)."""


class PolicyStatusWriter(Protocol):
    """The API call of the status writer; implementations raise `errors.APIError`."""

    async def write_status(self, name: str, status: Mapping[str, Any]) -> None:
        """Replace the policy's `status` through the status subresource."""
        ...


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class PolicyStatusReconciler:
    """`reconcile(ALL_POLICIES) -> Result` for `controllers.Controller`."""

    def __init__(
        self,
        *,
        policies: Store[AllocationPolicy],
        claims: Store[ResourceClaim],
        namespaces: Store[Mapping[str, str]],
        known_hooks: frozenset[str],
        writer: PolicyStatusWriter,
        clock: Callable[[], datetime.datetime] = _utcnow,
    ) -> None:
        self._policies = policies
        self._claims = claims
        self._namespaces = namespaces
        self._known_hooks = known_hooks
        self._writer = writer
        self._clock = clock

    def changed(self) -> dict[str, dict[str, Any]]:
        """The status each policy should have, by name, for those whose status differs."""
        entries = list(self._policies)
        policies = [entry.obj for entry in entries]
        labels = {entry.key.name: entry.obj for entry in self._namespaces}
        counts = governed_counts(
            policies, (entry.obj for entry in self._claims), labels, self._known_hooks
        )
        now = self._clock()
        found: dict[str, dict[str, Any]] = {}
        for entry in entries:
            current = _status(entry.raw)
            wanted = policy_status(
                entry.obj,
                governed=counts[entry.obj.name],
                known_hooks=self._known_hooks,
                now=now,
                previous=current.get("conditions") or (),
            )
            if wanted != current:
                found[entry.obj.name] = wanted
        return found

    async def __call__(self, key: str) -> Result:
        for name, status in self.changed().items():
            try:
                await self._writer.write_status(name, status)
            except errors.APINotFoundError:
                continue  # deleted meanwhile; the watch removes it
        return Result()


def _status(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    status = raw.get("status")
    return status if isinstance(status, Mapping) else {}
