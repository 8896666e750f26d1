"""Compatibility groups (1.37 alpha, DRADeviceCompatibilityGroups, KEP-5963).

Devices drawing from one counter set may be allocated together only when the intersection of
their `compatibilityGroups` (per counter consumption) stays non-empty; devices declaring no
groups go only with other devices declaring none. Per (pool, counter set) the state is: no
member yet (admits anything), "no groups" (admits only devices without groups), or the
running intersection. It starts from the devices the ledger already uses (their groups read
from the current slices; one gone from them counts for nothing), spans every claim of the
call and is undone exactly on rejection and backtracking, as upstream's experimental
allocator does. With the gate off, `_pools` ignores slices that use groups instead.
"""

from __future__ import annotations

from collections.abc import Callable

from dra_operator.allocator._counters import allocated_consumers
from dra_operator.allocator._inputs import Ledger
from dra_operator.allocator._pools import Pool
from dra_operator.allocator._requests import Candidate

# None: no member yet. NO_GROUPS: every member declared no groups (group names are DNS
# labels, so the empty name cannot clash). Otherwise the running intersection, which only
# inconsistent already-allocated peers can make empty (then it admits nothing, as upstream).
State = frozenset[str] | None
NO_GROUPS: frozenset[str] = frozenset({""})


def admits(state: State, groups: frozenset[str]) -> bool:
    if state is None:
        return True
    if not groups:
        return state is NO_GROUPS
    return state is not NO_GROUPS and bool(state & groups)


def add(state: State, groups: frozenset[str]) -> State:
    if state is None:
        return groups or NO_GROUPS
    if state is NO_GROUPS or not groups:
        return state
    return state & groups


class GroupBook:
    """Per-call compatibility-group intersections, keyed by (pool identity, counter set)."""

    __slots__ = ("_baselines", "_ledger", "_running")

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._baselines: dict[int, tuple[Pool, dict[str, State]]] = {}
        self._running: dict[tuple[int, str], State] = {}

    def admit(self, candidate: Candidate) -> Callable[[], None] | None:
        """Fold the device's groups in for every counter set it consumes; returns the undo,
        or None (and nothing changed) when one of the sets does not admit it."""
        pool = candidate.pool
        baseline = self._baseline(pool)
        running = self._running
        saved: list[tuple[tuple[int, str], State, bool]] = []

        def undo() -> None:
            for key, previous, existed in reversed(saved):
                if existed:
                    running[key] = previous
                else:
                    del running[key]

        for consumption in candidate.device.consumes_counters:
            key = (id(pool), consumption.counter_set)
            existed = key in running
            current = running[key] if existed else baseline.get(consumption.counter_set)
            groups = frozenset(consumption.compatibility_groups)
            if not admits(current, groups):
                undo()
                return None
            saved.append((key, current, existed))
            running[key] = add(current, groups)
        return undo

    def _baseline(self, pool: Pool) -> dict[str, State]:
        """What the devices already in use contribute, per counter set (once per pool)."""
        found = self._baselines.get(id(pool))
        if found is not None and found[0] is pool:
            return found[1]
        baseline: dict[str, State] = {}
        for device in allocated_consumers(pool, self._ledger):
            for consumption in device.consumes_counters:
                name = consumption.counter_set
                baseline[name] = add(
                    baseline.get(name), frozenset(consumption.compatibility_groups)
                )
        self._baselines[id(pool)] = (pool, baseline)
        return baseline
