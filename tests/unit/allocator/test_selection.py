"""SelectionMemo: selector outcomes kept across calls never change an answer, and spare work.

* over generated scenarios, one memo shared by every call gives the same allocation, the same
  explanation and the same fatal error as no memo;
* a second call over the same device objects evaluates no selector; new device objects (a
  slice update) are evaluated again; other features or another evaluator start afresh.
"""

from __future__ import annotations

from collections import Counter

from allocator_builders import (
    NODE1,
    V136,
    claim,
    device,
    device_class,
    fake_selectors,
    node,
    request,
    slice_with_devices,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scenario_gen import Scenario, generate
from tests.support.counts import property_examples

from dra_operator.allocator import (
    Allocation,
    Budget,
    Features,
    Ledger,
    SelectionMemo,
    allocate,
)
from dra_operator.errors import AllocationInputError
from dra_operator.model import Device, ResourceSlice

SHARED = SelectionMemo()  # across hypothesis examples on purpose: scenarios reuse no objects


def _attempt(s: Scenario, selection: SelectionMemo | None) -> Allocation | str:
    try:
        return allocate(
            s.claims,
            classes=s.classes,
            slices=s.slices,
            node=s.node,
            features=s.features,
            selectors=fake_selectors,
            ledger=Ledger.from_claims(
                s.allocated, consumable_capacity=s.features.consumable_capacity
            ),
            budget=Budget(max_steps=200_000, timeout=None),
            new_share_id=lambda: "share",
            selection=selection,
        )
    except AllocationInputError as err:
        return str(err)


@settings(
    max_examples=property_examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(seed=st.integers(min_value=0, max_value=10**9))
def test_a_shared_memo_never_changes_the_answer(seed: int) -> None:
    s = generate(seed)
    plain = _attempt(s, None)
    assert _attempt(s, SHARED) == plain
    assert _attempt(s, SHARED) == plain  # now answered from the memo


class _Counting:
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __call__(self, expression: str, driver: str, device: Device, /) -> bool:
        self.calls[device.name] += 1
        return fake_selectors(expression, driver, device)


def _slice() -> ResourceSlice:
    return slice_with_devices(
        "slice-1", NODE1, "pool-1", "driver-a", device("device-1"), device("device-2")
    )


def _allocate(
    piece: ResourceSlice, evaluate: _Counting, memo: SelectionMemo, features: Features = V136
) -> Allocation:
    return allocate(
        [claim("claim-1", request("req-1", "class-a", 2))],
        classes=[device_class("class-a", "driver-a")],
        slices=[piece],
        node=node(),
        features=features,
        selectors=evaluate,
        selection=memo,
    )


def test_the_same_device_objects_are_evaluated_once_across_calls() -> None:
    evaluate, memo, piece = _Counting(), SelectionMemo(), _slice()
    first = _allocate(piece, evaluate, memo)
    second = _allocate(piece, evaluate, memo)
    assert first.results == second.results
    assert first.is_allocated
    assert evaluate.calls == Counter({"device-1": 1, "device-2": 1})


def test_new_device_objects_are_evaluated_again() -> None:
    evaluate, memo = _Counting(), SelectionMemo()
    _allocate(_slice(), evaluate, memo)
    _allocate(_slice(), evaluate, memo)  # equal, but parsed anew (a slice update)
    assert evaluate.calls == Counter({"device-1": 2, "device-2": 2})


def test_other_features_or_another_evaluator_start_afresh() -> None:
    memo, piece = SelectionMemo(), _slice()
    evaluate = _Counting()
    _allocate(piece, evaluate, memo)
    _allocate(piece, evaluate, memo, Features.everything())
    other = _Counting()
    _allocate(piece, other, memo, Features.everything())
    assert evaluate.calls == Counter({"device-1": 2, "device-2": 2})
    assert other.calls == Counter({"device-1": 1, "device-2": 1})


def test_a_full_memo_starts_over() -> None:
    evaluate, memo, piece = _Counting(), SelectionMemo(max_entries=1), _slice()
    _allocate(piece, evaluate, memo)
    _allocate(piece, evaluate, memo)
    assert evaluate.calls == Counter({"device-1": 2, "device-2": 2})
