"""Partitionable devices (shared counters) and binding conditions.

Upstream's partitionable-devices and binding-conditions families: counter sets in their own
slices, consumption checked against what devices in use (on any node) leave, invalid pools on
unknown counter sets, per-device node selection, pools with binding-condition devices last and
their conditions copied into results.
"""

from __future__ import annotations

import pytest
from allocator_builders import (
    ALL_NODES,
    NODE1,
    NODE2,
    PER_DEVICE,
    REGION1,
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
    node_label_selector,
    pool,
    prioritized,
    request,
    result,
    slice_with_devices,
    sub_request,
    taint,
)

from dra_operator.allocator import Ledger
from dra_operator.model import DeviceID

A, B = "driver-a", "driver-b"
CLASSES = [device_class("class-a", A), device_class("class-b", B)]
LOCAL = local_node_selector()
PART = Features(partitionable_devices=True, prioritized_list=True, device_taints=True)
BIND = Features(partitionable_devices=True, device_binding_and_status=True)


def part(name: str, gi: int, set_name: str = "counter-set-1", driver: str = A, **kw: object):
    """A partition consuming `gi` GiB of memory, also its capacity (upstream: fromCounters)."""
    return device(
        name,
        driver=driver,
        consumes=[consumes(set_name, memory=f"{gi}Gi")],
        capacity={"memory": f"{gi}Gi"},
        **kw,  # type: ignore[arg-type]
    )


def counters(
    name: str,
    gi: int,
    *,
    count: int = 2,
    sel: object = NODE1,
    pool_name: str = "pool-1",
    set_name: str = "counter-set-1",
    driver: str = A,
):
    return slice_with_devices(
        name,
        sel,
        pool(pool_name, count),
        driver,  # type: ignore[arg-type]
        counters=[counter_set(set_name, memory=f"{gi}Gi")],
    )


def parts(
    name: str,
    *devices,
    count: int = 2,
    sel: object = NODE1,
    pool_name: str = "pool-1",
    driver: str = A,
):
    return slice_with_devices(name, sel, pool(pool_name, count), driver, *devices)  # type: ignore[arg-type]


def used(*names: str) -> Ledger:
    return Ledger(exclusive=frozenset(DeviceID(A, "pool-1", n) for n in names))


def mem(gi: int) -> str:
    return f'device.capacity["{A}"].memory.compareTo(quantity("{gi}Gi")) >= 0'


