"""Pool gathering: which devices exist for one node, and in what order they are searched.

Upstream's `GatherPools` (v1.36 incubating): slices relevant to the node are grouped by
(driver, pool) keeping only the highest generation; a pool is complete when it has
`resourceSliceCount` slices of that generation (counting slices for other nodes when the
node's own view is short), obsolete when a newer generation exists elsewhere (then dropped),
incomplete otherwise; a complete pool is invalid when device names or counter sets are
inconsistent. Pools are ordered by (driver, pool), pools with binding-condition devices last;
slices by name; devices as published. That order *is* the first-fit search order.

A slice with a device that declares `compatibilityGroups` (1.37, DRADeviceCompatibilityGroups)
is ignored and not counted while that gate is off, so its pool is incomplete, as upstream does;
only 1.37 servers store the field. With the gate on, `_groups` enforces the groups.

1.37 (incubating and experimental tiers): a slice with shared counters is relevant by
its node selection like any other, no longer for every node. A pool whose counter-set slice
targets another node then looks incomplete, so all its slices are read: their counter sets
count, and their devices for other nodes consume from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from dra_operator.allocator._features import Features
from dra_operator.allocator._inputs import Node
from dra_operator.allocator._nodes import node_matches
from dra_operator.errors import AllocationInputError
from dra_operator.model import CounterSet, ResourceSlice


@dataclass(frozen=True, slots=True, order=True)
class PoolID:
    driver: str
    pool: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Pool:
    """One pool as the node sees it; devices come only from `slices` (node-relevant ones)."""

    id: PoolID
    is_incomplete: bool = False
    invalid_reason: str = ""
    slices: tuple[ResourceSlice, ...] = ()
    other_slices: tuple[ResourceSlice, ...] = ()  # same generation, other nodes (counters)
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)

    @property
    def is_invalid(self) -> bool:
        return bool(self.invalid_reason)

    @property
    def is_usable(self) -> bool:
        return not self.is_incomplete and not self.invalid_reason

    def has_binding_conditions(self) -> bool:
        return any(d.binding_conditions for s in self.slices for d in s.devices)


def gather_pools(
    slices: Sequence[ResourceSlice], node: Node | None, features: Features
) -> list[Pool]:
    """The pools relevant to `node`, in search order; raises for malformed node selectors."""
    grouped: dict[PoolID, list[ResourceSlice]] = {}
    counters_everywhere = not features.since_137 or features.is_stable_tier
    if not features.compatibility_groups:
        slices = [piece for piece in slices if not _uses_compatibility_groups(piece)]
    for piece in slices:
        if not features.partitionable_devices and (
            piece.per_device_node_selection is not None or piece.shared_counters
        ):
            continue
        if not _is_relevant(piece, node, counters_everywhere):
            continue
        pool_id = PoolID(piece.driver, piece.pool.name)
        kept = grouped.get(pool_id)
        if kept is None or piece.pool.generation > kept[0].pool.generation:
            grouped[pool_id] = [piece]
        elif piece.pool.generation == kept[0].pool.generation:
            kept.append(piece)

    plain: list[Pool] = []
    with_conditions: list[Pool] = []
    for pool_id, kept in grouped.items():
        generation = kept[0].pool.generation
        expected = kept[0].pool.resource_slice_count
        if len(kept) == expected:
            pool = _build_pool(pool_id, kept, features, None)
        else:
            everything = _slices_of_generation(slices, pool_id, generation)
            if everything is None:
                continue  # obsolete: a newer generation exists, with nothing for this node
            if len(everything) != expected:
                plain.append(Pool(id=pool_id, is_incomplete=True))
                continue
            pool = _build_pool(pool_id, kept, features, everything)
        (with_conditions if pool.has_binding_conditions() else plain).append(pool)
    plain.sort(key=lambda p: p.id)
    with_conditions.sort(key=lambda p: p.id)
    return plain + with_conditions


def _uses_compatibility_groups(piece: ResourceSlice) -> bool:
    return any(c.compatibility_groups for d in piece.devices for c in d.consumes_counters)


def _is_relevant(piece: ResourceSlice, node: Node | None, counters_everywhere: bool) -> bool:
    if piece.shared_counters and counters_everywhere:
        return True  # before 1.37 (and in the stable tier): shared with every node
    try:
        if piece.node_name or piece.all_nodes or piece.node_selector is not None:
            return node_matches(node, piece.node_name, piece.all_nodes, piece.node_selector)
        if piece.per_device_node_selection:
            for device in piece.devices:
                try:
                    if node_matches(node, device.node_name, device.all_nodes, device.node_selector):
                        return True
                except AllocationInputError as err:
                    raise AllocationInputError(
                        f"failed to perform node selection for device {device.name} in slice "
                        f"{piece.metadata.name}: {err}"
                    ) from err
            return False
    except AllocationInputError as err:
        if str(err).startswith("failed to perform"):
            raise AllocationInputError(f"gather pool information: {err}") from err
        raise AllocationInputError(
            f"gather pool information: failed to perform node selection for slice "
            f"{piece.metadata.name}: {err}"
        ) from err
    return False  # an unknown future selection mode: ignored, as upstream does


def _slices_of_generation(
    slices: Iterable[ResourceSlice], pool_id: PoolID, generation: int
) -> list[ResourceSlice] | None:
    """All slices of the pool at `generation`, or None when a newer generation exists."""
    found: list[ResourceSlice] = []
    for piece in slices:
        if piece.driver != pool_id.driver or piece.pool.name != pool_id.pool:
            continue
        if piece.pool.generation > generation:
            return None
        if piece.pool.generation == generation:
            found.append(piece)
    return found


def _build_pool(
    pool_id: PoolID,
    kept: list[ResourceSlice],
    features: Features,
    everything: list[ResourceSlice] | None,
) -> Pool:
    ordered = sorted(kept, key=lambda s: s.metadata.name)
    if features.partitionable_devices:
        device_slices = [s for s in ordered if not s.shared_counters]
        counter_slices = [s for s in ordered if s.shared_counters]
    else:
        device_slices, counter_slices = ordered, []
    reason = _duplicate_device(device_slices)
    if reason:
        return Pool(id=pool_id, invalid_reason=reason)
    if not features.partitionable_devices:
        return Pool(id=pool_id, slices=tuple(device_slices))
    others: list[ResourceSlice] = []
    if everything is not None and len(everything) != len(ordered):
        names = {s.metadata.name for s in ordered}
        others = [s for s in everything if s.metadata.name not in names]
        if features.since_137 and not features.is_stable_tier:
            counter_slices += [s for s in others if s.shared_counters]
            others = [s for s in others if not s.shared_counters]
    counter_sets: dict[str, CounterSet] = {}
    for piece in counter_slices:
        for counter_set in piece.shared_counters:
            if counter_set.name in counter_sets:
                return Pool(
                    id=pool_id, invalid_reason=f"duplicate counter set name {counter_set.name}"
                )
            counter_sets[counter_set.name] = counter_set
    reason = _bad_consumption(counter_sets, ordered) or _bad_consumption(counter_sets, others)
    if reason:
        return Pool(id=pool_id, invalid_reason=reason)
    return Pool(
        id=pool_id,
        slices=tuple(device_slices),
        other_slices=tuple(others),
        counter_sets=counter_sets,
    )


def _duplicate_device(device_slices: Iterable[ResourceSlice]) -> str:
    seen: set[str] = set()
    for piece in device_slices:
        for device in piece.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return ""


def _bad_consumption(counter_sets: dict[str, CounterSet], slices: Iterable[ResourceSlice]) -> str:
    for piece in slices:
        for device in piece.devices:
            for consumption in device.consumes_counters:
                counter_set = counter_sets.get(consumption.counter_set)
                if counter_set is None:
                    return f"counter set {consumption.counter_set} not found"
                for name in consumption.counters:
                    if name not in counter_set.counters:
                        return f"counter {name} not found in counter set {counter_set.name}"
    return ""
