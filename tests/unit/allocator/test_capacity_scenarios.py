"""Upstream's remaining consumable-capacity scenarios: `All` mode, zero policies, mixes.

`All` with a capacity request takes every selected device that can still serve the request
(checked when the request is prepared, against what is in use) and needs all of them while
searching; shares of multi-allocatable devices still count toward shared counters, across
scheduling cycles too.
"""

from __future__ import annotations

import pytest
from allocator_builders import (
    NODE1,
    SHARE_ID,
    Case,
    Features,
    all_request,
    allocation,
    check,
    claim,
    consumes,
    counter_set,
    device,
    device_class,
    local_node_selector,
    pool,
    prioritized,
    q,
    range_capacity,
    request,
    result,
    slice_with_devices,
    sub_request,
    values_capacity,
)

from dra_operator.allocator import Ledger, SharedDeviceID
from dra_operator.model import DeviceCapacity, DeviceID, FrozenMap

A = "driver-a"
MULTI = device_class("class-a", A, multi=True)
PLAIN = device_class("class-a", A)
CC = Features(consumable_capacity=True)
MIXED = Features(prioritized_list=True, partitionable_devices=True, consumable_capacity=True)
LOCAL = local_node_selector()
CAP, CAP1 = "capacity-0", "capacity-1"


def shared(name: str, capacity: dict[str, DeviceCapacity | str] | None = None, **kw: object):
    return device(name, multi=True, capacity=capacity, **kw)  # type: ignore[arg-type]


def one_slice(*devices):
    return [slice_with_devices("slice-1", NODE1, "pool-1", A, *devices)]


def req(name: str = "req-0", amount: str | None = None, *selectors: str):
    return request(name, "class-a", 1, *selectors, capacity={CAP: amount} if amount else None)


def every(name: str = "req-0", amount: str = "1"):
    return all_request(name, "class-a", capacity={CAP: amount})


def share(request_name: str, device_name: str, **consumed: str):
    return result(request_name, A, "pool-1", device_name, share=True, consumed=consumed)


def cap(amount: str) -> dict[str, str]:
    return {CAP: amount}


def in_use(device_name: str, amount: str) -> Ledger:
    return Ledger(
        consumed_capacity=FrozenMap(
            {DeviceID(A, "pool-1", device_name): FrozenMap({f"{A}/{CAP}": q(amount)})}
        )
    )


def from_counters(name: str, *consumption, **kw: object):
    """A device whose capacities are the counters it consumes (upstream: fromCounters)."""
    capacity: dict[str, DeviceCapacity | str] = {
        k: str(v) for c in consumption for k, v in c.counters.items()
    }
    capacity.update(kw.pop("capacity", {}))  # type: ignore[call-overload]
    return shared(name, capacity, consumes=consumption, **kw)


def with_counters(*devices, sets):
    return [
        slice_with_devices("slice-1", NODE1, pool("pool-1", 2), A, *devices),
        slice_with_devices("slice-2", NODE1, pool("pool-1", 2), A, counters=sets),
    ]


def mem(gi: int) -> str:
    return f'device.capacity["{A}"].memory.compareTo(quantity("{gi}Gi")) >= 0'


def cap0(amount: int) -> str:
    return f'device.capacity["{A}"]["{CAP}"].compareTo(quantity("{amount}")) >= 0'


