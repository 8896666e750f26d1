"""1.37's capacity arithmetic: rounding in the step's format, DRAFractionalCapacityRange,
and the fail-closed errors that abort an allocation instead of skipping a device.

Upstream's consumable-capacity-fractional-range-* and consumable-capacity-*-aborts /
*-rejected scenarios of v0.37.2 (1.37 only), plus the arithmetic as unit tables.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from allocator_builders import (
    NODE1,
    Case,
    Features,
    all_request,
    allocation,
    check,
    claim,
    device,
    device_class,
    local_node_selector,
    q,
    range_capacity,
    request,
    result,
    slice_with_devices,
)

from dra_operator.allocator._capacity import (
    Arithmetic,
    CapacityError,
    consumed_amount,
    violates_policy,
)
from dra_operator.model import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    DeviceCapacity,
    Quantity,
    QuantityFormat,
)

A = "driver-a"
MULTI = device_class("class-a", A, multi=True)
CC = Features(consumable_capacity=True, release=37)
FRACTIONAL = Features(consumable_capacity=True, fractional_capacity_range=True, release=37)
LOCAL = local_node_selector()
CAP = "capacity-0"
ABOVE_INT64 = "18446744073709551616"  # 2^64
MAX_INT64 = "9223372036854775807"
NEW = Arithmetic(since_137=True)
MILLI = Arithmetic(since_137=True, fractional=True)


def fractional_range(value: str) -> DeviceCapacity:
    """upstream's withFractionalCapacityRequestPolicyRange: min 200m, step 100m, max 1."""
    return DeviceCapacity(
        value=q(value),
        request_policy=CapacityRequestPolicy(
            default=q("200m"),
            valid_range=CapacityRequestPolicyRange(min=q("200m"), step=q("100m"), max=q("1")),
        ),
    )


def shared(name: str, capacity: DeviceCapacity | str) -> object:
    return device(name, multi=True, capacity={CAP: capacity})


def one_slice(*devices):
    return [slice_with_devices("slice-1", NODE1, "pool-1", A, *devices)]


def req(amount: str):
    return request("req-0", "class-a", capacity={CAP: amount})


def share(amount: str):
    return result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP: amount})


SCENARIOS = [
    pytest.param(
        Case(
            claims=[claim("claim-0", req("200m"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", fractional_range("1"))),
            expect=[allocation(LOCAL, share("1"))],
            releases=(37,),
        ),
        id="consumable-capacity-fractional-range-gate-disabled",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req("250m"))],
            classes=[MULTI],
            features=FRACTIONAL,
            slices=one_slice(shared("device-1", fractional_range("1"))),
            expect=[allocation(LOCAL, share("300m"))],
            releases=(37,),
        ),
        id="consumable-capacity-fractional-range-gate-enabled-round-up",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(ABOVE_INT64))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", range_capacity("4"))),
            error="cannot be represented",
            releases=(37,),
        ),
        id="consumable-capacity-range-policy-request-above-int64-rejected",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(MAX_INT64))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", range_capacity("4"))),
            error="cannot be represented",
            releases=(37,),
        ),
        id="consumable-capacity-range-policy-rounded-value-overflow-rejected",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(ABOVE_INT64))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(
                shared("device-1", range_capacity("4")),
                shared("device-2", "36893488147419103232"),
            ),
            error="cannot be represented",
            releases=(37,),
        ),
        id="consumable-capacity-range-policy-overflow-aborts-not-skip",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", all_request("req-0", "class-a", capacity={CAP: ABOVE_INT64}))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", range_capacity("4"))),
            error="cannot be represented",
            releases=(37,),
        ),
        id="consumable-capacity-range-policy-allocation-mode-all-overflow-aborts",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req("-5"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", "10")),
            error="negative",
            releases=(37,),
        ),
        id="consumable-capacity-negative-request-aborts",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)


