"""Upstream's remaining partitionable-devices and binding-conditions scenarios.

Counters are reserved per pool ID (driver and pool), released again when a device is rejected
or backtracked, and a share of a multi-allocatable device holds its counters for as long as any
share of it is allocated. Pools with binding-condition devices are searched last; slices in a
pool by name.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from allocator_builders import (
    ALL,
    NODE1,
    NODE2,
    PER_DEVICE,
    REGION1,
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
    match,
    node,
    node_label_selector,
    pool,
    prioritized,
    q,
    request,
    result,
    slice_with_devices,
    sub_request,
    taint,
    toleration,
)

from dra_operator.allocator import Ledger, SharedDeviceID
from dra_operator.model import DeviceCounterConsumption, DeviceID, FrozenMap, ResourcePool

A, B = "driver-a", "driver-b"
CLASSES = [device_class("class-a", A), device_class("class-b", B)]
CLASS_A = [CLASSES[0]]
LOCAL = local_node_selector()
PART = Features(partitionable_devices=True)
PART_PL = Features(partitionable_devices=True, prioritized_list=True)
PART_CC = Features(partitionable_devices=True, consumable_capacity=True)
BIND = Features(partitionable_devices=True, device_binding_and_status=True)
STRING = f"{A}/stringAttribute"
INVALID = "invalid resource pools were encountered"
CAP0 = "capacity-0"
GROUPED_MIG = replace(consumes("counter-set-1", **{CAP0: "2"}), compatibility_groups=("mig",))


def fc(name: str, *consumption: DeviceCounterConsumption, **kw: object):
    """A device whose capacities are the counters it consumes (upstream: fromCounters)."""
    capacity = {k: str(v) for c in consumption for k, v in c.counters.items()}
    return device(name, capacity=capacity, consumes=consumption, **kw)  # type: ignore[arg-type]


def c1(name: str, **kw: object):
    """A device consuming counter "c": 1 of counter-set-1."""
    return device(name, consumes=[consumes("counter-set-1", c="1")], **kw)  # type: ignore[arg-type]


def devices_in(name: str, pool_: str | ResourcePool, *devices, driver: str = A, sel=NODE1):
    pool_ = pool(pool_, 2) if isinstance(pool_, str) else pool_
    return slice_with_devices(name, sel, pool_, driver, *devices)


def sets_in(name: str, pool_: str | ResourcePool, *sets, driver: str = A, sel=NODE1):
    pool_ = pool(pool_, 2) if isinstance(pool_, str) else pool_
    return slice_with_devices(name, sel, pool_, driver, counters=sets)


def kind(value: str) -> str:
    return f'device.attributes["{A}"].kind == "{value}"'


def mem(gi: int) -> str:
    return f'device.capacity["{A}"].memory.compareTo(quantity("{gi}Gi")) >= 0'


def picks(*rows: tuple[str, str, str], driver: str = A):
    return [allocation(LOCAL, *(result(r, driver, p, d) for r, p, d in rows))]


def six_or_four(name: str = "req-1"):
    return prioritized(
        name,
        sub_request("subReq-0", "class-a", 1, mem(6)),
        sub_request("subReq-1", "class-a", 1, mem(4)),
    )


def cond(suffix: str = "") -> dict[str, list[str]]:
    return {"binding": [f"IsPrepare{suffix}"], "binding_failure": [f"BindingFailed{suffix}"]}


def bound(request_name: str, name: str, suffix: str = "", **kw: object):
    return result(request_name, A, "pool-1", name, **cond(suffix), **kw)  # type: ignore[arg-type]


TOLERATE_KEY1 = toleration("key1", operator="Exists", effect="NoSchedule")
KEY1 = taint("key1", "value1")

SCENARIOS = [
    pytest.param(
        Case(
            claims=[
                claim("claim-0", all_request("req-0", "class-a"), constraints=[match(f"{A}/numa")])
            ],
            classes=CLASS_A,
            features=PART,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    device("device-1", attributes={"numa": 1}),
                    c1("device-2", attributes={"numa": 2}),
                ),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", c="1")),
            ],
            error=(
                "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
                "because a claim constraint would not be satisfied"
            ),
        ),
        id="partitionable-all-mode-constraint-must-error-with-reserved-counter",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2), constraints=[match(STRING)])],
            classes=CLASS_A,
            features=PART,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    c1("device-1", attributes={"stringAttribute": "red"}),
                    c1("device-2", attributes={"stringAttribute": "blue"}),
                    c1("device-3", attributes={"stringAttribute": "blue"}),
                ),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", c="2")),
            ],
            expect=picks(("req-0", "pool-1", "device-2"), ("req-0", "pool-1", "device-3")),
        ),
        id="partitionable-devices-constraint-releases-counter",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a", 1, kind("shared")),
                    request("req-1", "class-a", 1, kind("counteronly")),
                )
            ],
            classes=CLASS_A,
            features=PART_CC,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    c1("device-1", attributes={"kind": "shared"}, multi=True),
                    device("device-2", attributes={"kind": "shared"}),
                    c1("device-3", attributes={"kind": "counteronly"}),
                ),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", c="1")),
            ],
            expect=picks(("req-0", "pool-1", "device-2"), ("req-1", "pool-1", "device-3")),
        ),
        id="partitionable-consumable-capacity-backtrack-releases-counter",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request(
                        "req-0",
                        "class-a",
                        1,
                        f'device.attributes["{A}"].stringAttribute == "cap"',
                        capacity={"capacity-0": "2"},
                    ),
                ),
                claim(
                    "claim-1",
                    prioritized(
                        "req-0",
                        sub_request(
                            "subReq-0",
                            "class-a",
                            1,
                            f'device.attributes["{A}"].stringAttribute == "cap"',
                            mode=ALL,
                            capacity={"capacity-0": "2"},
                        ),
                        sub_request(
                            "subReq-1",
                            "class-a",
                            1,
                            f'device.attributes["{A}"].stringAttribute == "fb"',
                        ),
                    ),
                    constraints=[match(STRING)],
                ),
            ],
            classes=CLASS_A,
            features=Features(consumable_capacity=True, prioritized_list=True),
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device(
                        "device-1",
                        capacity={"capacity-0": "2"},
                        attributes={"stringAttribute": "cap"},
                        multi=True,
                    ),
                    device("device-2", attributes={"stringAttribute": "fb"}),
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    result(
                        "req-0", A, "pool-1", "device-1", share=True, consumed={"capacity-0": "2"}
                    ),
                ),
                allocation(LOCAL, result("req-0/subReq-1", A, "pool-1", "device-2")),
            ],
        ),
        id="consumable-capacity-rejection-rolls-back-constraints",
    ),
    pytest.param(
        Case(
            claims=[
                claim("claim-0", request("req-0", "class-a", 1, kind("shared"))),
                claim(
                    "claim-1",
                    request("req-1", "class-a", 1, f"{kind('shared')} || {kind('fallback')}"),
                    request("req-2", "class-a", 1, kind("gate")),
                    request("req-3", "class-a", 1, kind("shared")),
                    constraints=[match(STRING, "req-1", "req-2")],
                ),
            ],
            classes=CLASS_A,
            features=PART_CC,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    c1(
                        "device-1",
                        attributes={"kind": "shared", "stringAttribute": "red"},
                        multi=True,
                    ),
                    device("device-2", attributes={"kind": "fallback", "stringAttribute": "blue"}),
                    device("device-3", attributes={"kind": "gate", "stringAttribute": "blue"}),
                ),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", c="1")),
            ],
            expect=[
                allocation(LOCAL, result("req-0", A, "pool-1", "device-1", share=True)),
                allocation(
                    LOCAL,
                    result("req-1", A, "pool-1", "device-2"),
                    result("req-2", A, "pool-1", "device-3"),
                    result("req-3", A, "pool-1", "device-1", share=True),
                ),
            ],
        ),
        id="partitionable-empty-capacity-multiple-share-backtrack-keeps-counter-ownership",
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
                devices_in("slice-1", "pool-1", c1("device-1")),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", c="1")),
                devices_in(
                    "slice-3",
                    "pool-1",
                    device("device-2", driver=B, consumes=[consumes("counter-set-1", c="2")]),
                    driver=B,
                ),
                sets_in("slice-4", "pool-1", counter_set("counter-set-1", c="2"), driver=B),
            ],
            expect=[
                allocation(LOCAL, result("req-0", A, "pool-1", "device-1")),
                allocation(LOCAL, result("req-1", B, "pool-1", "device-2")),
            ],
        ),
        id="partitionable-devices-counter-cache-scoped-by-pool-ID",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"), six_or_four())],
            classes=CLASS_A,
            features=PART_PL,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    *(
                        fc(n, consumes("counter-set-1", memory=m))
                        for n, m in (("device-1", "4Gi"), ("device-2", "6Gi"), ("device-3", "4Gi"))
                    ),
                ),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", memory="8Gi")),
            ],
            expect=picks(("req-0", "pool-1", "device-1"), ("req-1/subReq-1", "pool-1", "device-3")),
        ),
        id="partitionable-devices-prioritized-list",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"), six_or_four())],
            classes=CLASS_A,
            features=PART_PL,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    *(
                        fc(
                            n,
                            consumes("counter-set-1", memory=f"{x}Gi"),
                            consumes("counter-set-2", cpus=str(x)),
                        )
                        for n, x in (("device-1", 4), ("device-2", 6), ("device-3", 4))
                    ),
                ),
                sets_in(
                    "slice-2",
                    "pool-1",
                    counter_set("counter-set-1", memory="18Gi"),
                    counter_set("counter-set-2", cpus="8"),
                ),
            ],
            expect=picks(("req-0", "pool-1", "device-1"), ("req-1/subReq-1", "pool-1", "device-3")),
        ),
        id="partitionable-devices-multiple-capacity-pools",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"), request("req-1", "class-a"))],
            classes=CLASS_A,
            features=PART,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    fc(
                        "device-1",
                        consumes("counter-set-1", memory="4Gi", cpus="6"),
                        consumes("counter-set-2", cpus="4", memory="2Gi"),
                    ),
                    fc(
                        "device-2",
                        consumes("counter-set-1", memory="6Gi", cpus="4"),
                        consumes("counter-set-2", cpus="6", memory="6Gi"),
                    ),
                    fc(
                        "device-3",
                        consumes("counter-set-1", memory="4Gi", cpus="4"),
                        consumes("counter-set-2", cpus="4", memory="4Gi"),
                    ),
                ),
                sets_in(
                    "slice-2",
                    "pool-1",
                    counter_set("counter-set-1", cpus="8", memory="18Gi"),
                    counter_set("counter-set-2", cpus="12", memory="18Gi"),
                ),
            ],
            expect=picks(("req-0", "pool-1", "device-2"), ("req-1", "pool-1", "device-3")),
        ),
        id="partitionable-devices-multiple-counters",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"), request("req-1", "class-a"))],
            classes=CLASS_A,
            features=PART,
            ledger=Ledger(
                exclusive=frozenset(
                    {
                        DeviceID(A, "pool-1", "device-2"),
                        DeviceID(A, "pool-1", "device-3"),
                        DeviceID(A, "pool-2", "device-1"),
                    }
                )
            ),
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    *(
                        fc(n, consumes("counter-set-1", cpus=c, memory=m))
                        for n, c, m in (
                            ("device-1", "6", "4Gi"),
                            ("device-2", "4", "6Gi"),
                            ("device-3", "4", "4Gi"),
                        )
                    ),
                ),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", cpus="8", memory="18Gi")),
                devices_in(
                    "slice-3",
                    "pool-2",
                    *(
                        fc(n, consumes("counter-set-1", cpus=c, memory=m))
                        for n, c, m in (
                            ("device-1", "6", "4Gi"),
                            ("device-2", "1", "7Gi"),
                            ("device-3", "1", "7Gi"),
                        )
                    ),
                ),
                sets_in("slice-4", "pool-2", counter_set("counter-set-1", cpus="8", memory="18Gi")),
            ],
            expect=picks(("req-0", "pool-2", "device-2"), ("req-1", "pool-2", "device-3")),
        ),
        id="partitionable-devices-multiple-pools",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2))],
            classes=CLASS_A,
            features=PART,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    *(
                        device(n, consumes=[consumes("counter-set-1", memory=m)])
                        for n, m in (("device-1", "5Gi"), ("device-2", "4Gi"), ("device-3", "4Gi"))
                    ),
                ),
                sets_in(
                    "slice-2", "pool-1", counter_set("counter-set-1", memory="8Gi", unused="1Gi")
                ),
            ],
            expect=picks(("req-0", "pool-1", "device-2"), ("req-0", "pool-1", "device-3")),
        ),
        id="partitionable-devices-unused-counters-in-counter-set",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", six_or_four("req-0"))],
            classes=CLASS_A,
            features=PART_PL,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    fc("device-1", consumes("counter-set-1", memory="4Gi"), node_name=NODE1),
                    fc("device-2", consumes("counter-set-1", memory="6Gi"), node_name=NODE2),
                    sel=PER_DEVICE,
                ),
                sets_in(
                    "slice-2", "pool-1", counter_set("counter-set-1", memory="18Gi"), sel=PER_DEVICE
                ),
            ],
            expect=picks(("req-0/subReq-1", "pool-1", "device-1")),
        ),
        id="partitionable-devices-per-device-node-selection-nodename",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASS_A,
            features=PART_PL,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    fc(
                        "device-1",
                        consumes("counter-set-1", memory="4Gi"),
                        node_selector=node_label_selector("region", REGION1),
                    ),
                    sel=PER_DEVICE,
                ),
                sets_in(
                    "slice-2", "pool-1", counter_set("counter-set-1", memory="18Gi"), sel=PER_DEVICE
                ),
            ],
            expect=[
                allocation(
                    node_label_selector("region", REGION1),
                    result("req-0", A, "pool-1", "device-1"),
                )
            ],
        ),
        id="partitionable-devices-per-device-node-selection-node-selector",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a", 2),
                    request("req-1", "class-a", 1, f'device.attributes["{A}"].special'),
                )
            ],
            classes=CLASS_A,
            features=PART,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    *(
                        device(
                            f"device-{i}",
                            attributes={"special": i == 1},
                            consumes=[
                                consumes("counter-set-1", **{f"cpu{i}": "1"}),
                                consumes("counter-set-2", mem="10Gi"),
                            ],
                        )
                        for i in (1, 2, 3)
                    ),
                ),
                sets_in(
                    "slice-2",
                    "pool-1",
                    counter_set("counter-set-1", cpu1="1", cpu2="1", cpu3="1"),
                    counter_set("counter-set-2", mem="30Gi"),
                ),
            ],
            expect=picks(
                ("req-0", "pool-1", "device-2"),
                ("req-0", "pool-1", "device-3"),
                ("req-1", "pool-1", "device-1"),
            ),
        ),
        id="partitionable-devices-with-attribute-selector",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2), request("req-1", "class-a"))],
            classes=CLASS_A,
            features=Features(device_binding_and_status=True),
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1", **cond()),  # type: ignore[arg-type]
                    device("device-2", **cond("2")),  # type: ignore[arg-type]
                    device("device-3", **cond("3")),  # type: ignore[arg-type]
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    bound("req-0", "device-1"),
                    bound("req-0", "device-2", "2"),
                    bound("req-1", "device-3", "3"),
                )
            ],
        ),
        id="binding-conditions-multiple-devices",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASS_A,
            features=BIND,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    fc("device-1", consumes("counter-set-1", memory="4Gi"), **cond()),
                ),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", memory="8Gi")),
            ],
            expect=[allocation(LOCAL, bound("req-0", "device-1"))],
        ),
        id="partitionable-devices-with-binding-conditions",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2))],
            classes=CLASS_A,
            features=BIND,
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    fc("device-1", consumes("counter-set-1", memory="4Gi"), **cond()),
                    fc(
                        "device-2",
                        consumes("counter-set-1", memory="4Gi"),
                        **cond("2"),
                    ),
                ),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", memory="8Gi")),
            ],
            expect=[allocation(LOCAL, bound("req-0", "device-1"), bound("req-0", "device-2", "2"))],
        ),
        id="partitionable-devices-with-binding-conditions-multiple",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2))],
            classes=CLASS_A,
            features=BIND,
            slices=[
                devices_in(
                    "slice-4",
                    pool("pool-1", 4),
                    fc("device-1", consumes("counter-set-1", memory="4Gi"), **cond()),
                ),
                sets_in("slice-3", pool("pool-1", 4), counter_set("counter-set-1", memory="8Gi")),
                devices_in(
                    "slice-2",
                    pool("pool-1", 4),
                    fc("device-2", consumes("counter-set-2", memory="4Gi")),
                ),
                sets_in("slice-1", pool("pool-1", 4), counter_set("counter-set-2", memory="8Gi")),
            ],
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-2"), bound("req-0", "device-1")
                )
            ],
        ),
        id="partitionable-devices-with-binding-conditions-multi-slices",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2))],
            classes=CLASS_A,
            features=Features(
                partitionable_devices=True, device_binding_and_status=True, device_taints=True
            ),
            slices=[
                devices_in(
                    "slice-1",
                    pool("pool-1", 1),
                    fc(
                        "device-1",
                        consumes("counter-set-1", memory="4Gi"),
                        taints=[KEY1],
                        **cond(),
                    ),
                    fc("device-2", consumes("counter-set-1", memory="4Gi")),
                ),
                sets_in("slice-2", pool("pool-1", 1), counter_set("counter-set-1", memory="8Gi")),
            ],
        ),
        id="partitionable-devices-with-binding-conditions-and-taints",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2, tolerations=[TOLERATE_KEY1]))],
            classes=CLASS_A,
            features=Features(
                partitionable_devices=True, device_binding_and_status=True, device_taints=True
            ),
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    fc(
                        "device-1",
                        consumes("counter-set-1", memory="4Gi"),
                        taints=[KEY1],
                        **cond(),
                    ),
                    fc("device-2", consumes("counter-set-1", memory="4Gi")),
                ),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", memory="8Gi")),
            ],
            expect=[
                allocation(
                    LOCAL,
                    bound("req-0", "device-1", tolerations=[TOLERATE_KEY1]),
                    result("req-0", A, "pool-1", "device-2", tolerations=[TOLERATE_KEY1]),
                )
            ],
        ),
        id="partitionable-devices-with-binding-conditions-and-taints-tolerated",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2))],
            classes=CLASS_A,
            features=Features(device_binding_and_status=True),
            slices=[
                devices_in("slice-1", pool("pool-1", 3), device("device-1", **cond())),  # type: ignore[arg-type]
                devices_in("slice-3", pool("pool-1", 3), device("device-3")),
                devices_in("slice-2", pool("pool-1", 3), device("device-2")),
            ],
            expect=[
                allocation(
                    LOCAL, bound("req-0", "device-1"), result("req-0", A, "pool-1", "device-2")
                )
            ],
        ),
        id="lexicographical-sorting-slices-with-binding-conditions",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASS_A,
            features=PART,
            slices=[
                devices_in("slice-1", pool("pool-1", 4), device("device-1")),
                sets_in("slice-2", pool("pool-1", 4), counter_set("counter-set-1")),
                devices_in("slice-3", pool("pool-1", 4), device("device-2")),
                sets_in("slice-4", pool("pool-1", 4), counter_set("counter-set-1")),
            ],
            explains=INVALID,
        ),
        id="partitionable-devices-same-counter-set-name-in-different-resource-slices",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASS_A,
            features=PART,
            slices=[
                devices_in(
                    "slice-1",
                    pool("pool-1", 1),
                    device("device-1", consumes=[consumes("counter-set-1", memory="8Gi")]),
                ),
                sets_in("slice-2", pool("pool-2", 1), counter_set("counter-set-1", memory="8Gi")),
            ],
            explains=INVALID,
        ),
        id="partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            features=Features(),
            classes=CLASS_A,
            ledger=Ledger(exclusive=frozenset({DeviceID(A, "pool-2", "device-2")})),
            slices=[
                devices_in("slice-1", "pool-1", device("device-1")),
                devices_in("slice-2", "pool-1", device("device-1")),
                devices_in("slice-3", pool("pool-2", 1), device("device-2")),
            ],
            explains=INVALID,
        ),
        id="invalid-pool-is-error-if-no-other-device-can-be-allocated",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            features=Features(),
            classes=CLASS_A,
            slices=[
                devices_in("slice-1", pool("pool-1", 2, 1), device("device-1"), sel=NODE2),
                devices_in("slice-1", pool("pool-1", 2, 1), device("device-2"), sel=NODE2),
                devices_in("slice-2", pool("pool-1", 2, 2), device("device-1")),
                devices_in("slice-2", pool("pool-1", 2, 2), device("device-2")),
            ],
            expect=picks(("req-0", "pool-1", "device-1")),
        ),
        id="multi-host-resource-pool-complete-update-from-node-2-to-node-1",
    ),
]


# Upstream's 1.37 additions to this family (v0.37.2).
SCENARIOS_137 = [
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASS_A,
            features=PART_CC,
            # a persisted share known only by its ID (no consumed capacity recorded)
            ledger=Ledger(
                shares=frozenset({SharedDeviceID(DeviceID(A, "pool-1", "device-1"), SHARE_ID)})
            ),
            slices=[
                devices_in("slice-1", "pool-1", c1("device-1", multi=True)),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", c="1")),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1", share=True))],
            releases=(37,),
        ),
        id="partitionable-consumable-capacity-shared-device-counter-not-recharged",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASS_A,
            features=PART,
            ledger=Ledger(exclusive=frozenset({DeviceID(A, "pool-1", "device-1")})),
            node=node(NODE2),
            slices=[
                sets_in("slice-1", pool("pool-1", 3), counter_set("counter-set-1", memory="8Gi")),
                devices_in(
                    "slice-2",
                    pool("pool-1", 3),
                    fc("device-1", consumes("counter-set-1", memory="6Gi")),
                ),
                devices_in(
                    "slice-3",
                    pool("pool-1", 3),
                    fc("device-2", consumes("counter-set-1", memory="6Gi")),
                    fc("device-3", consumes("counter-set-1", memory="2Gi")),
                    sel=NODE2,
                ),
            ],
            expect=[
                allocation(local_node_selector(NODE2), result("req-0", A, "pool-1", "device-3"))
            ],
            releases=(37,),
        ),
        id="partitionable-devices-devices-consume-counter-set-in-different-nodes",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASS_A,
            features=PART,
            ledger=Ledger(exclusive=frozenset({DeviceID(A, "pool-1", "device-1")})),
            slices=[
                devices_in(
                    "slice-1",
                    "pool-1",
                    device(
                        "device-1", consumes=[consumes("counter-set-1", c="9000000000000000000")]
                    ),
                    device("device-2", consumes=[consumes("counter-set-1", c="1")]),
                ),
                sets_in(
                    "slice-2", "pool-1", counter_set("counter-set-1", c="10000000000000000000")
                ),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-2"))],
            releases=(37,),
        ),
        id="partitionable-devices-counter-quantities-are-not-modified",
    ),
    # DRADeviceCompatibilityGroups off (not implemented): slices using groups are ignored.
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASS_A,
            features=PART,
            slices=[
                devices_in("slice-1", "pool-1", device("device-1", consumes=[GROUPED_MIG])),
                sets_in("slice-2", "pool-1", counter_set("counter-set-1", **{CAP0: "4"})),
                devices_in(
                    "slice-3",
                    "pool-2",
                    device("device-2", consumes=[consumes("counter-set-2", **{CAP0: "2"})]),
                ),
                sets_in("slice-4", "pool-2", counter_set("counter-set-2", **{CAP0: "4"})),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-2", "device-2"))],
            releases=(37,),
        ),
        id="compatibility-groups-disabled-skips-grouped-pool",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASS_A,
            features=PART,
            slices=[
                devices_in(
                    "slice-1",
                    pool("pool-1", 3),
                    device(
                        "device-1",
                        consumes=[replace(GROUPED_MIG, counters=FrozenMap({CAP0: q("1")}))],
                    ),
                ),
                devices_in(
                    "slice-2",
                    pool("pool-1", 3),
                    device("device-2", consumes=[consumes("counter-set-1", **{CAP0: "1"})]),
                ),
                sets_in("slice-3", pool("pool-1", 3), counter_set("counter-set-1", **{CAP0: "4"})),
            ],
            expect=None,
            releases=(37,),
        ),
        id="compatibility-groups-disabled-skips-ungrouped-device-in-grouped-pool",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS + SCENARIOS_137)
def test_scenario(case: Case) -> None:
    check(case)
