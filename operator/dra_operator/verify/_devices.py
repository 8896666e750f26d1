"""Invariants about devices: each allocation is backed by a published device, and no device is
handed out beyond what it allows.

Semantics follow upstream's allocator (dynamic-resource-allocation v0.36.4):

* A pool is `(driver, pool name)`; only the slices of its highest `pool.generation` count, and
  it is complete when there are `resourceSliceCount` of them (`GatherPools`). Every allocated
  device, admin access or not, must be published by a complete pool.
* Results with `adminAccess` never occupy a device (`foreachAllocatedDevice`). Any other result
  without a `shareID` takes the whole device, so two of them, or one beside a share, is a double
  allocation. Results with a `shareID` are shares of a device with `allowMultipleAllocations`:
  their IDs must differ and their `consumedCapacity` must sum to no more than each capacity.
* A partitionable device in use (shared or not) consumes its `consumesCounters` once; per pool,
  those consumptions must fit the counter sets of the pool.

The checks take the allocations as written: feature gates that would have refused to write
them (DRAConsumableCapacity, DRAPartitionableDevices) are not consulted.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from dataclasses import dataclass, field

from dra_operator.model import (
    CounterSet,
    Device,
    DeviceID,
    DeviceRequestAllocationResult,
    Quantity,
    ResourceClaim,
    ResourceSlice,
)
from dra_operator.verify._state import Code, Violation

__all__ = ["check_devices"]

_Use = tuple[ResourceClaim, DeviceRequestAllocationResult]


@dataclass(slots=True)
class _Pool:
    """The newest generation of one pool, as far as its slices are present."""

    generation: int
    slice_count: int
    present: int = 0
    devices: dict[str, Device] = field(default_factory=dict)
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)

    @property
    def is_complete(self) -> bool:
        return self.present == self.slice_count


def check_devices(
    claims: Iterable[ResourceClaim], slices: Iterable[ResourceSlice]
) -> list[Violation]:
    """Every device-level violation among the allocations of `claims`."""
    pools = _gather_pools(slices)
    uses = _uses_by_device(claims)
    violations: list[Violation] = []
    for device_id, device_uses in uses.items():
        pool = pools.get((device_id.driver, device_id.pool))
        violations += _check_published(device_id, pool, device_uses)
        device = pool.devices.get(device_id.device) if pool is not None else None
        violations += _check_sharing(device_id, device, device_uses)
    for (driver, pool_name), pool in sorted(pools.items()):
        if pool.is_complete and pool.counter_sets:
            violations += _check_counters(driver, pool_name, pool, uses)
    return violations


def _gather_pools(slices: Iterable[ResourceSlice]) -> dict[tuple[str, str], _Pool]:
    pools: dict[tuple[str, str], _Pool] = {}
    for s in sorted(slices, key=lambda s: s.metadata.name):
        key = (s.driver, s.pool.name)
        pool = pools.get(key)
        if pool is None or s.pool.generation > pool.generation:
            pool = pools[key] = _Pool(s.pool.generation, s.pool.resource_slice_count)
        elif s.pool.generation < pool.generation:
            continue
        pool.present += 1
        for device in s.devices:
            pool.devices.setdefault(device.name, device)
        for counter_set in s.shared_counters:
            pool.counter_sets.setdefault(counter_set.name, counter_set)
    return pools


def _uses_by_device(claims: Iterable[ResourceClaim]) -> dict[DeviceID, list[_Use]]:
    uses: dict[DeviceID, list[_Use]] = {}
    for claim in claims:
        allocation = claim.status.allocation
        if allocation is None:
            continue
        for result in allocation.devices.results:
            device_id = DeviceID(result.driver, result.pool, result.device)
            uses.setdefault(device_id, []).append((claim, result))
    return dict(sorted(uses.items(), key=lambda item: str(item[0])))


def _claim_key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def _claim_list(uses: Iterable[_Use]) -> str:
    return ", ".join(sorted({_claim_key(claim) for claim, _ in uses}))


def _check_published(device_id: DeviceID, pool: _Pool | None, uses: list[_Use]) -> list[Violation]:
    if pool is None:
        code = Code.DEVICE_NOT_PUBLISHED
        sentence = (
            f"Device {device_id} is allocated to this claim, but no ResourceSlice publishes "
            f"pool {device_id.driver}/{device_id.pool}."
        )
    elif not pool.is_complete:
        code = Code.POOL_INCOMPLETE
        sentence = (
            f"Device {device_id} is allocated to this claim from an incomplete pool: "
            f"{pool.present} of {pool.slice_count} ResourceSlices of generation "
            f"{pool.generation} exist."
        )
    elif device_id.device not in pool.devices:
        code = Code.DEVICE_NOT_PUBLISHED
        sentence = (
            f"Device {device_id} is allocated to this claim, but generation {pool.generation} "
            "of its pool does not publish it."
        )
    else:
        return []
    return [
        Violation(code=code, kind="ResourceClaim", name=name, message=sentence)
        for name in sorted({_claim_key(claim) for claim, _ in uses})
    ]


def _check_sharing(device_id: DeviceID, device: Device | None, uses: list[_Use]) -> list[Violation]:
    active = [(claim, result) for claim, result in uses if not result.admin_access]
    exclusive = [use for use in active if use[1].share_id is None]
    if exclusive:
        if len(active) < 2:
            return []
        why = (
            "an allocation without a shareID takes the whole device"
            if len(exclusive) < len(active)
            else "none of them is a share"
        )
        return [
            _device_violation(
                Code.DEVICE_OVERALLOCATED,
                device_id,
                f"Device {device_id} is allocated {len(active)} times "
                f"(to {_claim_list(active)}), but {why}.",
            )
        ]
    if not active:
        return []
    if device is not None and not device.allow_multiple_allocations:
        return [
            _device_violation(
                Code.DEVICE_OVERALLOCATED,
                device_id,
                f"Device {device_id} is allocated as {len(active)} shares "
                f"(to {_claim_list(active)}), but it does not allow multiple allocations.",
            )
        ]
    return _check_shares(device_id, device, active)


def _check_shares(
    device_id: DeviceID, device: Device | None, active: list[_Use]
) -> list[Violation]:
    violations: list[Violation] = []
    by_share = collections.defaultdict(list)
    for use in active:
        by_share[use[1].share_id].append(use)
    for share_id, same in sorted(by_share.items(), key=lambda item: str(item[0])):
        if len(same) > 1:
            violations.append(
                _device_violation(
                    Code.SHARE_DUPLICATED,
                    device_id,
                    f"Share {share_id} of device {device_id} is allocated {len(same)} times "
                    f"(to {_claim_list(same)}).",
                )
            )
    if device is None:
        return violations
    totals: dict[str, Quantity] = {}
    for _, result in active:
        for name, amount in result.consumed_capacity.items():
            qualified = name if "/" in name else f"{device_id.driver}/{name}"
            totals[qualified] = totals[qualified] + amount if qualified in totals else amount
    for name, total in sorted(totals.items()):
        capacity = device.capacity.get(name)
        if capacity is None:
            sentence = (
                f"Shares of device {device_id} consume capacity {name}, which the device "
                "does not have."
            )
        elif capacity.value < total:
            sentence = (
                f"Shares of device {device_id} (to {_claim_list(active)}) consume {total} of "
                f"capacity {name}, but the device has {capacity.value}."
            )
        else:
            continue
        violations.append(_device_violation(Code.CAPACITY_EXCEEDED, device_id, sentence))
    return violations


def _check_counters(
    driver: str, pool_name: str, pool: _Pool, uses: dict[DeviceID, list[_Use]]
) -> list[Violation]:
    consumed: dict[tuple[str, str], Quantity] = {}
    consumers: dict[str, list[str]] = collections.defaultdict(list)
    for name, device in sorted(pool.devices.items()):
        device_uses = uses.get(DeviceID(driver, pool_name, name), [])
        if not any(not result.admin_access for _, result in device_uses):
            continue
        for consumption in device.consumes_counters:
            consumers[consumption.counter_set].append(name)
            for counter, amount in consumption.counters.items():
                key = (consumption.counter_set, counter)
                consumed[key] = consumed[key] + amount if key in consumed else amount
    violations: list[Violation] = []
    for (set_name, counter), total in sorted(consumed.items()):
        counter_set = pool.counter_sets.get(set_name)
        available = counter_set.counters.get(counter) if counter_set is not None else None
        if available is not None and not available < total:
            continue
        devices = ", ".join(consumers[set_name])
        if available is None:
            sentence = (
                f"Allocated devices ({devices}) consume counter {counter} of counter set "
                f"{set_name}, which the pool does not define."
            )
        else:
            sentence = (
                f"Allocated devices ({devices}) consume {total} of counter {counter} in "
                f"counter set {set_name}, but the pool has {available}."
            )
        violations.append(
            Violation(
                code=Code.COUNTERS_EXCEEDED,
                kind="ResourcePool",
                name=f"{driver}/{pool_name}",
                message=sentence,
            )
        )
    return violations


def _device_violation(code: Code, device_id: DeviceID, sentence: str) -> Violation:
    return Violation(code=code, kind="Device", name=str(device_id), message=sentence)
