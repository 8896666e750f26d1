"""DeviceTaintRules applied to ResourceSlices, as upstream's resourceslice tracker does.

The scheduler's allocator sees every device with its published taints followed by a copy of
the taint of each DeviceTaintRule that selects it (upstream-dra.md §5.3). A selector field that
is set must equal the slice's driver, the slice's pool name or the device name. A rule without
a selector matches nothing from 1.37.1 on (#141998), as the eviction controller always read it
(`controllers.eviction.rule_matches`); the 1.36 and 1.37.0 trackers applied it to every device
(`selectorless_matches_all`). An empty selector (`deviceSelector: {}`) matches every device.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from dra_operator.model._types import DeviceTaintRule, ResourceSlice


def taint_rule_applies(
    rule: DeviceTaintRule,
    driver: str,
    pool: str,
    device: str,
    *,
    selectorless_matches_all: bool = False,
) -> bool:
    """Whether the tracker copies `rule`'s taint onto the device driver/pool/device."""
    selector = rule.device_selector
    if selector is None:
        return selectorless_matches_all
    return (
        (selector.driver is None or selector.driver == driver)
        and (selector.pool is None or selector.pool == pool)
        and (selector.device is None or selector.device == device)
    )


def apply_taint_rules(
    slices: Iterable[ResourceSlice],
    rules: Sequence[DeviceTaintRule],
    *,
    selectorless_matches_all: bool = False,
) -> list[ResourceSlice]:
    """`slices` with the rules' taints appended to the devices they select, rules in order.

    Slices no rule touches are returned as they are.
    """
    patched = []
    for piece in slices:
        devices = []
        for device in piece.devices:
            added = tuple(
                rule.taint
                for rule in rules
                if taint_rule_applies(
                    rule,
                    piece.driver,
                    piece.pool.name,
                    device.name,
                    selectorless_matches_all=selectorless_matches_all,
                )
            )
            devices.append(replace(device, taints=device.taints + added) if added else device)
        changed = any(new is not old for new, old in zip(devices, piece.devices, strict=True))
        patched.append(replace(piece, devices=tuple(devices)) if changed else piece)
    return patched
