"""The ledger of allocated devices: what the allocator must treat as in use (rule 4).

`snapshot()` hands the allocator its input type, `allocator.Ledger` (upstream's
`AllocatedState`); `snapshot(pools)` the same restricted to some pools, which is all one node's
allocation reads: built per pool and kept until that pool changes, so its cost follows the
node's devices, not the cluster's.

It merges two sources, per claim UID:

* *observed* allocations, from claim watch events (`claim_changed` / `claim_deleted`);
* *in-flight* allocations: decided by us but not yet seen in the watch. One counts from the
  moment it is decided (`reserve`) until the watch shows our write (`written` names the
  resourceVersion the write returned; the first event at or past it confirms), or until the
  write fails (`rollback`). Upstream keeps the same pair: the scheduler's in-flight map plus its
  assume cache.

While a claim has both, both count: over-counting only delays a pod, under-counting allocates a
device twice. Counts are reference counts, so removing one source restores exactly what was
there before it was added, and a device shared by several sources stays in use until the last
one goes. Results with admin access never count (upstream's `foreachAllocatedDevice`); results
with a share ID count as shares with their consumed capacity (names qualified by the driver,
as `allocator.consumed_capacity` keys them) when consumable capacity is on, and as exclusive
devices otherwise.

Counters are not summed here: which counters a device consumes is in its slice, not its claim.
`in_use_in_pool` lists the pool's devices that are in use in any way, which is what upstream's
counter check subtracts, once per device.

`revision` grows on every change, and the pools each change touched are journaled, so a reader
that derives something per pool or node (the scheduler's verdicts) asks `pools_changed_since`.

Pure data: no I/O, no clock, used from the loop thread only.
"""

from __future__ import annotations

import collections
from collections.abc import Hashable, Iterable, Set
from dataclasses import dataclass
from typing import TypeVar

from dra_operator import errors
from dra_operator.allocator import Ledger, SharedDeviceID, consumed_capacity
from dra_operator.cluster._store import Change
from dra_operator.model import AllocationResult, DeviceID, FrozenMap, Quantity, ResourceClaim

T = TypeVar("T", bound=Hashable)

JOURNAL_LENGTH = 1024
"""Changes whose pools `pools_changed_since` can still name."""


@dataclass(frozen=True, slots=True)
class _Usage:
    """What one allocation puts in use."""

    exclusive: tuple[DeviceID, ...] = ()
    shares: tuple[SharedDeviceID, ...] = ()
    capacity: tuple[tuple[DeviceID, FrozenMap[str, Quantity]], ...] = ()

    @classmethod
    def of(cls, allocation: AllocationResult | None, *, consumable_capacity: bool) -> _Usage:
        if allocation is None:
            return _NOTHING
        exclusive: list[DeviceID] = []
        shares: list[SharedDeviceID] = []
        capacity: list[tuple[DeviceID, FrozenMap[str, Quantity]]] = []
        for result in allocation.devices.results:
            if result.admin_access:
                continue
            device = DeviceID(result.driver, result.pool, result.device)
            if consumable_capacity and result.share_id is not None:
                shares.append(SharedDeviceID(device, result.share_id))
                if result.consumed_capacity:
                    capacity.append((device, FrozenMap(consumed_capacity(result))))
            else:
                exclusive.append(device)
        return cls(tuple(exclusive), tuple(shares), tuple(capacity))

    def devices(self) -> set[DeviceID]:
        return {
            *self.exclusive,
            *(share.device for share in self.shares),
            *(device for device, _ in self.capacity),
        }


_NOTHING = _Usage()


@dataclass(slots=True)
class _InFlight:
    usage: _Usage
    written_version: int | None = None


