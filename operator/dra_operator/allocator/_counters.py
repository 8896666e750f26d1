"""Shared counters of partitionable devices (DRAPartitionableDevices).

Per pool, what is *available* is the counter sets' totals minus the consumption of every
device of the pool that any claim already uses, including devices in slices for other nodes
(computed once per pool and attempt). Devices picked in this attempt add to a running
*consumed* total; a device fits when, afterwards, no counter of any set in the pool is above
what is available. A negative availability (an over-allocated pool) therefore blocks every
counter-consuming device of the pool, as upstream does.
"""

from __future__ import annotations

from fractions import Fraction

from dra_operator.allocator._inputs import Ledger
from dra_operator.allocator._pools import Pool, PoolID
from dra_operator.model import Device, DeviceID

Totals = dict[str, dict[str, Fraction]]


class CounterBook:
    """Per-attempt counter accounting; `reserve` and `release` must be paired."""

    __slots__ = ("_available", "_consumed", "_ledger")

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._available: dict[PoolID, Totals] = {}
        self._consumed: dict[PoolID, Totals] = {}

    def available(self, pool: Pool) -> Totals:
        found = self._available.get(pool.id)
        if found is None:
            found = {
                name: {c: q.value for c, q in counter_set.counters.items()}
                for name, counter_set in pool.counter_sets.items()
            }
            for piece in (*pool.slices, *pool.other_slices):
                for device in piece.devices:
                    if not device.consumes_counters:
                        continue
                    if not self._ledger.is_allocated(
                        DeviceID(piece.driver, piece.pool.name, device.name)
                    ):
                        continue
                    _add(found, device, -1, only_existing=True)
            self._available[pool.id] = found
        return found

    def reserve(self, pool: Pool, device: Device) -> bool:
        """Add the device's consumption; False (and nothing changed) when it does not fit."""
        available = self.available(pool)
        consumed = self._consumed.setdefault(pool.id, {})
        _add(consumed, device, +1, only_existing=False)
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for counter, value in counters.items():
                if value < used.get(counter, 0):
                    _add(consumed, device, -1, only_existing=False)
                    return False
        return True

    def release(self, pool: Pool, device: Device) -> None:
        _add(self._consumed.setdefault(pool.id, {}), device, -1, only_existing=False)

    def consumed(self, pool: PoolID) -> Totals:
        return self._consumed.get(pool, {})


def _add(totals: Totals, device: Device, sign: int, *, only_existing: bool) -> None:
    for consumption in device.consumes_counters:
        counters = totals.get(consumption.counter_set)
        if counters is None:
            if only_existing:
                continue
            counters = totals[consumption.counter_set] = {}
        for name, quantity in consumption.counters.items():
            if name not in counters:
                if only_existing:
                    continue
                counters[name] = Fraction(0)
            counters[name] += sign * quantity.value
