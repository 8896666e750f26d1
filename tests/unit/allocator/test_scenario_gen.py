"""The differential test's scenarios cover every feature family, combinations included.

test_differential.py compares seeds 0..SCENARIOS-1 with upstream (250 in `make test`, 1,000 in
`make test-full`); a family that no seed reaches is not compared at all, so this pins a floor
for each one over exactly those seeds: 15 of 1,000, a proportional 3 of 250.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
from scenario_gen import Scenario, generate
from test_differential import SCENARIOS

from dra_operator.model import AllocationMode, AttributeKind, DeviceRequest, ResourceClaim


def _requests(s: Scenario) -> list[DeviceRequest]:
    return [r for c in s.claims for r in c.spec.requests]


def _capacity_all(s: Scenario) -> bool:
    entries = [r.exactly for r in _requests(s) if r.exactly] + [
        sub for r in _requests(s) for sub in r.first_available
    ]
    return s.features.consumable_capacity and any(
        e.allocation_mode == AllocationMode.ALL and e.capacity is not None for e in entries
    )


def _constrained_first_available(claim: ResourceClaim) -> bool:
    lists = {r.name for r in claim.spec.requests if r.first_available}
    return any(
        not c.requests or any(name.split("/")[0] in lists for name in c.requests)
        for c in claim.spec.constraints
    )


def _subrequest_constraint(s: Scenario) -> bool:
    return any("/" in name for c in s.claims for k in c.spec.constraints for name in k.requests)


def _all_subrequest(s: Scenario) -> bool:
    return any(
        sub.allocation_mode == AllocationMode.ALL for r in _requests(s) for sub in r.first_available
    )


def _counter_devices(s: Scenario, also: Callable[..., bool]) -> bool:
    return s.features.partitionable_devices and any(
        d.consumes_counters and also(d) for x in s.slices for d in x.devices
    )


def _list_constraint(s: Scenario) -> bool:
    lists = any(
        a.kind in (AttributeKind.INTS, AttributeKind.STRINGS)
        for x in s.slices
        for d in x.devices
        for a in d.attributes.values()
    )
    return s.features.list_type_attributes and lists and any(c.spec.constraints for c in s.claims)


FAMILIES: dict[str, Callable[[Scenario], bool]] = {
    "consumable capacity, All mode": _capacity_all,
    "firstAvailable with constraints": lambda s: any(
        _constrained_first_available(c) for c in s.claims
    ),
    "constraint naming a subrequest": _subrequest_constraint,
    "All-mode subrequest": _all_subrequest,
    "partitionable + taints": lambda s: (
        s.features.device_taints and _counter_devices(s, lambda d: bool(d.taints))
    ),
    "partitionable + multi-allocatable": lambda s: (
        s.features.consumable_capacity
        and _counter_devices(s, lambda d: bool(d.allow_multiple_allocations))
    ),
    "partitionable + per-device node selection": lambda s: _counter_devices(
        s, lambda d: d.node_name is not None or d.all_nodes or d.node_selector is not None
    ),
    "list-typed attributes in constraints": _list_constraint,
    "binding conditions": lambda s: (
        s.features.device_binding_and_status
        and any(d.binding_conditions for x in s.slices for d in x.devices)
    ),
    "admin access": lambda s: any(r.exactly and r.exactly.admin_access for r in _requests(s)),
    "stable tier": lambda s: s.features.is_stable_tier,
}


@pytest.fixture(scope="module")
def counts() -> Counter[str]:
    counted: Counter[str] = Counter()
    for seed in range(SCENARIOS):
        s = generate(seed)
        counted.update(name for name, has in FAMILIES.items() if has(s))
    return counted


@pytest.mark.parametrize("family", FAMILIES)
def test_the_differential_seeds_reach_every_family(counts: Counter[str], family: str) -> None:
    assert counts[family] >= max(3, 15 * SCENARIOS // 1000), dict(counts)
