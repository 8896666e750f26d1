"""Consumable capacity: request policies, shares of multi-allocatable devices, gating.

Upstream's consumable-capacity-* and allow-multiple-allocations-* families, plus the policy
arithmetic of `CmpRequestOverCapacity` and `calculateConsumedCapacity` as unit tables.
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
    prioritized,
    q,
    range_capacity,
    request,
    result,
    slice_with_devices,
    sub_request,
    values_capacity,
)

from dra_operator.allocator import Ledger
from dra_operator.allocator._capacity import consumed_amount, fits_capacity, violates_policy
from dra_operator.model import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    DeviceCapacity,
    DeviceID,
    FrozenMap,
)

A = "driver-a"
MULTI = device_class("class-a", A, multi=True)
DEDICATED = device_class("class-a", A, multi=False)
CC = Features(consumable_capacity=True, prioritized_list=True)
LOCAL = local_node_selector()
CAP = "capacity-0"
HUGE = "1000000000000000000000"  # beyond int64: the 1.37 harness checks inputs stay unchanged


def shared(name: str, cap: DeviceCapacity | str | None = None, **kw: object):
    capacity = {CAP: cap} if cap is not None else None
    return device(name, multi=True, capacity=capacity, **kw)  # type: ignore[arg-type]


def one_slice(*devices):
    return [slice_with_devices("slice-1", NODE1, "pool-1", A, *devices)]


def in_use(device_name: str, amount: str) -> Ledger:
    return Ledger(
        consumed_capacity=FrozenMap(
            {DeviceID(A, "pool-1", device_name): FrozenMap({f"{A}/{CAP}": q(amount)})}
        )
    )


def req(name: str = "req-0", amount: str | None = None):
    return request(name, "class-a", capacity={CAP: amount} if amount is not None else None)


ALL_IN_USE_INSUFFICIENT = Case(
    claims=[claim("claim-0", all_request("req-0", "class-a", capacity={CAP: "2"}))],
    classes=[MULTI],
    features=CC,
    slices=one_slice(
        shared("device-1", range_capacity("4")), shared("device-2", range_capacity("4"))
    ),
    ledger=in_use("device-1", "4"),
)

SCENARIOS = [
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"))],
            classes=[MULTI],
            features=Features(device_binding_and_status=True),
            slices=one_slice(shared("device-1", "2")),
            error=(
                "claim claim-0, request req-0: has capacity requests, "
                "but the DRAConsumableCapacity feature is disabled"
            ),
        ),
        id="consumable-capacity-disabled-feature",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized("req-0", sub_request("subReq-0", "class-a", capacity={CAP: "1"})),
                )
            ],
            classes=[MULTI],
            features=Features(prioritized_list=True, device_binding_and_status=True),
            slices=one_slice(shared("device-1", "2")),
            error=(
                "claim claim-0, subrequest subReq-0: has capacity requests, "
                "but the DRAConsumableCapacity feature is disabled"
            ),
        ),
        id="consumable-capacity-disabled-feature-with-prioritized-list",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req())],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1")),
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1", share=True))],
        ),
        id="consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1")),
        ),
        id="consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req())],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", "2")),
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP: "2"})
                )
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req()), claim("claim-1", req())],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", "2")),
        ),
        id="consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", "2")),
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP: "1"})
                )
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req())],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", range_capacity("4"))),
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP: "2"})
                )
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="3"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", range_capacity("4"))),
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP: "4"})
                )
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-with-range-policy-step",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="2"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", values_capacity("3", "1", "3"))),
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP: "3"})
                )
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="5"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", range_capacity("8"))),
        ),
        id="consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="5"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", "4")),
        ),
        id="consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="2"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", range_capacity("4"))),
            ledger=in_use("device-1", "2"),
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP: "2"})
                )
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="4"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(
                shared("device-1", range_capacity("4")), shared("device-2", range_capacity("4"))
            ),
            ledger=in_use("device-1", "2"),
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-2", share=True, consumed={CAP: "4"})
                )
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="2"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", range_capacity("4"))),
            ledger=in_use("device-1", "4"),
        ),
        id="consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req("req-0", "2"), req("req-1", "4"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(
                shared("device-1", range_capacity("4")), shared("device-2", range_capacity("4"))
            ),
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP: "2"}),
                    result("req-1", A, "pool-1", "device-2", share=True, consumed={CAP: "4"}),
                )
            ],
        ),
        id="consumable-capacity-with-multi-allocatable-device-backtrack",
    ),
    pytest.param(
        replace(
            ALL_IN_USE_INSUFFICIENT,
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-2", share=True, consumed={CAP: "2"})
                )
            ],
            releases=(36,),
        ),
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient",
    ),
    pytest.param(
        # 1.37 (#140769): device-1 lacks the remaining capacity, so All fails as a whole
        replace(ALL_IN_USE_INSUFFICIENT, expect=None, releases=(37,)),
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient/1.37",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req("req-0", "2"), req("req-1", HUGE))],
            classes=[MULTI],
            features=Features(consumable_capacity=True),
            slices=one_slice(
                shared(
                    "device-1",
                    DeviceCapacity(
                        value=q("1000000000000000000002"),
                        request_policy=CapacityRequestPolicy(
                            default=q(HUGE), valid_range=CapacityRequestPolicyRange(min=q("2"))
                        ),
                    ),
                )
            ),
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP: "2"}),
                    result("req-1", A, "pool-1", "device-1", share=True, consumed={CAP: HUGE}),
                )
            ],
            releases=(37,),
        ),
        id="consumable-capacity-requests-are-not-modified",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"))],
            classes=[DEDICATED],
            features=CC,
            slices=one_slice(device("device-1", capacity={CAP: "1"})),
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="consumable-capacity-dedicated-device-with-consumable-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", range_capacity("2"))),
            ledger=Ledger(exclusive=frozenset({DeviceID(A, "pool-1", "device-1")})),
        ),
        id="allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"))],
            classes=[DEDICATED],
            features=CC,
            slices=one_slice(device("device-1", multi=True, capacity={CAP: "2"})),
        ),
        id="allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)


@pytest.mark.parametrize(
    ("requested", "capacity", "expected"),
    [
        pytest.param(None, DeviceCapacity(value=q(8)), "8", id="nothing-requested-takes-all"),
        pytest.param(None, range_capacity("8"), "2", id="nothing-requested-takes-default"),
        pytest.param("3", DeviceCapacity(value=q(8)), "3", id="no-policy-takes-request"),
        pytest.param("1", range_capacity("8"), "2", id="below-min-rounds-to-min"),
        pytest.param("3", range_capacity("8"), "4", id="rounds-up-to-step"),
        pytest.param(
            "5Gi",
            range_capacity("8Gi", default="1Gi", low="1Gi", step="2Gi", high="8Gi"),
            "5Gi",
            id="on-step",
        ),
        pytest.param("2", values_capacity("8", "1", "4", "8"), "4", id="smallest-valid-value"),
        pytest.param("9", values_capacity("8", "1", "4", "8"), "9", id="above-all-valid-values"),
    ],
)
def test_consumed_amount(requested: str | None, capacity: DeviceCapacity, expected: str) -> None:
    assert consumed_amount(q(requested) if requested else None, capacity) == q(expected)


def test_violations() -> None:
    policy = range_capacity("8").request_policy
    assert not violates_policy(q(4), policy)
    assert violates_policy(q(6), policy)  # above max
    assert violates_policy(q(3), policy)  # off step
    assert not violates_policy(q(1), values_capacity("8", "1", "4").request_policy)
    assert violates_policy(q(2), values_capacity("8", "1", "4").request_policy)


def test_unknown_capacity_makes_the_device_unusable() -> None:
    capacities = {f"{A}/{CAP}": DeviceCapacity(value=q(4))}
    assert fits_capacity(None, {f"{A}/other": q(1)}, capacities, None) is None
    assert fits_capacity({f"{A}/{CAP}": q(3)}, {f"{A}/{CAP}": q(1)}, capacities, None) is True
    assert (
        fits_capacity({f"{A}/{CAP}": q(3)}, {f"{A}/{CAP}": q(1)}, capacities, {f"{A}/{CAP}": q(1)})
        is False
    )


def test_each_share_gets_a_fresh_share_id() -> None:
    from allocator_builders import fake_selectors, node

    from dra_operator.allocator import allocate

    ids = iter(["share-1", "share-2"])
    got = allocate(
        [claim("claim-0", req(amount="1")), claim("claim-1", req(amount="1"))],
        classes=[MULTI],
        slices=one_slice(shared("device-1", "2")),
        node=node(),
        features=CC,
        selectors=fake_selectors,
        new_share_id=lambda: next(ids),
    )
    assert got.results is not None
    assert [a.devices.results[0].share_id for a in got.results] == ["share-1", "share-2"]


def test_stable_tier_ignores_capacity_requests() -> None:
    """Without consumable capacity and binding conditions upstream runs its "stable" allocator."""
    check(
        Case(
            claims=[claim("claim-0", req(amount="1"))],
            classes=[DEDICATED],
            features=Features(),
            slices=one_slice(device("device-1", capacity={CAP: "1"})),
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        )
    )
