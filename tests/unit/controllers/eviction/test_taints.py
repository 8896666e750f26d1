"""Eviction times from slice taints, rules and the allocation's tolerations (upstream §5.4)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dra_operator import model
from dra_operator.controllers.eviction import (
    RuleTaint,
    SliceTaint,
    claim_eviction,
    pod_eviction,
    rule_matches,
    slice_taints,
)
from dra_operator.model import DeviceID

from .builders import DRIVER, POOL, T0, claim, pod, rule, slice_, taint, toleration

DEV0 = DeviceID(DRIVER, POOL, "dev-0")
LATER = T0 + datetime.timedelta(seconds=30)


def at(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param(None, False, id="no-selector-matches-nothing"),
        pytest.param({}, True, id="empty-selector-matches-all"),
        pytest.param({"driver": DRIVER}, True, id="driver"),
        pytest.param({"driver": "other"}, False, id="other-driver"),
        pytest.param({"driver": DRIVER, "pool": POOL, "device": "dev-0"}, True, id="exact"),
        pytest.param({"pool": POOL, "device": "dev-1"}, False, id="other-device"),
        pytest.param({"pool": "other"}, False, id="other-pool"),
    ],
)
def test_rule_matches(selector: dict[str, str] | None, expected: bool) -> None:
    parsed = model.parse_device_taint_rule(rule(selector=selector), "v1beta2")
    assert rule_matches(parsed, DEV0) is expected


def test_slice_taints_keep_only_no_execute_of_the_newest_generation() -> None:
    old = model.parse_resource_slice(slice_({"dev-0": [taint()]}, generation=1, name="old"))
    new = model.parse_resource_slice(
        slice_({"dev-0": [taint("NoSchedule")], "dev-1": [taint()]}, generation=2, name="new")
    )
    found = slice_taints([old, new])
    assert set(found) == {DeviceID(DRIVER, POOL, "dev-1")}


@pytest.mark.parametrize(
    ("taints", "tolerations", "expected"),
    [
        pytest.param([taint()], None, at(0), id="untolerated-at-once"),
        pytest.param([taint(at=LATER)], None, at(30), id="at-time-added"),
        pytest.param([taint()], [toleration(seconds=60)], at(60), id="toleration-seconds"),
        pytest.param(
            [taint()],
            [toleration(seconds=60), toleration(seconds=20)],
            at(20),
            id="min-toleration-seconds",
        ),
        pytest.param([taint()], [toleration(seconds=-5)], at(0), id="negative-is-zero"),
        pytest.param([taint()], [toleration()], None, id="nil-seconds-forever"),
        pytest.param(
            [taint()], [toleration(seconds=10), toleration()], None, id="nil-wins-forever"
        ),
        pytest.param([taint()], [toleration(effect="", seconds=60)], at(0), id="empty-effect"),
        pytest.param(
            [taint()], [toleration(seconds=60, key="other")], at(0), id="other-key-no-delay"
        ),
        pytest.param([taint("NoSchedule")], None, None, id="no-schedule-never"),
        pytest.param([taint("None")], None, None, id="none-never"),
        pytest.param([taint(at=LATER), taint(key="b", at=T0)], None, at(0), id="earliest-taint"),
        pytest.param([], None, None, id="no-taint"),
        pytest.param([taint()], [toleration(seconds=2**62)], None, id="past-year-9999"),
    ],
)
def test_slice_taint_eviction_time(
    taints: list[Any], tolerations: list[Any] | None, expected: datetime.datetime | None
) -> None:
    published = slice_taints([model.parse_resource_slice(slice_({"dev-0": taints}))])
    c = model.parse_resource_claim(claim(tolerations=tolerations))
    eviction = claim_eviction(c, lambda d: published.get(d, ()), [], now=at(100))
    assert (eviction.at if eviction else None) == expected


def test_rule_and_slice_reasons_are_ordered_rules_first() -> None:
    published = slice_taints([model.parse_resource_slice(slice_({"dev-0": [taint()]}))])
    rules = [
        model.parse_device_taint_rule(rule(name=n, selector={"driver": DRIVER}), "v1beta2")
        for n in ("zeta", "alpha")
    ]
    c = model.parse_resource_claim(claim())
    eviction = claim_eviction(c, lambda d: published.get(d, ()), rules, now=T0)
    assert eviction is not None
    assert eviction.reasons == (
        RuleTaint("alpha", "uid-alpha"),
        RuleTaint("zeta", "uid-zeta"),
        SliceTaint(DEV0, 0),
    )


def test_rule_with_other_effect_does_not_evict() -> None:
    r = model.parse_device_taint_rule(rule(effect="NoSchedule", selector={}), "v1beta2")
    c = model.parse_resource_claim(claim())
    assert claim_eviction(c, lambda d: (), [r], now=T0) is None


@pytest.mark.parametrize(
    ("pod_raw", "claim_raw", "evicts"),
    [
        pytest.param(pod(), claim(), True, id="reserved"),
        pytest.param(pod(node=""), claim(), False, id="not-scheduled"),
        pytest.param(pod(), claim(reserved_for=(("p1", "other-uid"),)), False, id="other-uid"),
        pytest.param(pod(), claim(reserved_for=()), False, id="not-reserved"),
        pytest.param(pod(), claim(allocated=False), False, id="not-allocated"),
    ],
)
def test_pod_eviction_needs_an_allocated_claim_reserved_for_the_pod(
    pod_raw: Any, claim_raw: Any, evicts: bool
) -> None:
    p = model.parse_pod(pod_raw)
    c = model.parse_resource_claim(claim_raw)
    r = model.parse_device_taint_rule(rule(selector={}), "v1beta2")
    found = pod_eviction(p, [c], lambda c: claim_eviction(c, lambda d: (), [r], now=T0))
    assert (found is not None) is evicts


def test_pod_eviction_takes_the_earliest_claim() -> None:
    published = slice_taints(
        [model.parse_resource_slice(slice_({"dev-0": [taint(at=LATER)], "dev-1": [taint()]}))]
    )
    p = model.parse_pod(pod(claims=("c1", "c2")))
    claims = [
        model.parse_resource_claim(claim("c1", devices=("dev-0",))),
        model.parse_resource_claim(claim("c2", devices=("dev-1",))),
    ]
    found = pod_eviction(
        p, claims, lambda c: claim_eviction(c, lambda d: published.get(d, ()), [], now=T0)
    )
    assert found is not None
    assert found.at == T0
    assert found.reasons == (SliceTaint(DeviceID(DRIVER, POOL, "dev-1"), 0),)


_tolerations = st.lists(
    st.builds(
        lambda effect, seconds: toleration(effect=effect, seconds=seconds),
        st.sampled_from(["NoExecute", "NoSchedule", ""]),
        st.one_of(st.none(), st.integers(-10, 600)),
    ),
    max_size=3,
)


@given(tolerations=_tolerations, extra=_tolerations, added=st.integers(0, 600))
def test_eviction_time_is_time_added_plus_the_least_no_execute_seconds(
    tolerations: list[Any], extra: list[Any], added: int
) -> None:
    """Only NoExecute tolerations count; one without seconds keeps the pod; otherwise the
    least of their seconds (negatives as 0) after timeAdded, timeAdded itself with none."""
    published = slice_taints([model.parse_resource_slice(slice_({"dev-0": [taint(at=at(added))]}))])
    all_tolerations = tolerations + extra
    c = model.parse_resource_claim(claim(tolerations=all_tolerations or None))
    eviction = claim_eviction(c, lambda d: published.get(d, ()), [], now=at(10_000))
    counting = [t for t in all_tolerations if t["effect"] == "NoExecute"]
    if any("tolerationSeconds" not in t for t in counting):
        assert eviction is None
        return
    assert eviction is not None
    delays = [max(t["tolerationSeconds"], 0) for t in counting]
    assert eviction.at == at(added + min(delays, default=0))
