"""DRADeviceCompatibilityGroups switched on (1.37 alpha, KEP-5963).

Upstream's compatibility-groups-* scenarios of v0.37.2 with the gate on (the two "disabled"
ones are in test_counter_scenarios), and the intersection states as a unit table.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from allocator_builders import (
    NODE1,
    Case,
    Features,
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
    request,
    result,
    slice_with_devices,
    sub_request,
    taint,
)

from dra_operator.allocator import Ledger
from dra_operator.allocator._groups import NO_GROUPS, add, admits
from dra_operator.model import DeviceCounterConsumption, DeviceID, FrozenMap

A = "driver-a"
CLASS_A = [device_class("class-a", A)]
MULTI_A = [device_class("class-a", A, multi=True)]
LOCAL = local_node_selector()
CAP0 = "capacity-0"
GROUPS = Features(partitionable_devices=True, compatibility_groups=True, release=37)


def uses(counter_set_name: str, amount: str, *groups: str) -> DeviceCounterConsumption:
    """upstream's deviceCounterConsumptionWithGroups."""
    return replace(consumes(counter_set_name, **{CAP0: amount}), compatibility_groups=groups)


def grouped(name: str, *consumption: DeviceCounterConsumption, **kw: object):
    return device(name, consumes=consumption, **kw)  # type: ignore[arg-type]


def pool_1(*devices, sets=("counter-set-1",)):
    """Devices in slice-1 and the counter sets (capacity-0: 4 each) in slice-2 of pool-1."""
    return [
        slice_with_devices("slice-1", NODE1, pool("pool-1", 2), A, *devices),
        slice_with_devices(
            "slice-2",
            NODE1,
            pool("pool-1", 2),
            A,
            counters=[counter_set(name, **{CAP0: "4"}) for name in sets],
        ),
    ]


def picked(*rows: tuple[str, str]):
    return [allocation(LOCAL, *(result(r, A, "pool-1", d) for r, d in rows))]


def two_requests() -> object:
    return claim("claim-0", request("req-0", "class-a"), request("req-1", "class-a"))


def one_request(name: str = "claim-0") -> object:
    return claim(name, request("req-0", "class-a"))


ALLOCATED_1 = Ledger(exclusive=frozenset({DeviceID(A, "pool-1", "device-1")}))

SCENARIOS = [
    pytest.param(
        Case(
            claims=[two_requests()],
            classes=CLASS_A,
            features=GROUPS,
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "2", "mig")),
                grouped("device-2", uses("counter-set-1", "2", "mig")),
            ),
            expect=picked(("req-0", "device-1"), ("req-1", "device-2")),
            releases=(37,),
        ),
        id="compatibility-groups-compatible",
    ),
    pytest.param(
        Case(
            claims=[two_requests()],
            classes=CLASS_A,
            features=GROUPS,
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "2", "mig")),
                grouped("device-2", uses("counter-set-1", "2", "vgpu")),
            ),
            releases=(37,),
        ),
        id="compatibility-groups-incompatible",
    ),
    pytest.param(
        Case(
            claims=[one_request()],
            classes=CLASS_A,
            features=Features(
                partitionable_devices=True,
                compatibility_groups=True,
                device_taints=True,
                release=37,
            ),
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "2", "mig"), taints=[taint("k", "v")]),
                grouped("device-2", uses("counter-set-1", "2", "vgpu")),
            ),
            expect=picked(("req-0", "device-2")),
            releases=(37,),
        ),
        id="compatibility-groups-taint-rollback",
    ),
    pytest.param(
        Case(
            claims=[one_request()],
            classes=CLASS_A,
            features=GROUPS,
            ledger=ALLOCATED_1,
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "1", "mig")),
                grouped("device-2", uses("counter-set-1", "1", "vgpu")),
            ),
            releases=(37,),
        ),
        id="compatibility-groups-incompatible-with-allocated-peer",
    ),
    pytest.param(
        Case(
            claims=[one_request()],
            classes=CLASS_A,
            features=GROUPS,
            ledger=ALLOCATED_1,
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "1", "mig")),
                grouped("device-2", uses("counter-set-1", "1", "mig")),
            ),
            expect=picked(("req-0", "device-2")),
            releases=(37,),
        ),
        id="compatibility-groups-compatible-with-allocated-peer",
    ),
    pytest.param(
        Case(
            claims=[two_requests()],
            classes=CLASS_A,
            features=GROUPS,
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "2", "mig")),
                grouped("device-2", uses("counter-set-2", "2", "vgpu")),
                sets=("counter-set-1", "counter-set-2"),
            ),
            expect=picked(("req-0", "device-1"), ("req-1", "device-2")),
            releases=(37,),
        ),
        id="compatibility-groups-multiple-counter-sets",
    ),
    pytest.param(
        Case(
            claims=[two_requests()],
            classes=CLASS_A,
            features=GROUPS,
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "1", "mig")),
                grouped(
                    "device-2",
                    uses("counter-set-1", "1", "vgpu"),
                    uses("counter-set-2", "1", "vgpu"),
                ),
                sets=("counter-set-1", "counter-set-2"),
            ),
            releases=(37,),
        ),
        id="compatibility-groups-multiple-counter-sets-spanning-device",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a"),
                    prioritized(
                        "req-1",
                        sub_request("subReq-0", "class-a", 2),
                        sub_request("subReq-1", "class-a", 1),
                    ),
                )
            ],
            classes=CLASS_A,
            features=Features(
                partitionable_devices=True,
                compatibility_groups=True,
                prioritized_list=True,
                release=37,
            ),
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "1", "mig")),
                grouped("device-2", uses("counter-set-1", "1", "mig")),
                grouped("device-3", uses("counter-set-1", "1", "vgpu")),
            ),
            expect=picked(("req-0", "device-1"), ("req-1/subReq-1", "device-2")),
            releases=(37,),
        ),
        id="compatibility-groups-with-prioritized-list",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a", capacity={CAP0: "1"}),
                    request("req-1", "class-a", capacity={CAP0: "1"}),
                )
            ],
            classes=MULTI_A,
            features=Features(
                partitionable_devices=True,
                compatibility_groups=True,
                consumable_capacity=True,
                release=37,
            ),
            slices=pool_1(
                *(
                    grouped(
                        name,
                        uses("counter-set-1", "1", group),
                        capacity={CAP0: "1"},
                        multi=True,
                    )
                    for name, group in (
                        ("device-1", "mig"),
                        ("device-2", "vgpu"),
                        ("device-3", "mig"),
                    )
                )
            ),
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP0: "1"}),
                    result("req-1", A, "pool-1", "device-3", share=True, consumed={CAP0: "1"}),
                )
            ],
            releases=(37,),
        ),
        id="compatibility-groups-with-consumable-capacity",
    ),
    pytest.param(
        Case(
            claims=[one_request("claim-0"), one_request("claim-1")],
            classes=CLASS_A,
            features=GROUPS,
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "1", "mig")),
                grouped("device-2", uses("counter-set-1", "1", "mig")),
            ),
            expect=[*picked(("req-0", "device-1")), *picked(("req-0", "device-2"))],
            releases=(37,),
        ),
        id="compatibility-groups-multiple-claims",
    ),
    pytest.param(
        Case(
            claims=[one_request("claim-0"), one_request("claim-1")],
            classes=CLASS_A,
            features=GROUPS,
            slices=pool_1(
                grouped("device-1", uses("counter-set-1", "1", "mig")),
                grouped("device-2", uses("counter-set-1", "1", "vgpu")),
            ),
            releases=(37,),
        ),
        id="compatibility-groups-multiple-claims-incompatible",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)


