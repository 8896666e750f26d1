"""An independent checker of allocation results, sharing no code with the allocator.

Given the inputs of an allocation attempt and the AllocationResults produced for it, it lists
every rule a result breaks: unknown or node-invisible devices, selectors, counts, subrequest
consistency, taints, binding conditions, devices used twice, consumable capacity, shared
counters, constraints and node selectors. Property and differential tests run it over
generated scenarios; it is deliberately written from the API rules (upstream-dra.md section 1),
not from the allocator's structure, and is simple rather than fast.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from dra_operator.model import (
    AllocationMode,
    AllocationResult,
    Device,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
    node_matches,
    tolerates,
)

Evaluate = Callable[[str, str, Device], bool]


@dataclass(frozen=True)
class Gates:
    device_taints: bool
    partitionable_devices: bool
    consumable_capacity: bool
    device_binding_and_status: bool
    stable_tier: bool
    list_type_attributes: bool = False


@dataclass(frozen=True)
class _Found:
    slice: ResourceSlice
    device: Device


def _latest(
    slices: Sequence[ResourceSlice], node_name: str, labels: Mapping[str, str], gates: Gates
) -> dict[tuple[str, str], list[ResourceSlice]]:
    """Per pool, every slice of the newest generation *this node sees* (upstream keeps using
    an older generation that is complete from the node's view). Without partitionable devices
    a slice with per-device node selection or shared counters does not exist for the
    allocator, so it cannot make an older generation obsolete either."""
    by_pool: dict[tuple[str, str], list[ResourceSlice]] = defaultdict(list)
    for s in slices:
        if not gates.partitionable_devices and (
            s.per_device_node_selection is not None or s.shared_counters
        ):
            continue
        by_pool[(s.driver, s.pool.name)].append(s)
    latest = {}
    for key, group in by_pool.items():
        seen = [
            s.pool.generation
            for s in group
            if s.shared_counters or any(_visible(s, d, node_name, labels) for d in s.devices)
        ]
        if seen:
            latest[key] = [s for s in group if s.pool.generation == max(seen)]
    return latest


def _visible(s: ResourceSlice, d: Device, node_name: str, labels: Mapping[str, str]) -> bool:
    if s.per_device_node_selection:
        name, everywhere, selector = d.node_name, d.all_nodes, d.node_selector
    else:
        name, everywhere, selector = s.node_name, s.all_nodes, s.node_selector
    if name:
        return name == node_name
    if everywhere:
        return True
    return selector is not None and node_matches(node_name, labels, selector)


def _qualify(name: str, driver: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def check_results(
    *,
    claims: Sequence[ResourceClaim],
    classes: Sequence[DeviceClass],
    slices: Sequence[ResourceSlice],
    allocated: Sequence[ResourceClaim],
    node_name: str,
    node_labels: Mapping[str, str],
    gates: Gates,
    evaluate: Evaluate,
    results: Sequence[AllocationResult],
) -> list[str]:
    """Every broken rule, as `claim X, result #i: what`; empty when the results are valid."""
    problems: list[str] = []
    if len(results) != len(claims):
        return [f"{len(results)} results for {len(claims)} claims"]
    latest = _latest(slices, node_name, node_labels, gates)
    class_by_name = {c.metadata.name: c for c in classes}
    exclusive_in_use: set[tuple[str, str, str]] = set()
    used_capacity: dict[tuple[str, str, str], dict[str, Fraction]] = defaultdict(dict)
    in_use_any: set[tuple[str, str, str]] = set()
    for c in allocated:
        if c.status.allocation is None:
            continue
        for r in c.status.allocation.devices.results:
            key = (r.driver, r.pool, r.device)
            if r.admin_access:
                continue
            in_use_any.add(key)
            if r.share_id and gates.consumable_capacity:
                for name, q in r.consumed_capacity.items():
                    full = _qualify(name, r.driver)
                    used_capacity[key][full] = used_capacity[key].get(full, Fraction(0)) + q.value
            else:
                exclusive_in_use.add(key)

    new_exclusive: dict[tuple[str, str, str], str] = {}
    shared_keys: set[tuple[str, str, str]] = set()
    for index, (claim, result) in enumerate(zip(claims, results, strict=True)):
        where = f"claim {claim.metadata.name}"
        found = {}
        for i, entry in enumerate(result.devices.results):
            spot = f"{where}, result #{i}"
            key = (entry.driver, entry.pool, entry.device)
            located = _locate(latest, key, node_name, node_labels)
            if located is None:
                problems.append(f"{spot}: device {'/'.join(key)} is not visible on {node_name}")
                continue
            found[i] = located
            problems += _check_entry(spot, claim, entry, located, class_by_name, gates, evaluate)
            if entry.admin_access:
                continue
            multi = gates.consumable_capacity and bool(located.device.allow_multiple_allocations)
            if multi:
                shared_keys.add(key)
                for name, q in entry.consumed_capacity.items():
                    full = _qualify(name, entry.driver)
                    used_capacity[key][full] = used_capacity[key].get(full, Fraction(0)) + q.value
                continue
            if key in exclusive_in_use or key in new_exclusive:
                problems.append(f"{spot}: device {'/'.join(key)} is already in use")
            new_exclusive[key] = spot
        problems += _check_counts(where, claim, result.devices.results)
        problems += _check_constraints(
            where, claim, result.devices.results, found, lists=gates.list_type_attributes
        )
        if result.node_selector is not None and not node_matches(
            node_name, node_labels, result.node_selector
        ):
            problems.append(f"{where}: node selector does not match {node_name}")
        del index
    for key in shared_keys:
        if key in exclusive_in_use or key in new_exclusive:
            problems.append(f"device {'/'.join(key)} is shared and exclusive at once")
        located = _locate(latest, key, node_name, node_labels)
        assert located is not None
        for name, total in used_capacity[key].items():
            cap = located.device.capacity.get(name)
            if cap is not None and total > cap.value.value:
                problems.append(f"device {'/'.join(key)}: capacity {name} over-committed")
    if gates.partitionable_devices:
        # a further share of a device already in use consumes no counters anew
        new = (set(new_exclusive) | shared_keys) - in_use_any
        problems += _check_counters(latest, in_use_any | new, new)
    return problems


def _locate(
    latest: Mapping[tuple[str, str], list[ResourceSlice]],
    key: tuple[str, str, str],
    node_name: str,
    labels: Mapping[str, str],
) -> _Found | None:
    for s in latest.get((key[0], key[1]), []):
        for d in s.devices:
            if d.name == key[2] and _visible(s, d, node_name, labels):
                return _Found(s, d)
    return None


def _request_parts(claim: ResourceClaim, name: str) -> tuple[object, str] | None:
    """(request body, parent name) for a result's request name."""
    parent, _, sub = name.partition("/")
    for request in claim.spec.requests:
        if request.name != parent:
            continue
        if not sub and request.exactly is not None:
            return request.exactly, parent
        for candidate in request.first_available:
            if sub and candidate.name == sub:
                return candidate, parent
    return None


def _check_entry(
    spot: str,
    claim: ResourceClaim,
    entry: DeviceRequestAllocationResult,
    located: _Found,
    classes: Mapping[str, DeviceClass],
    gates: Gates,
    evaluate: Evaluate,
) -> list[str]:
    parts = _request_parts(claim, entry.request)
    if parts is None:
        return [f"{spot}: unknown request {entry.request}"]
    body, _ = parts
    problems = []
    device = located.device
    cls = classes[body.device_class_name]  # type: ignore[attr-defined]
    selectors: list[DeviceSelector] = [*cls.selectors, *body.selectors]  # type: ignore[attr-defined]
    view = device
    if gates.stable_tier:
        from dataclasses import replace

        view = replace(device, allow_multiple_allocations=None)
    for selector in selectors:
        if not evaluate(selector.cel or "", entry.driver, view):
            problems.append(f"{spot}: selector {selector.cel!r} does not match")
    tolerations: Sequence[DeviceToleration] = body.tolerations  # type: ignore[attr-defined]
    if gates.device_taints:
        for taint in device.taints:
            if taint.effect in ("NoSchedule", "NoExecute") and not any(
                tolerates(t, taint) for t in tolerations
            ):
                problems.append(f"{spot}: untolerated taint {taint.key}")
    if not gates.device_binding_and_status and device.binding_conditions:
        problems.append(f"{spot}: device has binding conditions, feature off")
    admin = bool(getattr(body, "admin_access", None))
    if bool(entry.admin_access) != admin:
        problems.append(f"{spot}: adminAccess is {entry.admin_access}, request says {admin}")
    return problems


def _check_counts(
    where: str, claim: ResourceClaim, entries: Sequence[DeviceRequestAllocationResult]
) -> list[str]:
    problems = []
    per_request: dict[str, list[str]] = defaultdict(list)
    for entry in entries:
        per_request[entry.request.partition("/")[0]].append(entry.request)
    for request in claim.spec.requests:
        names = per_request.get(request.name, [])
        if len(set(names)) > 1:
            problems.append(f"{where}, request {request.name}: several subrequests used")
        if not names:
            problems.append(f"{where}, request {request.name}: no devices")
            continue
        parts = _request_parts(claim, names[0])
        assert parts is not None
        body = parts[0]
        if body.allocation_mode == AllocationMode.EXACT_COUNT and len(names) != body.count:  # type: ignore[attr-defined]
            problems.append(f"{where}, request {names[0]}: {len(names)} devices, not {body.count}")  # type: ignore[attr-defined]
    return problems


def _covers(requests: Sequence[str], name: str) -> bool:
    return not requests or name in requests or name.partition("/")[0] in requests


def _attribute(device: Device, driver: str, name: str) -> object:
    found = device.attributes.get(name)
    if found is None and "/" not in name:
        found = device.attributes.get(f"{driver}/{name}")
    return None if found is None else (found.kind, found.value)


def _as_set(value: object) -> set[object]:
    _kind, raw = value  # type: ignore[misc]
    return set(raw) if isinstance(raw, tuple) else {raw}


def _check_constraints(
    where: str,
    claim: ResourceClaim,
    entries: Sequence[DeviceRequestAllocationResult],
    found: Mapping[int, _Found],
    *,
    lists: bool,
) -> list[str]:
    problems = []
    for n, constraint in enumerate(claim.spec.constraints):
        values = [
            (
                entry.request.partition("/")[0],
                _attribute(
                    found[i].device,
                    entry.driver,
                    constraint.match_attribute or constraint.distinct_attribute or "",
                ),
            )
            for i, entry in enumerate(entries)
            if i in found and _covers(constraint.requests, entry.request)
        ]
        if any(v is None for _, v in values):
            problems.append(f"{where}, constraint #{n}: a device lacks the attribute")
            continue
        if constraint.match_attribute and lists and values:
            # list-typed attributes: the values' sets must share at least one element
            if not set.intersection(*(_as_set(v) for _, v in values)):
                problems.append(f"{where}, constraint #{n}: no common value")
            continue
        if constraint.match_attribute and len({v for _, v in values}) > 1:
            problems.append(f"{where}, constraint #{n}: values differ")
        # With several devices per request upstream keeps one value per request and forgets
        # it on backtracking, so only one-device requests are strictly distinct.
        requests = [request for request, _ in values]
        one_each = len(set(requests)) == len(requests)
        if constraint.distinct_attribute and one_each and len({v for _, v in values}) < len(values):
            problems.append(f"{where}, constraint #{n}: requests share a value")
    return problems


def _check_counters(
    latest: Mapping[tuple[str, str], list[ResourceSlice]],
    used: set[tuple[str, str, str]],
    new: set[tuple[str, str, str]],
) -> list[str]:
    """Counters may only be over-committed where no new device consumes them."""
    problems = []
    for (driver, pool), group in latest.items():
        totals: dict[tuple[str, str], Fraction] = {}
        for s in group:
            for counter_set in s.shared_counters:
                for name, q in counter_set.counters.items():
                    totals[(counter_set.name, name)] = q.value
        consumed: dict[tuple[str, str], Fraction] = defaultdict(Fraction)
        touched: set[tuple[str, str]] = set()
        for s in group:
            for d in s.devices:
                if (driver, pool, d.name) not in used:
                    continue
                for consumption in d.consumes_counters:
                    for name, q in consumption.counters.items():
                        consumed[(consumption.counter_set, name)] += q.value
                        if (driver, pool, d.name) in new:
                            touched.add((consumption.counter_set, name))
        for key, amount in consumed.items():
            if key in touched and key in totals and amount > totals[key]:
                problems.append(f"pool {driver}/{pool}: counter {key[0]}/{key[1]} over-committed")
    return problems
