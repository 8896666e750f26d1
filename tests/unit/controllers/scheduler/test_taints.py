"""DeviceTaintRules in scheduling decisions: the patched slice view and the re-decisions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as settings_hypothesis
from hypothesis import strategies as st
from tests.support.counts import property_examples

from dra_operator.cluster import Change, ObjectKey, Store
from dra_operator.controllers.scheduler import (
    Placement,
    Scheduler,
    State,
    TaintedSlices,
    Unschedulable,
    WorkKey,
    decide_pod,
)
from dra_operator.model import (
    DeviceTaintRule,
    ResourceSlice,
    apply_taint_rules,
    parse_device_taint_rule,
)

from .builders import (
    DRIVER,
    NS,
    World,
    claim,
    device_class,
    new_state,
    node,
    pod,
    resource_slice,
    settings,
)


def rule(name: str, effect: str = "NoSchedule", **selector: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {
            "deviceSelector": {"driver": DRIVER, **selector},
            "taint": {"key": f"example.com/{name}", "value": "yes", "effect": effect},
        },
    }


def _rules(*raws: dict[str, Any]) -> Store[DeviceTaintRule]:
    store: Store[DeviceTaintRule] = Store(
        "DeviceTaintRule", lambda raw: parse_device_taint_rule(raw, "v1beta2")
    )
    for raw in raws:
        store.apply("ADDED", raw)
    return store


def _state(rules: Store[DeviceTaintRule] | None, *, devices: int = 2, **claims: Any) -> State:
    state = new_state()
    state.tainted = TaintedSlices(rules)
    state.classes.apply("ADDED", device_class())
    state.nodes.apply("ADDED", node("n1"))
    state.slices.apply("ADDED", resource_slice("n1", devices))
    for name, raw in claims.items():
        state.ledger.observe(state.claims.apply("ADDED", raw) or _never())
        state.pods.apply("ADDED", pod(f"p-{name}", claims=[name]))
    return state


def _never() -> Change[Any]:
    raise AssertionError("the claim was not added")


def _decide(state: State, claim_name: str) -> Placement | Unschedulable:
    entry = state.pods.get(ObjectKey(NS, f"p-{claim_name}"))
    assert entry is not None
    decision = decide_pod(entry.obj, state, settings())
    assert isinstance(decision, Placement | Unschedulable)
    return decision


def _devices(decision: Placement | Unschedulable) -> list[str]:
    assert isinstance(decision, Placement), decision
    return [
        r.device
        for write in decision.claims
        if write.allocation is not None
        for r in write.allocation.devices.results
    ]


@pytest.mark.parametrize(
    ("rules", "devices"),
    [
        pytest.param([rule("a", device="gpu-0")], ["gpu-1"], id="no-schedule-on-a-gives-b"),
        pytest.param([rule("a", "NoExecute", device="gpu-0")], ["gpu-1"], id="no-execute-on-a"),
        pytest.param([rule("a", "None", device="gpu-0")], ["gpu-0"], id="effect-none-blocks-not"),
        pytest.param([rule("a", pool="other")], ["gpu-0"], id="other-pool-selects-nothing"),
        pytest.param([], ["gpu-0"], id="no-rules"),
    ],
)
def test_rules_taint_the_devices_they_select(
    rules: list[dict[str, Any]], devices: list[str]
) -> None:
    state = _state(_rules(*rules), c=claim("c"))
    assert _devices(_decide(state, "c")) == devices


def test_rule_on_every_device_makes_the_pod_unschedulable_naming_the_taint() -> None:
    state = _state(_rules(rule("all")), c=claim("c"))
    decision = _decide(state, "c")
    assert isinstance(decision, Unschedulable)
    assert "2 with untolerated taint example.com/all=yes:NoSchedule" in decision.message


def test_without_a_rule_store_the_rules_are_not_in_effect() -> None:
    state = _state(None, c=claim("c"))
    assert not state.tainted.enabled
    assert _devices(_decide(state, "c")) == ["gpu-0"]


def test_allocated_device_tainted_by_a_rule_is_not_reserved_for_new_pods() -> None:
    raw = claim("shared")
    raw["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]
            }
        },
        "reservedFor": [{"resource": "pods", "name": "other", "uid": "other"}],
    }
    state = _state(_rules(rule("broken", "NoExecute", device="gpu-0")), shared=raw)
    decision = _decide(state, "shared")
    assert isinstance(decision, Unschedulable)
    assert f"device {DRIVER}/n1/gpu-0 has untolerated taint example.com/broken=yes:NoExecute" in (
        decision.message
    )


def _slice_entry(state: State) -> Any:
    (entry,) = list(state.slices)
    return entry


def test_a_patched_slice_is_derived_once_until_the_slice_or_a_rule_changes() -> None:
    rules = _rules(rule("a", device="gpu-0"))
    state = _state(rules)
    first = state.tainted.view(_slice_entry(state))
    assert state.tainted.view(_slice_entry(state)) is first
    assert [t.key for t in first.devices[0].taints] == ["example.com/a"]

    changed = resource_slice("n1", 3)
    changed["metadata"]["resourceVersion"] = "2"
    change = state.slices.apply("MODIFIED", changed)
    assert change is not None
    state.tainted.slice_changed(change)
    second = state.tainted.view(_slice_entry(state))
    assert second is not first and len(second.devices) == 3

    rules.apply("DELETED", rule("a"))
    state.tainted.rules_changed()
    third: ResourceSlice = state.tainted.view(_slice_entry(state))
    assert third is _slice_entry(state).obj  # no rule left: the slice as published


def test_rules_apply_in_name_order() -> None:
    state = _state(_rules(rule("b", device="gpu-0"), rule("a", device="gpu-0")))
    taints = state.tainted.view(_slice_entry(state)).devices[0].taints
    assert [t.key for t in taints] == ["example.com/a", "example.com/b"]


def _parked_scheduler(rules: Store[DeviceTaintRule] | None) -> Scheduler:
    state = _state(rules, c=claim("c"))
    scheduler = Scheduler(state, settings(), World())
    scheduler.unschedulable.add(WorkKey("pod", NS, "p-c"))
    return scheduler


@pytest.mark.parametrize(
    ("old", "new", "wakes"),
    [
        pytest.param(None, rule("a"), False, id="added"),
        pytest.param(rule("a"), None, True, id="removed"),
        pytest.param(rule("a"), rule("a", "None"), True, id="changed"),
    ],
)
def test_a_rule_removed_or_changed_wakes_parked_pods(
    old: dict[str, Any] | None, new: dict[str, Any] | None, wakes: bool
) -> None:
    async def run() -> int:
        scheduler = _parked_scheduler(_rules())
        scheduler.rule_changed(_change(old, new))
        return len(scheduler.controller.queue)

    assert asyncio.run(run()) == (1 if wakes else 0)


def test_a_rule_change_is_ignored_when_rules_are_not_in_effect() -> None:
    async def run() -> int:
        scheduler = _parked_scheduler(None)
        scheduler.rule_changed(_change(rule("a"), None))
        return len(scheduler.controller.queue)

    assert asyncio.run(run()) == 0


def _change(old: dict[str, Any] | None, new: dict[str, Any] | None) -> Change[DeviceTaintRule]:
    store = _rules()
    if old is not None:
        store.apply("ADDED", old)
    if new is None:
        assert old is not None
        change = store.apply("DELETED", old)
    else:
        new = {**new, "metadata": {**new["metadata"], "resourceVersion": "2"}}
        change = store.apply("MODIFIED", new)
    assert change is not None
    return change


_EVENTS = st.lists(
    st.one_of(
        st.tuples(st.just("slice"), st.integers(0, 2), st.integers(1, 3)),
        st.tuples(st.just("rule"), st.sampled_from("abc"), st.sampled_from(["gpu-0", "gpu-1", ""])),
        st.tuples(st.just("unrule"), st.sampled_from("abc"), st.just("")),
    ),
    max_size=12,
)


@given(_EVENTS)
@settings_hypothesis(max_examples=property_examples(60), deadline=None)
def test_the_view_always_equals_patching_afresh(events: list[tuple[str, Any, Any]]) -> None:
    """Whatever the order of slice and rule changes, the memo never serves a stale copy."""
    rules = _rules()
    state = new_state()
    state.tainted = TaintedSlices(rules)
    for version, (kind, first, second) in enumerate(events, start=2):
        if kind == "slice":
            raw = resource_slice(f"n{first}", second)
            raw["metadata"]["resourceVersion"] = str(version)
            change = state.slices.apply("MODIFIED", raw)
            assert change is not None
            state.tainted.slice_changed(change)
        else:
            raw = rule(first, **({"device": second} if second else {}))
            raw["metadata"]["resourceVersion"] = str(version)
            if rules.apply("DELETED" if kind == "unrule" else "MODIFIED", raw) is not None:
                state.tainted.rules_changed()
        ordered = sorted((e.obj for e in rules), key=lambda r: r.metadata.name)
        for entry in state.slices:
            assert state.tainted.view(entry) == apply_taint_rules([entry.obj], ordered)[0]