SCENARIOS = [
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[parts("slice-1", part("device-1", 4)), counters("slice-2", 8)],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="partitionable-devices-single-device",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"), request("req-1", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[
                parts("slice-1", part("device-1", 4), part("device-2", 6), part("device-3", 4)),
                counters("slice-2", 8),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-1", A, "pool-1", "device-3"),
                )
            ],
        ),
        id="partitionable-devices-multiple-devices",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[
                parts("slice-1", part("device-1", 4), part("device-2", 16), count=1),
                counters("slice-2", 18, count=1),
            ],
            ledger=used("device-2"),
        ),
        id="partitionable-devices-no-capacity-available",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[
                parts("slice-1", part("device-1", 4), part("device-2", 20), count=1),
                counters("slice-2", 18, count=1),
            ],
            ledger=used("device-2"),
        ),
        id="partitionable-devices-overallocated-capacity-pool",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=Features(),
            slices=[
                parts("slice-1", part("device-1", 4), count=1),
                counters("slice-2", 18, count=1),
            ],
        ),
        id="partitionable-devices-disabled-device-consumes-counters",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=Features(),
            slices=[
                parts("slice-1", part("device-1", 4), device("device-2"), count=1),
                counters("slice-2", 18, count=1),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-2"))],
        ),
        id="partitionable-devices-disabled-other-device-do-not-consume-counters",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=Features(),
            slices=[parts("slice-1", device("device-1", node_name=NODE1), sel=PER_DEVICE, count=1)],
        ),
        id="partitionable-devices-disabled-per-device-node-selection",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[
                parts("slice-1", part("device-1", 4, set_name="counter-set-2")),
                counters("slice-2", 8),
            ],
        ),
        id="partitionable-devices-device-counter-consumption-references-unknown-counter-set",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[
                parts(
                    "slice-1", device("device-1", consumes=[consumes("counter-set-1", cores="4")])
                ),
                counters("slice-2", 8),
            ],
        ),
        id="partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", 1, mem(6)),
                        sub_request("subReq-1", "class-a", 1, mem(2)),
                    ),
                )
            ],
            classes=CLASSES,
            features=PART,
            slices=[
                counters("slice-1", 8, count=3),
                parts("slice-2", part("device-1", 6), part("device-2", 2), count=3),
                parts("slice-3", part("device-3", 6), sel=NODE2, count=3),
            ],
            ledger=used("device-3"),
            expect=[allocation(LOCAL, result("req-0/subReq-1", A, "pool-1", "device-2"))],
        ),
        id="partitionable-devices-devices-on-different-nodes-consume-same-counter-set",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[
                counters("slice-1", 8, count=3),
                parts("slice-2", part("device-1", 6), count=3),
                parts("slice-3", part("device-3", 6, set_name="counter-set-2"), sel=NODE2, count=3),
            ],
        ),
        id="partitionable-devices-validation-error-on-non-targeting-slice",
    ),
    pytest.param(
        Case(
            claims=[
                claim("claim-0", request("req-0", "class-a", 3), request("req-1", "class-b", 3))
            ],
            classes=CLASSES,
            features=PART,
            slices=[
                parts(
                    "slice-1",
                    part("device-1", 4, node_selector=node_label_selector("region", REGION1)),
                    part("device-2", 4, node_name=NODE1),
                    part("device-3", 4, all_nodes=True),
                    sel=PER_DEVICE,
                ),
                counters("slice-2", 18, sel=PER_DEVICE),
                parts(
                    "slice-3",
                    *(part(f"device-{i}", 4, "counter-set-2", B) for i in (1, 2, 3)),
                    pool_name="pool-2",
                    driver=B,
                ),
                counters("slice-4", 12, pool_name="pool-2", set_name="counter-set-2", driver=B),
            ],
            expect=[
                allocation(
                    LOCAL,
                    *(result("req-0", A, "pool-1", f"device-{i}") for i in (1, 2, 3)),
                    *(result("req-1", B, "pool-2", f"device-{i}") for i in (1, 2, 3)),
                )
            ],
        ),
        id="partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[
                parts("slice-1", part("device-1", 4, all_nodes=True), sel=PER_DEVICE),
                counters("slice-2", 8, sel=ALL_NODES),
            ],
            expect=[allocation(None, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="partitionable-devices-per-device-node-selection-all-nodes",
    ),
    pytest.param(
        Case(
            claims=[
                claim("claim-0", request("req-0", "class-a")),
                claim("claim-1", request("req-1", "class-b")),
            ],
            classes=CLASSES,
            features=PART,
            slices=[
                parts("slice-1", device("device-1", consumes=[consumes("counter-set-1", c="1")])),
                slice_with_devices(
                    "slice-2",
                    NODE1,
                    pool("pool-1", 2),
                    A,
                    counters=[counter_set("counter-set-1", c="1")],
                ),
                slice_with_devices(
                    "slice-3",
                    NODE1,
                    pool("pool-1", 2),
                    B,
                    device("device-2", driver=B, consumes=[consumes("counter-set-2", d="2")]),
                ),
                slice_with_devices(
                    "slice-4",
                    NODE1,
                    pool("pool-1", 2),
                    B,
                    counters=[counter_set("counter-set-2", d="1")],
                ),
            ],
        ),
        id="partitionable-devices-counter-cache-not-crossed-between-driver-schemas",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[
                parts(
                    "slice-1",
                    device(
                        "device-1",
                        taints=[taint("taint-key", "taint-value")],
                        consumes=[consumes("counter-set-1", c="1")],
                    ),
                    device("device-2", consumes=[consumes("counter-set-1", c="1")]),
                ),
                slice_with_devices(
                    "slice-2",
                    NODE1,
                    pool("pool-1", 2),
                    A,
                    counters=[counter_set("counter-set-1", c="1")],
                ),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-2"))],
        ),
        id="partitionable-devices-taint-releases-counter",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", all_request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[parts("slice-1", part("device-1", 4)), counters("slice-2", 8)],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="all-devices-with-consumed-counters",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 3))],
            classes=CLASSES,
            features=BIND,
            slices=[
                parts(
                    "slice-1",
                    part("device-1", 2, binding=["IsPrepare"], binding_failure=["BindingFailed"]),
                    part("device-2", 2),
                    part("device-3", 4, binding=["IsReady"], binding_failure=["BindingTimeout"]),
                ),
                counters("slice-2", 8),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result(
                        "req-0",
                        A,
                        "pool-1",
                        "device-1",
                        binding=["IsPrepare"],
                        binding_failure=["BindingFailed"],
                    ),
                    result("req-0", A, "pool-1", "device-2"),
                    result(
                        "req-0",
                        A,
                        "pool-1",
                        "device-3",
                        binding=["IsReady"],
                        binding_failure=["BindingTimeout"],
                    ),
                )
            ],
        ),
        id="partitionable-devices-with-binding-conditions-some-devices-no-conditions",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"), request("req-1", "class-a"))],
            classes=CLASSES,
            features=BIND,
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1"),
                    device("device-2", binding=["IsPrepare"], binding_failure=["BindingFailed"]),
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result(
                        "req-1",
                        A,
                        "pool-1",
                        "device-2",
                        binding=["IsPrepare"],
                        binding_failure=["BindingFailed"],
                    ),
                )
            ],
        ),
        id="binding-conditions-with-and-without",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=Features(),
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1", binding=["IsPrepare"], binding_failure=["BindingFailed"]),
                )
            ],
        ),
        id="binding-conditions-without-feature-gate",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=BIND,
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1", binding=["IsPrepare"], binding_failure=["BindingFailed"]),
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    result(
                        "req-0",
                        A,
                        "pool-1",
                        "device-1",
                        binding=["IsPrepare"],
                        binding_failure=["BindingFailed"],
                    ),
                )
            ],
        ),
        id="device-binding-conditions",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)


def test_counter_explanation_says_counters() -> None:
    got = check(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            features=PART,
            slices=[
                parts("slice-1", part("device-1", 4), part("device-2", 6)),
                counters("slice-2", 8),
            ],
            ledger=used("device-2"),
        )
    )
    assert got is not None and got.explanation is not None
    assert str(got.explanation.requests[0]) == (
        "request req-0: 0/2 devices usable: 1 in use, 1 without enough shared counters"
    )
