"""The answer to one ResourcePoolStatusRequest, as a pure function of the cluster's objects.

kube-controller-manager v1.37.2, pkg/controller/resourcepoolstatusrequest/controller.go
(`calculatePoolStatus`):

* pools are the driver's (and, with `spec.poolName`, that pool's) ResourceSlices at the
  pool's newest generation, sorted by driver then pool name, the first `spec.limit` of them
  listed while `poolCount` counts all;
* a pool with fewer slices than `resourceSliceCount` says so in `validationError` and has no
  counts; the controller then retries the request rather than answer it;
* `allocatedDevices` counts the distinct devices of the pool named by any claim's allocation
  (admin-access results excluded); `unavailableDevices` the devices tainted NoSchedule or
  NoExecute, on the device or by a DeviceTaintRule; `availableDevices` the rest, never below 0;
* `nodeName` is set when every slice of the pool names the same node;
* the `Complete` condition's message counts the pools listed and the incomplete ones.

A pool with no slices matching is simply absent: `poolCount` 0 and no `pools`.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable
from typing import Any, Final

from dra_operator import model
from dra_operator.controllers.poolstatus._views import (
    PREFIX_INCOMPLETE,
    PoolView,
    records,
    resolve_partitions,
    summaries,
)

MAX_MESSAGE: Final = 256
"""Bytes kept of a pool's `validationError`."""

_UNAVAILABLE_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    """The status to write, and whether some pool was caught half-published."""

    status: dict[str, Any]
    incomplete: bool


@dataclasses.dataclass(slots=True)
class _Pool:
    driver: str
    name: str
    generation: int
    expected_slices: int
    node_name: str | None
    view: PoolView
    mixed_nodes: bool = False
    slices: int = 0
    devices: int = 0
    unavailable: int = 0


def answer(
    request: model.ResourcePoolStatusRequest,
    slices: Iterable[model.ResourceSlice],
    claims: Iterable[model.ResourceClaim],
    rules: Iterable[model.DeviceTaintRule],
    now: datetime.datetime,
) -> Answer:
    """What the controller writes as `status` for `request` (see the module docstring)."""
    wanted = [
        s
        for s in slices
        if s.driver == request.driver
        and (not request.pool_name or s.pool.name == request.pool_name)
    ]
    newest: dict[str, int] = {}
    for s in wanted:
        newest[s.pool.name] = max(newest.get(s.pool.name, s.pool.generation), s.pool.generation)
    taint_rules = list(rules)
    pools: dict[str, _Pool] = {}
    for s in wanted:
        if s.pool.generation < newest[s.pool.name]:
            continue
        pool = pools.get(s.pool.name)
        if pool is None:
            view = PoolView(s.driver, s.pool.name, [], [], set(), {})
            generation, expected = newest[s.pool.name], s.pool.resource_slice_count
            pool = _Pool(s.driver, s.pool.name, generation, expected, s.node_name, view)
            pools[s.pool.name] = pool
        elif (s.node_name or "") != (pool.node_name or ""):
            pool.mixed_nodes = True
        pool.slices += 1
        pool.devices += len(s.devices)
        pool.unavailable += sum(
            1 for d in s.devices if _unavailable(s.driver, s.pool.name, d, taint_rules)
        )
        pool.view.devices.extend(records(s))
        pool.view.shared_counters.extend(s.shared_counters)
    _add_allocations(pools, request.driver, claims)
    entries = [_entry(pools[name], request) for name in sorted(pools)]
    listed = entries[: max(request.limit, 0)]
    incomplete = sum(1 for e in listed if "validationError" in e)
    message = f"Calculated status for {len(listed)} pools"
    if incomplete:
        message += f" ({incomplete} incomplete)"
    status: dict[str, Any] = {"poolCount": len(entries)}
    if listed:
        status["pools"] = listed
    status["conditions"] = [
        {
            "type": "Complete",
            "status": "True",
            "lastTransitionTime": _timestamp(now),
            "reason": "CalculationComplete",
            "message": message,
        }
    ]
    half_published = any(e.get("validationError", "").startswith(PREFIX_INCOMPLETE) for e in listed)
    return Answer(status, half_published)


def _add_allocations(
    pools: dict[str, _Pool], driver: str, claims: Iterable[model.ResourceClaim]
) -> None:
    """Record each pool's allocated devices and the capacity its allocations consume."""
    for claim in claims:
        allocation = claim.status.allocation
        if allocation is None:
            continue
        for result in allocation.devices.results:
            pool = pools.get(result.pool)
            if result.admin_access or result.driver != driver or pool is None:
                continue
            pool.view.in_use.add(result.device)
            consumed = dict(pool.view.consumed)
            for name, amount in result.consumed_capacity.items():
                key = name if "/" in name else f"{driver}/{name}"
                consumed[key] = consumed.get(key, model.Quantity(0)) + amount
            pool.view.consumed = consumed


def _entry(pool: _Pool, request: model.ResourcePoolStatusRequest) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "driver": pool.driver,
        "poolName": pool.name,
        "generation": pool.generation,
    }
    if pool.node_name and not pool.mixed_nodes:
        entry["nodeName"] = pool.node_name
    if pool.slices < pool.expected_slices:
        entry["validationError"] = _truncate(
            f"{PREFIX_INCOMPLETE} pool {pool.driver}/{pool.name} is incomplete: observed "
            f"{pool.slices}/{pool.expected_slices} slices at generation {pool.generation}"
        )
        return entry
    allocated = len(pool.view.in_use)
    entry["resourceSliceCount"] = pool.slices
    entry["totalDevices"] = pool.devices
    entry["allocatedDevices"] = allocated
    entry["availableDevices"] = max(0, pool.devices - allocated - pool.unavailable)
    entry["unavailableDevices"] = pool.unavailable
    resolve_partitions(pool.view, request.default_partition_type_attribute)
    partitions, shareable, error = summaries(pool.view)
    if partitions:
        entry["partitionSummary"] = partitions
    if shareable is not None:
        entry["shareableSummary"] = shareable
    if error:
        entry["validationError"] = _truncate(error)
    return entry


def _unavailable(
    driver: str, pool: str, device: model.Device, rules: list[model.DeviceTaintRule]
) -> bool:
    """Tainted NoSchedule/NoExecute, by the device itself or a rule selecting it."""
    if any(t.effect in _UNAVAILABLE_EFFECTS for t in device.taints):
        return True
    for rule in rules:
        selector = rule.device_selector
        if rule.taint.effect not in _UNAVAILABLE_EFFECTS or selector is None:
            continue
        if (
            selector.driver in (None, driver)
            and selector.pool in (None, pool)
            and selector.device in (None, device.name)
        ):
            return True
    return False


def _truncate(text: str) -> str:
    return text.encode()[:MAX_MESSAGE].decode(errors="ignore")


def _timestamp(now: datetime.datetime) -> str:
    return now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
