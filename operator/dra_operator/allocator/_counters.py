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

from fractions import Fraction

from dra_operator.allocator._inputs import Ledger
from dra_operator.allocator._pools import Pool, PoolID
from dra_operator.model import Device, DeviceID

_NANO = 10**9

Totals = dict[tuple[str, str], int]  # (counter set, counter) -> nano-units
Consumption = tuple[tuple[tuple[str, str], int], ...]


def _nanos(value: Fraction) -> int:
    return int(value * _NANO)


class CounterBook:
    """Per-attempt counter accounting; `reserve` and `release` must be paired."""

    __slots__ = ("_available", "_blocked", "_consumed", "_consumption", "_ledger")

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._available: dict[PoolID, Totals] = {}
        self._blocked: dict[PoolID, bool] = {}
        self._consumed: dict[PoolID, Totals] = {}
        self._consumption: dict[int, tuple[Device, Consumption]] = {}

    def _of(self, device: Device) -> Consumption:
        found = self._consumption.get(id(device))
        if found is None or found[0] is not device:
            found = (
                device,
                tuple(
                    ((c.counter_set, name), _nanos(q.value))
                    for c in device.consumes_counters
                    for name, q in c.counters.items()
                ),
            )
            self._consumption[id(device)] = found
        return found[1]

    def available(self, pool: Pool) -> Totals:
        found = self._available.get(pool.id)
        if found is None:
            found = {
                (set_name, name): _nanos(q.value)
                for set_name, counter_set in pool.counter_sets.items()
                for name, q in counter_set.counters.items()
            }
            for piece in (*pool.slices, *pool.other_slices):
                for device in piece.devices:
                    if not device.consumes_counters:
                        continue
                    if not self._ledger.is_allocated(
                        DeviceID(piece.driver, piece.pool.name, device.name)
                    ):
                        continue
                    for key, amount in self._of(device):
                        if key in found:
                            found[key] -= amount
            self._available[pool.id] = found
            self._blocked[pool.id] = any(v < 0 for v in found.values())
        return found

    def reserve(self, pool: Pool, device: Device) -> bool:
        """Add the device's consumption; False (and nothing changed) when it does not fit."""
        available = self.available(pool)
        if self._blocked[pool.id]:
            return False
        consumed = self._consumed.setdefault(pool.id, {})
        consumption = self._of(device)
        for key, amount in consumption:
            consumed[key] = consumed.get(key, 0) + amount
        for key, _ in consumption:
            if key in available and available[key] < consumed[key]:
                for undo_key, amount in consumption:
                    consumed[undo_key] -= amount
                return False
        return True

    def release(self, pool: Pool, device: Device) -> None:
        consumed = self._consumed[pool.id]
        for key, amount in self._of(device):
            consumed[key] -= amount
