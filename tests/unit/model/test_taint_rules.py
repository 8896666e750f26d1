"""DeviceTaintRules applied to slices the way upstream's resourceslice tracker does."""

from __future__ import annotations

import pytest

from dra_operator.model import (
    Device,
    DeviceTaint,
    DeviceTaintRule,
    DeviceTaintSelector,
    ObjectMeta,
    ResourcePool,
    ResourceSlice,
    apply_taint_rules,
    taint_rule_applies,
)

PUBLISHED = DeviceTaint(key="published", value="v", effect="NoSchedule")
BROKEN = DeviceTaint(key="broken", value="", effect="NoExecute")
DRAINING = DeviceTaint(key="draining", value="", effect="NoSchedule")


def rule(
    name: str = "r",
    taint: DeviceTaint = BROKEN,
    *,
    driver: str | None = None,
    pool: str | None = None,
    device: str | None = None,
    selector: bool = True,
) -> DeviceTaintRule:
    return DeviceTaintRule(
        metadata=ObjectMeta(name=name),
        device_selector=DeviceTaintSelector(driver=driver, pool=pool, device=device)
        if selector
        else None,
        taint=taint,
    )


def piece(name: str = "s", driver: str = "d", pool: str = "p") -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=name),
        driver=driver,
        pool=ResourcePool(name=pool, generation=1, resource_slice_count=1),
        node_name="node-1",
        devices=(Device(name="a", taints=(PUBLISHED,)), Device(name="b")),
    )


@pytest.mark.parametrize(
    ("selected", "expected"),
    [
        pytest.param(rule(selector=False), False, id="no-selector-matches-nothing"),
        pytest.param(rule(), True, id="empty-selector-applies-everywhere"),
        pytest.param(rule(driver="d"), True, id="driver"),
        pytest.param(rule(driver="other"), False, id="other-driver"),
        pytest.param(rule(driver="d", pool="p"), True, id="driver-and-pool"),
        pytest.param(rule(pool="other"), False, id="other-pool"),
        pytest.param(rule(driver="d", pool="p", device="a"), True, id="one-device"),
        pytest.param(rule(device="b"), False, id="other-device"),
    ],
)
def test_every_selector_field_given_must_be_equal(
    selected: DeviceTaintRule, expected: bool
) -> None:
    assert taint_rule_applies(selected, "d", "p", "a") is expected


def test_no_selector_matched_every_device_before_1_37_1() -> None:
    """The 1.36 and 1.37.0 trackers applied a selector-less rule everywhere (#141998)."""
    selectorless = rule(selector=False)
    assert taint_rule_applies(selectorless, "d", "p", "a", selectorless_matches_all=True)
    (patched,) = apply_taint_rules([piece()], [selectorless], selectorless_matches_all=True)
    assert [d.taints for d in patched.devices] == [(PUBLISHED, BROKEN), (BROKEN,)]
    (untouched,) = apply_taint_rules([piece()], [selectorless])
    assert untouched == piece()


def test_rule_taints_follow_the_published_ones_in_rule_order() -> None:
    (got,) = apply_taint_rules(
        [piece()], [rule("r1", BROKEN, device="a"), rule("r2", DRAINING, pool="p")]
    )
    assert [d.taints for d in got.devices] == [(PUBLISHED, BROKEN, DRAINING), (DRAINING,)]


def test_slices_no_rule_selects_are_returned_unchanged() -> None:
    untouched, other = piece("s1"), piece("s2", driver="e")
    got = apply_taint_rules([untouched, other], [rule(driver="e", device="b")])
    assert got[0] is untouched
    assert got[1].devices[0] is other.devices[0]
    assert got[1].devices[1].taints == (BROKEN,)
    assert other.devices[1].taints == ()
