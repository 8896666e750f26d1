"""Watch events to eviction keys: pods, claims, slices (NoExecute diff) and rules."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator import model
from dra_operator.controllers.eviction import (
    EvictionKey,
    changed_devices,
    keys_for_claim,
    keys_for_rule,
    keys_for_slice,
)
from dra_operator.model import DeviceID

from .builders import DRIVER, POOL, Stores, claim, rule, slice_, taint


def _slice(devices: dict[str, list[Any]], generation: int = 1) -> model.ResourceSlice:
    return model.parse_resource_slice(slice_(devices, generation))


def dev(name: str) -> DeviceID:
    return DeviceID(DRIVER, POOL, name)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            _slice({"a": [], "b": []}), _slice({"a": [taint()], "b": []}), {dev("a")}, id="added"
        ),
        pytest.param(
            _slice({"a": [taint()]}), _slice({"a": [taint("NoSchedule")]}), {dev("a")}, id="gone"
        ),
        pytest.param(
            _slice({"a": []}), _slice({"a": [taint("NoSchedule")]}), set(), id="no-schedule-only"
        ),
        pytest.param(
            _slice({"a": []}), _slice({"a": []}, generation=2), {dev("a")}, id="new-generation"
        ),
        pytest.param(None, _slice({"a": [], "b": []}), {dev("a"), dev("b")}, id="created"),
        pytest.param(_slice({"a": []}), None, {dev("a")}, id="deleted"),
    ],
)
def test_changed_devices(
    old: model.ResourceSlice | None, new: model.ResourceSlice | None, expected: set[DeviceID]
) -> None:
    assert changed_devices(old, new) == expected


def test_claim_maps_to_the_pods_it_is_reserved_for() -> None:
    c = model.parse_resource_claim(claim(reserved_for=(("p1", "u1"), ("p2", "u2"))))
    assert keys_for_claim(c) == [
        EvictionKey("pod", "default", "p1"),
        EvictionKey("pod", "default", "p2"),
    ]


def test_slice_maps_to_pods_of_claims_on_changed_devices() -> None:
    stores = Stores()
    stores.add(
        claim("c1", devices=("a",)), claim("c2", devices=("b",), reserved_for=(("p2", "u"),))
    )
    keys = keys_for_slice(
        _slice({"a": [], "b": []}), _slice({"a": [], "b": [taint()]}), stores.claims
    )
    assert keys == [EvictionKey("pod", "default", "p2")]


def test_rule_maps_to_itself_and_pods_either_version_selects() -> None:
    stores = Stores()
    stores.add(
        claim("c1", devices=("a",)), claim("c2", devices=("b",), reserved_for=(("p2", "u"),))
    )
    old = model.parse_device_taint_rule(rule(selector={"device": "a"}), "v1beta2")
    new = model.parse_device_taint_rule(rule(selector={"device": "b"}), "v1beta2")
    keys = keys_for_rule(old, new, stores.claims)
    assert sorted(keys) == [
        EvictionKey("pod", "default", "p1"),
        EvictionKey("pod", "default", "p2"),
        EvictionKey("rule", "", "r1"),
    ]
    assert keys_for_rule(old, None, stores.claims) == [EvictionKey("pod", "default", "p1")]
