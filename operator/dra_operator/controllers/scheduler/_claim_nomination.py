"""Devices nominated to a preemptor in the ledger: KEP-5690's claim nomination (a proposal,
beyond kube-scheduler v1.37.2).

Upstream nominates only a node: between a victim's exit and the deallocation of its claims,
any pod may take the devices the preemptor evicted it for. Here the allocation the preemptor's
claims would get once its victims' claims are deallocated is reserved in the `DeviceLedger`
under keys of its own (`nominated/<pod UID>/<claim UID>`), so every other decision sees those
devices in use, partial devices by what the preemptor takes (shares, consumed capacity), not
whole. Only the preemptor's own decision sees them free: the scheduler `release`s them before
it and `restore`s them after, unless that decision placed the pod (its placement then reserves
what it got) or the nomination timed out. A nomination is dropped when the pod binds or is
deleted. A new leader holds again, for what is left of their timeout, the nominations its
predecessor wrote (`_adoption`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dra_operator.cluster import DeviceLedger
from dra_operator.model import AllocationResult

NOMINATION_TIMEOUT = 300.0
"""Seconds a preemptor's devices stay nominated to it without it being placed."""

NOMINATED = "DevicesNominated"
"""The Event reason, and the condition's reason, when devices are nominated to a pod."""
EXPIRED = "DeviceNominationExpired"
"""The Event reason, and the condition's reason, when the nomination timed out."""


@dataclass(frozen=True, slots=True)
class Held:
    """The devices nominated to one pod, on which node, until when (monotonic seconds)."""

    node: str
    allocations: tuple[tuple[str, AllocationResult], ...]  # (claim UID, allocation)
    deadline: float

    def devices(self) -> list[str]:
        return [
            f"{r.driver}/{r.pool}/{r.device}"
            for _, allocation in self.allocations
            for r in allocation.devices.results
        ]


def _key(pod_uid: str, claim_uid: str) -> str:
    return f"nominated/{pod_uid}/{claim_uid}"


class ClaimNominations:
    """See the module docstring."""

    def __init__(
        self,
        ledger: DeviceLedger,
        *,
        timeout: float = NOMINATION_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ledger = ledger
        self.timeout = timeout
        self._clock = clock
        self._held: dict[str, Held] = {}
        self._in_ledger: set[str] = set()  # pod UIDs whose nomination counts in the ledger

    def hold(
        self,
        pod_uid: str,
        node: str,
        allocations: Sequence[tuple[str, AllocationResult]],
        *,
        remaining: float | None = None,
    ) -> Held:
        """Nominate `allocations` to the pod (replacing an earlier nomination) for the
        timeout, or for the `remaining` seconds of one an earlier leader made."""
        self.drop(pod_uid)
        lasts = self.timeout if remaining is None else min(remaining, self.timeout)
        held = Held(node, tuple(allocations), self._clock() + lasts)
        self._held[pod_uid] = held
        self._count(pod_uid, held)
        return held

    def held(self, pod_uid: str) -> Held | None:
        return self._held.get(pod_uid)

    def release(self, pod_uid: str) -> Held | None:
        """Before the pod's own decision: its devices leave the ledger, the record stays."""
        held = self._held.get(pod_uid)
        if held is not None and pod_uid in self._in_ledger:
            self._in_ledger.discard(pod_uid)
            for claim_uid, _ in held.allocations:
                self._ledger.rollback(_key(pod_uid, claim_uid))
        return held

    def restore(self, pod_uid: str) -> bool:
        """After a decision that did not place the pod: back into the ledger; False (and the
        nomination forgotten) when it timed out."""
        held = self._held.get(pod_uid)
        if held is None:
            return False
        if self._clock() >= held.deadline:
            self.drop(pod_uid)
            return False
        if pod_uid not in self._in_ledger:
            self._count(pod_uid, held)
        return True

    def drop(self, pod_uid: str) -> None:
        """The pod bound, went, or gave up: its devices are free for everyone."""
        self.release(pod_uid)
        self._held.pop(pod_uid, None)

    def _count(self, pod_uid: str, held: Held) -> None:
        for claim_uid, allocation in held.allocations:
            self._ledger.reserve(_key(pod_uid, claim_uid), allocation)
        self._in_ledger.add(pod_uid)
