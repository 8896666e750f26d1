"""The two per-pool summaries of a ResourcePoolStatusRequest answer: partitions and sharing.

kube-controller-manager v1.37.2, pkg/controller/resourcepoolstatusrequest/views.go:

* partitionSummary: for a pool that publishes shared counters, counter-consuming devices are
  grouped by (grouping attribute, its string value). For each group, `total` counts its devices
  and `allocatable` how many of its unallocated devices could still be allocated one after
  the other from what the allocated devices left of the counters, each group measured on its
  own against that same baseline.
* shareableSummary: for a pool with `allowMultipleAllocations` devices, how many are untouched
  or partly used, and per capacity name the total, consumed and available amounts.

Any inconsistency is reported as the pool's `validationError` (prefixed with its kind) and the
partition summary is then dropped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, Final

from dra_operator import model

MAX_LIST_ITEMS: Final = 32
"""Upper bound on the entries of either summary's list (`maxStatusListItems`)."""

PREFIX_INCOMPLETE: Final = "PoolIncomplete:"
PREFIX_TYPE_MISSING: Final = "PartitionTypeMissing:"
PREFIX_COST_MISMATCH: Final = "PartitionCostMismatch:"
PREFIX_PARTITIONS_OVER_CAP: Final = "PartitionSummaryOverCap:"
PREFIX_SHAREABLE_OVER_CAP: Final = "ShareableSummaryOverCap:"

_ZERO: Final = model.Quantity(0)

Counters = dict[str, dict[str, model.Quantity]]


@dataclasses.dataclass(slots=True)
class DeviceRecord:
    """One device of the pool as the summaries see it; `attribute` is its grouping attribute."""

    device: model.Device
    attribute: str = ""
    partition_type: str | None = None


@dataclasses.dataclass(slots=True)
class PoolView:
    """One complete pool: its devices, counter sets and what allocations use of it."""

    driver: str
    pool: str
    devices: list[DeviceRecord]
    shared_counters: list[model.CounterSet]
    in_use: set[str]
    consumed: Mapping[str, model.Quantity]  # per qualified capacity name


def records(resource_slice: model.ResourceSlice) -> list[DeviceRecord]:
    """The slice's devices, each with the grouping attribute its slice declares."""
    attribute = resource_slice.partition_type_attribute or ""
    return [DeviceRecord(device, attribute) for device in resource_slice.devices]


def resolve_partitions(view: PoolView, default_attribute: str | None) -> None:
    """Fill in each device's grouping attribute and partition type.

    The request's default applies only when no slice of the pool declares an attribute; a
    device without the attribute, or with a non-string value, has no partition type.
    """
    declared = any(record.attribute for record in view.devices)
    for record in view.devices:
        if not record.attribute:
            if declared or default_attribute is None:
                continue
            record.attribute = default_attribute
        value = record.device.attributes.get(record.attribute)
        if value is not None and value.kind is model.AttributeKind.STRING:
            record.partition_type = str(value.value)


def summaries(view: PoolView) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None, str]:
    """(partitionSummary, shareableSummary, validationError) of one pool."""
    partitions: list[dict[str, Any]] | None = None
    error = ""
    grouped = any(record.attribute for record in view.devices)
    if grouped and not view.shared_counters:
        error = (
            f"{PREFIX_TYPE_MISSING} pool {view.driver}/{view.pool} declares "
            "partitionTypeAttribute but publishes no sharedCounters"
        )
    elif grouped:
        partitions, error = _partition_summary(view)
    shareable, shareable_error = _shareable_summary(view)
    error = error or shareable_error
    if shareable_error:
        shareable = None
    if error:
        partitions = None
    return partitions, shareable, error


def _cost_key(cost: Iterable[model.DeviceCounterConsumption]) -> str:
    parts = sorted(
        f"{c.counter_set}/{name}={quantity}" for c in cost for name, quantity in c.counters.items()
    )
    return ",".join(parts)


