"""What one allocation attempt reads besides claims, classes and slices.

`Node` is the candidate node (name and labels are all node selection needs). `Ledger` is
upstream's `AllocatedState`: exclusive devices, shares of multi-allocatable devices and their
summed consumed capacity; counter consumption is derived from it and the slices, as upstream
does. `Budget` bounds the search by steps and by a deadline on an injectable clock, replacing
upstream's context cancellation. `SelectorEvaluator` is the seam to the CEL engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from dra_operator.allocator._features import Features
from dra_operator.model import (
    Device,
    DeviceID,
    DeviceRequestAllocationResult,
    FrozenMap,
    Quantity,
    ResourceClaim,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """The candidate node; `None` in place of a Node means "no node" (matches nothing).

    `declared_features` is the node's `status.declaredFeatures`: a device whose slice lets the
    kubelet skip node operations needs "DRAOptionalNodeOperations" there (1.37).
    """

    name: str
    labels: FrozenMap[str, str] = field(default_factory=FrozenMap)
    declared_features: frozenset[str] = frozenset()


OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"  # the node's declared feature


def node_allows_skipping(node: Node | None, features: Features) -> bool:
    """Whether devices whose slice sets `skipNodeOperations` may be allocated on `node`: the
    gate is on and the node declares the feature (upstream's experimental allocateDevice)."""
    return (
        features.optional_node_operations
        and node is not None
        and OPTIONAL_NODE_OPERATIONS in node.declared_features
    )


@dataclass(frozen=True, slots=True)
class SharedDeviceID:
    """One share of a multi-allocatable device (upstream's `SharedDeviceID`)."""

    device: DeviceID
    share_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Ledger:
    """Devices already in use by allocated (or in-flight) claims.

    `exclusive` excludes admin-access results and results carrying a share ID, exactly like
    upstream's `AllocatedDevices`; `consumed_capacity` sums the consumed capacity of all shares
    of a device.
    """

    exclusive: frozenset[DeviceID] = frozenset()
    shares: frozenset[SharedDeviceID] = frozenset()
    consumed_capacity: FrozenMap[DeviceID, FrozenMap[str, Quantity]] = field(
        default_factory=FrozenMap
    )

    def is_allocated(self, device: DeviceID) -> bool:
        """Whether any claim uses the device in any way (counts toward shared counters)."""
        return (
            device in self.exclusive
            or device in self.consumed_capacity
            or any(share.device == device for share in self.shares)
        )

    @classmethod
    def from_claims(
        cls, claims: Iterable[ResourceClaim], *, consumable_capacity: bool = True
    ) -> Ledger:
        """The ledger of the allocations recorded in `claims` (the scheduler's view).

        Consumed-capacity names are qualified with the result's driver, as the model keys
        device capacities. Without DRAConsumableCapacity every result is exclusive, share ID or
        not, as the scheduler counts them.
        """
        exclusive: set[DeviceID] = set()
        shares: set[SharedDeviceID] = set()
        capacity: dict[DeviceID, dict[str, Quantity]] = {}
        for claim in claims:
            allocation = claim.status.allocation
            if allocation is None:
                continue
            for result in allocation.devices.results:
                device = DeviceID(result.driver, result.pool, result.device)
                if result.admin_access:
                    continue
                if result.share_id is None or not consumable_capacity:
                    exclusive.add(device)
                    continue
                shares.add(SharedDeviceID(device, result.share_id))
                totals = capacity.setdefault(device, {})
                for name, quantity in consumed_capacity(result).items():
                    totals[name] = totals[name] + quantity if name in totals else quantity
        return cls(
            exclusive=frozenset(exclusive),
            shares=frozenset(shares),
            consumed_capacity=FrozenMap(
                {device: FrozenMap(totals) for device, totals in capacity.items()}
            ),
        )


def consumed_capacity(result: DeviceRequestAllocationResult) -> dict[str, Quantity]:
    """A share's consumed capacity under the names the model keys device capacity by.

    The API writes a capacity of the driver's own domain by its bare name; the model qualifies
    it with the driver, so every ledger must do the same or a share's use is never matched
    against the device's capacity.
    """
    return {
        name if "/" in name else f"{result.driver}/{name}": quantity
        for name, quantity in result.consumed_capacity.items()
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """How much search one call may do before it gives up with an "exhausted" outcome.

    `max_steps` counts search steps (upstream's allocateOne invocations); `timeout` is seconds
    on `clock`, measured from the start of the call (None: no deadline). Upstream's scheduler
    uses a 10 s filter timeout; the step default bounds a call to well under that.
    """

    max_steps: int = 2_000_000
    timeout: float | None = 10.0
    clock: Callable[[], float] = time.monotonic


class SelectorEvaluator(Protocol):
    """Evaluates one CEL device selector against one device.

    Returns whether the device matches; raises `errors.CELCompileError` when the expression
    does not compile and `errors.CELRuntimeError` when evaluation fails. Implementations cache
    compiled expressions; the allocator memoises results per device and request itself.
    """

    def __call__(self, expression: str, driver: str, device: Device, /) -> bool: ...


CapacityMap = Mapping[str, Quantity]
