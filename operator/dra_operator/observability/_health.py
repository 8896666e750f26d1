"""The state behind `/healthz` and `/readyz`, kept by the operator and read by the probes.

Liveness asks one question: is the event loop still turning? A heartbeat task stamps the time
every second; the process is alive while the last stamp is at most `stale_after` seconds old. A
loop blocked by a runaway computation, or a heartbeat task that died, fails it, and the kubelet
restarts the pod. Nothing else fails liveness: an API server that is down is not cured by a
restart.

Readiness is "caches synced, and a part in leader election": every cache named at construction
has finished its initial list, and the replica is the leader or a standby ready to take over.
A replica that has not joined the election yet (`Role.STARTING`) is not ready.

Only the loop thread writes; the probes read from the same loop. The clock is injectable so tests
decide how old the heartbeat is; it must be the one `run_heartbeat` stamps with.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

DEFAULT_STALE_AFTER = 10.0
"""Seconds without a heartbeat before liveness fails: ten missed beats, well above any pause a
healthy loop has (a full garbage collection, a large watch event), well below the kubelet's
default liveness period times failure threshold (30 s)."""

HEARTBEAT_INTERVAL = 1.0
"""Seconds between two heartbeats."""


class Role(enum.Enum):
    """This replica's part in leader election; the values are the `role` label."""

    STARTING = "starting"
    LEADER = "leader"
    STANDBY = "standby"


@dataclass(frozen=True, slots=True)
class Check:
    """One named probe condition, as kube-apiserver's `/readyz?verbose` lists them."""

    name: str
    ok: bool
    detail: str = ""

    def __str__(self) -> str:
        if self.ok:
            return f"[+]{self.name} ok"
        return f"[-]{self.name} failed: {self.detail}"


class Health:
    """Heartbeat, cache sync and election role of one operator process."""

    def __init__(
        self,
        *,
        caches: Iterable[str] = (),
        stale_after: float = DEFAULT_STALE_AFTER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if stale_after <= 0:
            raise ValueError(f"health: stale_after must be positive, not {stale_after}")
        self.stale_after = stale_after
        self._clock = clock
        self._last_beat = clock()
        self._synced = dict.fromkeys(caches, False)
        self.role = Role.STARTING

    # -- written by the operator -------------------------------------------------------------

    def beat(self) -> None:
        self._last_beat = self._clock()

    def set_cache_synced(self, kind: str, synced: bool = True) -> None:
        """Record that the cache of `kind` finished (or lost) its initial list."""
        if kind not in self._synced:
            raise ValueError(f"health: cache {kind} was not declared; known: {self.caches}")
        self._synced[kind] = synced

    def set_role(self, role: Role) -> None:
        self.role = role

    async def run_heartbeat(self, interval: float = HEARTBEAT_INTERVAL) -> None:
        """Stamp the heartbeat every `interval` seconds until cancelled."""
        while True:
            self.beat()
            await asyncio.sleep(interval)

    # -- read by the probes and the metrics --------------------------------------------------

    @property
    def caches(self) -> list[str]:
        return sorted(self._synced)

    @property
    def is_leader(self) -> bool:
        return self.role is Role.LEADER

    def heartbeat_age(self) -> float:
        """Seconds since the last heartbeat."""
        return self._clock() - self._last_beat

    def liveness(self) -> list[Check]:
        age = self.heartbeat_age()
        detail = f"no heartbeat for {age:.1f}s (limit {self.stale_after:g}s)"
        return [_check("event-loop", age <= self.stale_after, detail)]

    def readiness(self) -> list[Check]:
        waiting = [kind for kind, synced in sorted(self._synced.items()) if not synced]
        return [
            _check("caches", not waiting, "waiting for " + ", ".join(waiting)),
            _check("leader-election", self.role is not Role.STARTING, "not yet leader or standby"),
        ]


def _check(name: str, ok: bool, detail: str) -> Check:
    """A check that carries its detail only when it failed."""
    return Check(name, ok, "" if ok else detail)
