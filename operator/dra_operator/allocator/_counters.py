"""Shared counters of partitionable devices (DRAPartitionableDevices).

Per pool, what is *available* is the counter sets' totals minus the consumption of every
device of the pool that any claim already uses, including devices in slices for other nodes
(computed once per pool and attempt). Devices picked in this attempt add to a running
*consumed* total; a device fits when, afterwards, no counter of any set in the pool is above
what is available. A negative availability (an over-allocated pool) therefore blocks every
counter-consuming device of the pool, as upstream does.

Amounts are kept as integers of nano-units (quantities carry at most nano precision), and a
reservation only re-checks the counters the device touches: the others cannot have changed
since the last successful check, except through a negative availability, which blocks the
pool once and for all.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from dra_operator.allocator._inputs import Ledger
from dra_operator.allocator._pools import Pool
from dra_operator.allocator._requests import Candidate
from dra_operator.model import Device, DeviceID

_NANO = 10**9

Totals = dict[tuple[str, str], int]  # (counter set, counter) -> nano-units
Consumption = tuple[tuple[tuple[str, str], int], ...]


def _nanos(value: Fraction) -> int:
    return int(value * _NANO)


def allocated_consumers(pool: Pool, ledger: Ledger) -> Iterator[Device]:
    """The pool's devices that consume counters and are allocated already: what a claim's
    devices share the pool's counters with (the counters' and the groups' baseline)."""
    for piece in (*pool.slices, *pool.other_slices):
        for device in piece.devices:
            if device.consumes_counters and ledger.is_allocated(
                DeviceID(piece.driver, piece.pool.name, device.name)
            ):
                yield device


class _PoolCounters:
    """One pool's counters in one attempt: what is available, and what the picks consume."""

    __slots__ = ("available", "blocked", "consumed")

    def __init__(self, available: Totals) -> None:
        self.available = available
        self.blocked = any(v < 0 for v in available.values())
        self.consumed: Totals = {}


class CounterBook:
    """Per-attempt counter accounting; `reserve` and `release` must be paired.

    Pools are keyed by object identity: the book lives within one call, whose pools outlive
    it, and hashing a PoolID dataclass on every reservation cost more than the arithmetic.
    """

    __slots__ = ("_consumption", "_entries", "_ledger", "_pools")

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._pools: dict[int, tuple[Pool, _PoolCounters]] = {}
        self._consumption: dict[int, tuple[Device, Consumption]] = {}
        self._entries: dict[int, tuple[_PoolCounters, Consumption]] = {}  # by candidate index

    def _of(self, device: Device) -> Consumption:
        """The device's consumption, one entry per counter (amounts summed)."""
        found = self._consumption.get(id(device))
        if found is None or found[0] is not device:
            totals: Totals = {}
            for consumption in device.consumes_counters:
                for name, q in consumption.counters.items():
                    key = (consumption.counter_set, name)
                    totals[key] = totals.get(key, 0) + _nanos(q.value)
            found = (device, tuple(totals.items()))
            self._consumption[id(device)] = found
        return found[1]

    def _state(self, pool: Pool) -> _PoolCounters:
        found = self._pools.get(id(pool))
        if found is None or found[0] is not pool:
            found = (pool, _PoolCounters(self._available(pool)))
            self._pools[id(pool)] = found
        return found[1]

    def _available(self, pool: Pool) -> Totals:
        found = {
            (set_name, name): _nanos(q.value)
            for set_name, counter_set in pool.counter_sets.items()
            for name, q in counter_set.counters.items()
        }
        for device in allocated_consumers(pool, self._ledger):
            for key, amount in self._of(device):
                if key in found:
                    found[key] -= amount
        return found

    def _entry(self, candidate: Candidate) -> tuple[_PoolCounters, Consumption]:
        found = self._entries.get(candidate.index)
        if found is None:
            found = self._entries[candidate.index] = (
                self._state(candidate.pool),
                self._of(candidate.device),
            )
        return found

    def reserve(self, candidate: Candidate) -> bool:
        """Add the device's consumption; False (and nothing changed) when it does not fit."""
        state, consumption = self._entry(candidate)
        if state.blocked:
            return False
        available, consumed = state.available, state.consumed
        for key, amount in consumption:
            if key in available and available[key] < consumed.get(key, 0) + amount:
                return False
        for key, amount in consumption:
            consumed[key] = consumed.get(key, 0) + amount
        return True

    def release(self, candidate: Candidate) -> None:
        state, consumption = self._entry(candidate)
        consumed = state.consumed
        for key, amount in consumption:
            consumed[key] -= amount