def test_devices_without_groups_go_only_with_each_other() -> None:
    slices = pool_1(
        grouped("device-1", uses("counter-set-1", "1")),
        grouped("device-2", uses("counter-set-1", "1", "mig")),
        grouped("device-3", uses("counter-set-1", "1")),
    )
    check(
        Case(
            claims=[two_requests()],
            classes=CLASS_A,
            features=GROUPS,
            slices=slices,
            expect=picked(("req-0", "device-1"), ("req-1", "device-3")),
            releases=(37,),
        )
    )


def test_a_share_of_a_device_in_use_is_not_checked_again() -> None:
    """Like its counters, the groups of an allow-multiple device in use are not checked for a
    further share: here the peers' intersection (mig and vgpu) admits nothing else."""
    shared = grouped(
        "device-1", uses("counter-set-1", "1", "mig"), capacity={CAP0: "4"}, multi=True
    )
    ledger = Ledger(
        exclusive=frozenset({DeviceID(A, "pool-1", "device-2")}),
        consumed_capacity=FrozenMap(
            {DeviceID(A, "pool-1", "device-1"): FrozenMap({f"{A}/{CAP0}": q("1")})}
        ),
    )
    check(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", capacity={CAP0: "1"}))],
            classes=MULTI_A,
            features=Features(
                partitionable_devices=True,
                compatibility_groups=True,
                consumable_capacity=True,
                release=37,
            ),
            ledger=ledger,
            slices=pool_1(shared, grouped("device-2", uses("counter-set-1", "1", "vgpu"))),
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1", share=True, consumed={CAP0: "1"}),
                )
            ],
            releases=(37,),
        )
    )


@pytest.mark.parametrize(
    ("state", "groups", "admitted", "after"),
    [
        (None, frozenset(), True, NO_GROUPS),
        (None, frozenset({"mig"}), True, frozenset({"mig"})),
        (NO_GROUPS, frozenset(), True, NO_GROUPS),
        (NO_GROUPS, frozenset({"mig"}), False, None),
        (frozenset({"mig", "vgpu"}), frozenset({"mig"}), True, frozenset({"mig"})),
        (frozenset({"mig"}), frozenset(), False, None),
        (frozenset({"mig"}), frozenset({"vgpu"}), False, None),
        (frozenset(), frozenset({"mig"}), False, None),  # inconsistent peers admit nothing
        (frozenset(), frozenset(), False, None),
    ],
)
def test_intersection_states(state, groups, admitted: bool, after) -> None:
    assert admits(state, groups) is admitted
    if admitted:
        assert add(state, groups) == after