def _partition_summary(view: PoolView) -> tuple[list[dict[str, Any]] | None, str]:
    totals: dict[tuple[str, str], int] = {}
    fresh: dict[tuple[str, str], list[model.Device]] = {}
    costs: dict[tuple[str, str], str] = {}
    for record in view.devices:
        device = record.device
        if not device.consumes_counters or not record.attribute:
            continue
        if record.partition_type is None:
            return None, (
                f"{PREFIX_TYPE_MISSING} device {_quoted(device.name)} in pool "
                f"{view.driver}/{view.pool} does not carry partition type attribute "
                f"{_quoted(record.attribute)}"
            )
        key = (record.attribute, record.partition_type)
        cost = _cost_key(device.consumes_counters)
        if costs.setdefault(key, cost) != cost:
            return None, (
                f"{PREFIX_COST_MISMATCH} devices of partition type "
                f"{_quoted(record.partition_type)} in pool {view.driver}/{view.pool} "
                "consume different counters"
            )
        totals[key] = totals.get(key, 0) + 1
        if device.name not in view.in_use:
            fresh.setdefault(key, []).append(device)
    baseline = _available(view)
    result = []
    for key in sorted(totals):
        left = {name: dict(counters) for name, counters in baseline.items()}
        allocatable = 0
        for device in fresh.get(key, ()):
            if _fits(device.consumes_counters, left):
                allocatable += 1
                _deduct(device.consumes_counters, left)
        result.append(
            {"attribute": key[0], "type": key[1], "total": totals[key], "allocatable": allocatable}
        )
    if len(result) > MAX_LIST_ITEMS:
        return None, (
            f"{PREFIX_PARTITIONS_OVER_CAP} pool {view.driver}/{view.pool} has {len(result)} "
            f"partition types, exceeding the maximum of {MAX_LIST_ITEMS}"
        )
    return result, ""


def _available(view: PoolView) -> Counters:
    """The pool's counters minus what allocated devices consume."""
    left: Counters = {}
    for counter_set in view.shared_counters:
        left.setdefault(counter_set.name, {}).update(counter_set.counters)
    for record in view.devices:
        if record.device.name in view.in_use:
            _deduct(record.device.consumes_counters, left)
    return left


def _fits(cost: Iterable[model.DeviceCounterConsumption], left: Counters) -> bool:
    for consumption in cost:
        counters = left.get(consumption.counter_set, {})
        for name, amount in consumption.counters.items():
            have = counters.get(name)
            if have is None or have < amount:
                return False
    return True


def _deduct(cost: Iterable[model.DeviceCounterConsumption], left: Counters) -> None:
    for consumption in cost:
        counters = left.get(consumption.counter_set)
        if counters is None:
            continue
        for name, amount in consumption.counters.items():
            if name in counters:
                counters[name] = counters[name] - amount


def _shareable_summary(view: PoolView) -> tuple[dict[str, Any] | None, str]:
    full = partial = 0
    totals: dict[str, model.Quantity] = {}
    shareable = False
    for record in view.devices:
        device = record.device
        if not device.allow_multiple_allocations:
            continue
        shareable = True
        if device.name in view.in_use:
            partial += 1
        else:
            full += 1
        for name, capacity in device.capacity.items():
            totals[name] = totals.get(name, _ZERO) + capacity.value
    if not shareable:
        return None, ""
    capacity_list = []
    for name in sorted(totals):
        total = totals[name]
        consumed = view.consumed.get(name, _ZERO)
        available = total - consumed
        if available.value < 0:
            available = model.Quantity(0, total.format)
        capacity_list.append(
            {
                "name": _published(name, view.driver),
                "total": str(total),
                "consumed": str(consumed),
                "available": str(available),
            }
        )
    if len(capacity_list) > MAX_LIST_ITEMS:
        return None, (
            f"{PREFIX_SHAREABLE_OVER_CAP} pool {view.driver}/{view.pool} has "
            f"{len(capacity_list)} shareable capacity keys, exceeding the maximum of "
            f"{MAX_LIST_ITEMS}"
        )
    summary: dict[str, Any] = {
        "fullyAvailableDevices": full,
        "partiallyAvailableDevices": partial,
    }
    if capacity_list:
        summary["capacity"] = capacity_list
    return summary, ""


def _published(name: str, driver: str) -> str:
    """A capacity name as drivers usually publish it: the model qualifies bare names with the
    driver's domain, the answer names them bare again."""
    return name.removeprefix(f"{driver}/")


def _quoted(text: str) -> str:
    """Go's %q for the plain names that appear here."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