def test_the_fail_closed_errors_name_claim_request_device_and_capacity() -> None:
    texts = {
        "request-above-int64": (
            "claim claim-0, request req-0: checking capacity for device driver-a/pool-1/device-1:"
            ' capacity "capacity-0": capacity request cannot be represented in the device\'s'
            f" range arithmetic: request {ABOVE_INT64} exceeds MaxInt64"
        ),
        "all": (
            "claim claim-0, request req-0: checking capacity for device device-1:"
            ' capacity "capacity-0": capacity request cannot be represented'
        ),
        "negative": (
            "claim claim-0, request req-0: checking capacity for device driver-a/pool-1/device-1:"
            ' capacity "capacity-0": capacity value is negative'
        ),
    }
    cases = {p.id: p.values[0] for p in SCENARIOS}
    for name, case in (
        ("request-above-int64", "consumable-capacity-range-policy-request-above-int64-rejected"),
        ("all", "consumable-capacity-range-policy-allocation-mode-all-overflow-aborts"),
        ("negative", "consumable-capacity-negative-request-aborts"),
    ):
        check(replace(cases[case], error=texts[name]))  # type: ignore[arg-type]


def test_136_rounds_on_without_failing() -> None:
    """v0.36.5 has none of this: a request above int64 on a step range rounds and fits nothing."""
    check(
        Case(
            claims=[claim("claim-0", req(ABOVE_INT64))],
            classes=[MULTI],
            features=Features(consumable_capacity=True),
            slices=one_slice(shared("device-1", range_capacity("4"))),
            releases=(36,),
        )
    )


@pytest.mark.parametrize(
    ("requested", "capacity", "rules", "expected", "fmt"),
    [
        pytest.param("3", range_capacity("8"), NEW, "4", QuantityFormat.DECIMAL_SI, id="step"),
        pytest.param(
            "3Ki",
            range_capacity("8Ki", default="1Ki", low="1Ki", step="1Ki", high="8Ki"),
            NEW,
            "3Ki",
            QuantityFormat.BINARY_SI,
            id="binary-step-keeps-its-format",
        ),
        pytest.param("200m", fractional_range("1"), NEW, "1", QuantityFormat.DECIMAL_SI, id="int"),
        pytest.param("250m", fractional_range("1"), MILLI, "300m", QuantityFormat.DECIMAL_SI),
        pytest.param("900m", fractional_range("1"), MILLI, "900m", QuantityFormat.DECIMAL_SI),
        pytest.param("1", fractional_range("1"), MILLI, "1", QuantityFormat.DECIMAL_SI),
        pytest.param("100m", fractional_range("1"), MILLI, "200m", QuantityFormat.DECIMAL_SI),
    ],
)
def test_round_up_137(
    requested: str, capacity: DeviceCapacity, rules: Arithmetic, expected: str, fmt: QuantityFormat
) -> None:
    got = consumed_amount(q(requested), capacity, rules, f"{A}/{CAP}")
    assert got == q(expected)
    assert got.format is fmt
    assert str(got) == expected


def test_milli_path_refuses_a_request_finer_than_milli() -> None:
    with pytest.raises(CapacityError, match="250100u is not a representable milli value"):
        consumed_amount(q("250100u"), fractional_range("1"), MILLI, f"{A}/{CAP}")


def test_milli_path_is_not_used_for_a_step_below_one_milli() -> None:
    capacity = DeviceCapacity(
        value=q("1"),
        request_policy=CapacityRequestPolicy(
            valid_range=CapacityRequestPolicyRange(min=q("0"), step=q("500u"))
        ),
    )
    got = consumed_amount(q("250m"), capacity, MILLI, f"{A}/{CAP}")
    assert got == q("1")  # integer path: Value() of 500u is 1


def test_violations_on_the_milli_path() -> None:
    policy = fractional_range("1").request_policy
    assert not violates_policy(q("300m"), policy, MILLI)
    assert violates_policy(q("350m"), policy, MILLI)  # off step
    assert not violates_policy(q("350m"), policy, NEW)  # integer path: 1 - 1 is on step
    assert violates_policy(Quantity(2), policy, MILLI)  # above max