SCENARIOS = [
    pytest.param(
        Case(
            claims=[claim("claim-0", every())],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", {CAP1: "1"})),
        ),
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req()), claim("claim-1", req())],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", {CAP: values_capacity("1", "0")})),
            expect=[
                allocation(LOCAL, share("req-0", "device-1", **cap("0"))),
                allocation(LOCAL, share("req-0", "device-1", **cap("0"))),
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-with-zero-request-policy",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", {CAP: values_capacity("1", "0")})),
        ),
        id="consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1")), claim("claim-1", req(amount="1"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", {CAP: range_capacity("4")})),
            expect=[
                allocation(LOCAL, share("req-0", "device-1", **cap("2"))),
                allocation(LOCAL, share("req-0", "device-1", **cap("2"))),
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="2"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", {CAP: values_capacity("4", "1", "2")})),
            expect=[allocation(LOCAL, share("req-0", "device-1", **cap("2")))],
        ),
        id="consumable-capacity-multi-allocatable-device-with-valid-values-policy",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", capacity=cap("4")),
                        sub_request("subReq-1", "class-a", capacity=cap("2")),
                        sub_request("subReq-1", "class-a"),
                    ),
                )
            ],
            classes=[MULTI],
            features=Features(consumable_capacity=True, prioritized_list=True),
            slices=one_slice(shared("device-1", {CAP: range_capacity("2")})),
            expect=[allocation(LOCAL, share("req-0/subReq-1", "device-1", **cap("2")))],
        ),
        id="consumable-capacity-multi-allocatable-device-with-subrequest",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", every(amount="2"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", cap("2")), shared("device-2")),
            expect=[allocation(LOCAL, share("req-0", "device-1", **cap("2")))],
        ),
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", every(amount="2"))],
            classes=[MULTI],
            features=CC,
            slices=one_slice(shared("device-1", cap("2")), shared("device-2", cap("1"))),
            expect=[allocation(LOCAL, share("req-0", "device-1", **cap("2")))],
        ),
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"), every("req-1"))],
            classes=[PLAIN],
            features=CC,
            slices=one_slice(shared("device-1", cap("2")), shared("device-2", cap("1"))),
            expect=[
                allocation(
                    LOCAL,
                    share("req-0", "device-1", **cap("1")),
                    share("req-1", "device-1", **cap("1")),
                    share("req-1", "device-2", **cap("1")),
                )
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", every())],
            classes=[PLAIN],
            features=CC,
            ledger=in_use("device-1", "1"),
            slices=one_slice(shared("device-1", cap("2")), shared("device-2", cap("1"))),
            expect=[
                allocation(
                    LOCAL,
                    share("req-0", "device-1", **cap("1")),
                    share("req-0", "device-2", **cap("1")),
                )
            ],
        ),
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"), every("req-1"))],
            classes=[PLAIN],
            features=CC,
            slices=one_slice(shared("device-1", cap("1")), shared("device-2", cap("1"))),
        ),
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1")), claim("claim-1", req(amount="1"))],
            classes=[device_class("class-a", A, multi=False)],
            features=CC,
            slices=one_slice(device("device-1", capacity={CAP: range_capacity("2")})),
        ),
        id="consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", req(amount="1"))],
            classes=[MULTI],
            features=CC,
            ledger=in_use("device-1", "1"),
            slices=one_slice(device("device-1", capacity={CAP: range_capacity("2")})),
        ),
        id="allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a"),
                    prioritized(
                        "req-1",
                        sub_request("subReq-0", "class-a", 1, mem(6)),
                        sub_request("subReq-1", "class-a", 1, mem(4)),
                    ),
                )
            ],
            classes=[MULTI],
            features=MIXED,
            slices=with_counters(
                from_counters("device-1", consumes("counter-set-1", memory="4Gi")),
                from_counters("device-2", consumes("counter-set-1", memory="6Gi")),
                from_counters("device-3", consumes("counter-set-1", memory="4Gi")),
                sets=[counter_set("counter-set-1", memory="8Gi")],
            ),
            expect=[
                allocation(
                    LOCAL,
                    share("req-0", "device-1", memory="4Gi"),
                    share("req-1/subReq-1", "device-3", memory="4Gi"),
                )
            ],
        ),
        id="allow-multiple-allocations-with-partitionable-device",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    req(
                        "req-0",
                        "1",
                        f'device.attributes["{A}"].mode == "b"',
                    ),
                )
            ],
            classes=[MULTI],
            features=Features(partitionable_devices=True, consumable_capacity=True),
            ledger=Ledger(
                shares=frozenset({SharedDeviceID(DeviceID(A, "pool-1", "device-1"), SHARE_ID)}),
                consumed_capacity=in_use("device-1", "1").consumed_capacity,
            ),
            slices=with_counters(
                from_counters(
                    "device-1", consumes("counter-set-1", **cap("1")), attributes={"mode": "a"}
                ),
                from_counters(
                    "device-2", consumes("counter-set-1", **cap("1")), attributes={"mode": "b"}
                ),
                sets=[counter_set("counter-set-1", **cap("1"))],
            ),
        ),
        id="allow-multiple-allocations-with-shared-device-counter-cross-cycle",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    req("req-0", "1"),
                    req("req-2", "2"),
                    prioritized(
                        "req-1",
                        sub_request("subReq-0", "class-a", 1, cap0(4), capacity=cap("1")),
                        sub_request("subReq-1", "class-a", 1, cap0(2), capacity=cap("1")),
                    ),
                )
            ],
            classes=[PLAIN],
            features=MIXED,
            slices=with_counters(
                *(
                    from_counters(
                        name,
                        consumes("counter-set-1", **cap(amount)),
                        consumes("counter-set-2", **{CAP1: "4"}),
                        capacity={CAP1: range_capacity("4")},
                    )
                    for name, amount in (("device-1", "2"), ("device-2", "4"), ("device-3", "2"))
                ),
                sets=[
                    counter_set("counter-set-1", **cap("4")),
                    counter_set("counter-set-2", **{CAP1: "8"}),
                ],
            ),
            expect=[
                allocation(
                    LOCAL,
                    share("req-0", "device-1", **{CAP: "1", CAP1: "2"}),
                    share("req-2", "device-3", **{CAP: "2", CAP1: "2"}),
                    share("req-1/subReq-1", "device-1", **{CAP: "1", CAP1: "2"}),
                )
            ],
        ),
        id="consumable-capacity-with-partitionable-device-multiple-capacity-pools",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)