class DeviceLedger:
    """Allocated devices from the watch plus our in-flight decisions; see the module docstring.

    `revision` grows on every change, so callers can tell whether a snapshot is still current.
    """

    def __init__(self, *, consumable_capacity: bool = True) -> None:
        self._consumable_capacity = consumable_capacity
        self._observed: dict[str, _Usage] = {}
        self._seen_version: dict[str, int] = {}
        self._in_flight: dict[str, _InFlight] = {}
        self._exclusive: collections.Counter[DeviceID] = collections.Counter()
        self._shares: collections.Counter[SharedDeviceID] = collections.Counter()
        self._capacity: dict[DeviceID, dict[str, Quantity]] = {}
        self._capacity_refs: collections.Counter[DeviceID] = collections.Counter()
        self._by_pool: dict[tuple[str, str], collections.Counter[DeviceID]] = {}
        self._shares_by_pool: dict[tuple[str, str], collections.Counter[SharedDeviceID]] = {}
        self._snapshot: Ledger | None = Ledger()
        self._pool_snapshots: dict[tuple[str, str], Ledger] = {}
        self.revision = 0
        self._journal: collections.deque[tuple[int, frozenset[tuple[str, str]]]] = (
            collections.deque(maxlen=JOURNAL_LENGTH)
        )

    # -- the watch ------------------------------------------------------------------------------

    def observe(self, change: Change[ResourceClaim]) -> None:
        """Feed one claim store change (what the claim watch handler gets from `Store.apply`)."""
        if change.new is not None:
            self.claim_changed(change.new.obj)
        elif change.old is not None:
            self.claim_deleted(change.old.obj.metadata.uid)

    def claim_changed(self, claim: ResourceClaim) -> None:
        """A claim was added or updated in the watch (or listed at start)."""
        uid = claim.metadata.uid
        usage = _Usage.of(claim.status.allocation, consumable_capacity=self._consumable_capacity)
        self._set_observed(uid, usage)
        seen = _version(claim.metadata.resource_version)
        if seen is None:
            self._seen_version.pop(uid, None)
        else:
            self._seen_version[uid] = seen
        self._confirm(uid)

    def claim_deleted(self, uid: str) -> None:
        """A claim is gone: nothing it held, observed or in flight, is in use any more."""
        self._set_observed(uid, _NOTHING)
        self._seen_version.pop(uid, None)
        if uid in self._in_flight:
            self._drop_in_flight(uid)

    # -- our decisions -------------------------------------------------------------------------

    def reserve(self, uid: str, allocation: AllocationResult) -> None:
        """Count `allocation` of claim `uid` as in use from now on (decision time)."""
        if uid in self._in_flight:
            raise errors.TerminalError(f"claim {uid}: an allocation is already in flight")
        usage = _Usage.of(allocation, consumable_capacity=self._consumable_capacity)
        self._in_flight[uid] = _InFlight(usage)
        self._add(usage, +1)

    def written(self, uid: str, resource_version: str) -> None:
        """Our write of claim `uid` succeeded as `resource_version`; wait for the watch to show it.

        The watch may already have shown it (its event can overtake our await of the response).
        A version that is not an integer cannot be compared, so the entry then stays until the
        claim is deleted or rolled back; etcd-backed API servers always return integers.
        """
        flight = self._in_flight.get(uid)
        if flight is not None:
            flight.written_version = _version(resource_version)
            self._confirm(uid)

    def rollback(self, uid: str) -> None:
        """Our write of claim `uid` failed: forget the in-flight allocation."""
        if uid in self._in_flight:
            self._drop_in_flight(uid)

    def is_in_flight(self, uid: str) -> bool:
        return uid in self._in_flight

    # -- reading -------------------------------------------------------------------------------

    def snapshot(self, pools: Iterable[tuple[str, str]] | None = None) -> Ledger:
        """The current state as the allocator reads it: immutable, shared until the next change.

        With `pools` ((driver, pool) pairs), only their devices: an allocation that sees no
        other pool reads the same from it.
        """
        if pools is not None:
            parts = [self._pool_snapshot(pool) for pool in set(pools)]
            if len(parts) == 1:
                return parts[0]
            return Ledger(
                exclusive=frozenset().union(*(p.exclusive for p in parts)),
                shares=frozenset().union(*(p.shares for p in parts)),
                consumed_capacity=FrozenMap(
                    {d: c for p in parts for d, c in p.consumed_capacity.items()}
                ),
            )
        if self._snapshot is None:
            self._snapshot = Ledger(
                exclusive=frozenset(self._exclusive),
                shares=frozenset(self._shares),
                consumed_capacity=FrozenMap(
                    {device: FrozenMap(totals) for device, totals in self._capacity.items()}
                ),
            )
        return self._snapshot

    def _pool_snapshot(self, pool: tuple[str, str]) -> Ledger:
        found = self._pool_snapshots.get(pool)
        if found is None:
            devices = self._by_pool.get(pool, ())
            found = self._pool_snapshots[pool] = Ledger(
                exclusive=frozenset(d for d in devices if d in self._exclusive),
                shares=frozenset(self._shares_by_pool.get(pool, ())),
                consumed_capacity=FrozenMap(
                    {d: FrozenMap(self._capacity[d]) for d in devices if d in self._capacity}
                ),
            )
        return found

    def snapshot_without(self, uids: Set[str], pools: Iterable[tuple[str, str]]) -> Ledger:
        """`snapshot(pools)` as if claims `uids` held nothing, observed or in flight: what
        preemption sees once the claims of its victims are deallocated."""
        pools = set(pools)
        exclusive = collections.Counter(
            {d: n for d, n in self._exclusive.items() if (d.driver, d.pool) in pools}
        )
        shares = collections.Counter(
            {s: n for s, n in self._shares.items() if (s.device.driver, s.device.pool) in pools}
        )
        capacity = {
            d: dict(totals) for d, totals in self._capacity.items() if (d.driver, d.pool) in pools
        }
        gone = [self._observed[uid] for uid in uids if uid in self._observed]
        gone += [self._in_flight[uid].usage for uid in uids if uid in self._in_flight]
        for usage in gone:
            _count(exclusive, usage.exclusive, -1)
            _count(shares, usage.shares, -1)
            for device, consumed in usage.capacity:
                totals = capacity.get(device, {})
                for name, quantity in consumed.items():
                    if name in totals:
                        totals[name] = totals[name] - quantity
        return Ledger(
            exclusive=frozenset(d for d in exclusive if (d.driver, d.pool) in pools),
            shares=frozenset(shares),
            consumed_capacity=FrozenMap({d: FrozenMap(t) for d, t in capacity.items() if t}),
        )

    def is_in_use(self, device: DeviceID) -> bool:
        """Whether any allocation uses `device` in any way (exclusively, shared, capacity)."""
        return device in self._by_pool.get((device.driver, device.pool), ())

    def pools_changed_since(self, revision: int) -> Set[tuple[str, str]] | None:
        """The (driver, pool)s whose devices changed after `revision`; None: too long ago."""
        if revision == self.revision:
            return frozenset()
        if not self._journal or self._journal[0][0] > revision + 1:
            return None
        found: set[tuple[str, str]] = set()
        for seen, pools in reversed(self._journal):
            if seen <= revision:
                break
            found |= pools
        return found

    def in_use_in_pool(self, driver: str, pool: str) -> frozenset[DeviceID]:
        """The pool's devices in use in any way: those whose counters are consumed."""
        return frozenset(self._by_pool.get((driver, pool), ()))

    # -- bookkeeping ---------------------------------------------------------------------------

    def _set_observed(self, uid: str, usage: _Usage) -> None:
        old = self._observed.pop(uid, _NOTHING)
        if usage != _NOTHING:
            self._observed[uid] = usage
        if old != usage:
            self._add(old, -1)
            self._add(usage, +1)

    def _confirm(self, uid: str) -> None:
        flight = self._in_flight.get(uid)
        seen = self._seen_version.get(uid)
        if flight is None or flight.written_version is None or seen is None:
            return
        if seen >= flight.written_version:
            self._drop_in_flight(uid)

    def _drop_in_flight(self, uid: str) -> None:
        self._add(self._in_flight.pop(uid).usage, -1)

    def _add(self, usage: _Usage, sign: int) -> None:
        if usage == _NOTHING:
            return
        self.revision += 1
        self._snapshot = None
        pools = frozenset((device.driver, device.pool) for device in usage.devices())
        self._journal.append((self.revision, pools))
        for touched in pools:
            self._pool_snapshots.pop(touched, None)
        _count(self._exclusive, usage.exclusive, sign)
        _count(self._shares, usage.shares, sign)
        for share in usage.shares:
            key = (share.device.driver, share.device.pool)
            pool_shares = self._shares_by_pool.setdefault(key, collections.Counter())
            _count(pool_shares, (share,), sign)
            if not pool_shares:
                del self._shares_by_pool[key]
        for device, consumed in usage.capacity:
            totals = self._capacity.setdefault(device, {})
            for name, quantity in consumed.items():
                totals[name] = totals[name] + quantity * sign if name in totals else quantity * sign
            _count(self._capacity_refs, (device,), sign)
            if not self._capacity_refs[device]:
                # Exact restore: drop the entry instead of keeping zero sums around.
                del self._capacity_refs[device]
                del self._capacity[device]
        for device in usage.devices():
            pool = self._by_pool.setdefault((device.driver, device.pool), collections.Counter())
            _count(pool, (device,), sign)
            if not pool:
                del self._by_pool[(device.driver, device.pool)]


def _count(counter: collections.Counter[T], items: Iterable[T], sign: int) -> None:
    for item in items:
        counter[item] += sign
        if not counter[item]:
            del counter[item]


def _version(resource_version: str) -> int | None:
    """A resourceVersion as an integer, as upstream's assume cache compares them."""
    try:
        return int(resource_version)
    except ValueError:
        return None
