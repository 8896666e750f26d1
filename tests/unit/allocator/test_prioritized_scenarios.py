"""Upstream's remaining firstAvailable, `All`-mode and combination-order scenarios.

A subrequest in `All` mode that finds no free device is skipped for the next one; constraints
may name the parent request (every subrequest) or one subrequest; combinations within a
request are tried once each (`max_steps` pins upstream's allocateOne invocation counts).
"""

from __future__ import annotations

import pytest
from allocator_builders import (
    ALL,
    NODE1,
    NODE2,
    Case,
    Features,
    all_request,
    allocation,
    check,
    claim,
    device,
    device_class,
    local_node_selector,
    match,
    pool,
    prioritized,
    request,
    result,
    slice_with_devices,
    sub_request,
    version,
)

from dra_operator.allocator import Ledger
from dra_operator.model import DeviceID

A, B = "driver-a", "driver-b"
CLASSES = [device_class("class-a", A), device_class("class-b", B)]
CLASS_A = [CLASSES[0]]
PL = Features(prioritized_list=True)
LOCAL = local_node_selector()
V5, V6 = (f'device.attributes["{A}"].generation == "{g}"' for g in ("v5", "v6"))


def mem(gi: int) -> str:
    return f'device.capacity["{A}"].memory.compareTo(quantity("{gi}Gi")) >= 0'


def typed(kind: str) -> str:
    return f'device.attributes["{A}"].type == "{kind}"'


def used(driver: str, pool_name: str, name: str) -> Ledger:
    return Ledger(exclusive=frozenset({DeviceID(driver, pool_name, name)}))


def devices(name: str, pool_name: str, driver: str, *names: str, node_name: str = NODE1):
    return slice_with_devices(name, node_name, pool_name, driver, *(device(n) for n in names))


def got(*picks: tuple[str, str, str, str]):
    return [allocation(LOCAL, *(result(r, d, p, n) for r, d, p, n in picks))]


def all_then_b() -> object:
    """firstAvailable: every device of class-a, else one device of class-b."""
    return prioritized(
        "req-0", sub_request("subReq-0", "class-a", mode=ALL), sub_request("subReq-1", "class-b")
    )


def generations(*subs_selectors: str):
    return prioritized(
        "req-0",
        *(
            sub_request(f"subReq-{i}", "class-a", 0, s, mode=ALL)
            for i, s in enumerate(subs_selectors)
        ),
    )


def gen(name: str, value: str, **more: object):
    return device(name, attributes={"generation": value, **more})


def memory(name: str, gi: int, driver_version: str):
    return device(
        name, capacity={"memory": f"{gi}Gi"}, attributes={"driverVersion": version(driver_version)}
    )


SCENARIOS = [
    pytest.param(
        Case(
            claims=[
                claim("claim-0", all_request("req-0", "class-a")),
                claim("claim-1", request("req-0", "class-b")),
            ],
            features=Features(),
            classes=CLASSES,
            slices=[
                devices("slice-1", "pool-1", A, "device-1", "device-2"),
                devices("slice-1", "pool-1", B, "device-1"),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-0", A, "pool-1", "device-2"),
                ),
                allocation(LOCAL, result("req-0", B, "pool-1", "device-1")),
            ],
        ),
        id="all-devices-many-plus-another",
    ),
    pytest.param(
        Case(
            claims=[
                claim("claim-1", request("req-0", "class-b")),
                claim("claim-0", all_request("req-0", "class-a")),
            ],
            features=Features(),
            classes=CLASSES,
            slices=[
                devices("slice-1", "pool-1", A, "device-1", "device-2"),
                devices("slice-1", "pool-1", B, "device-1"),
            ],
            expect=[
                allocation(LOCAL, result("req-0", B, "pool-1", "device-1")),
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-0", A, "pool-1", "device-2"),
                ),
            ],
        ),
        id="all-devices-many-plus-another-reversed",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", all_then_b())],
            classes=CLASSES,
            features=PL,
            slices=[devices("slice-1", "pool-1", A), devices("slice-2", "pool-2", B, "device-1")],
            expect=got(("req-0/subReq-1", B, "pool-2", "device-1")),
        ),
        id="all-devices-slice-without-devices-prioritized-list",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", all_then_b())],
            classes=CLASSES,
            features=PL,
            slices=[devices("slice-2", "pool-2", B, "device-1")],
            expect=got(("req-0/subReq-1", B, "pool-2", "device-1")),
        ),
        id="all-devices-no-slices-prioritized-list",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", all_then_b())],
            classes=CLASSES,
            features=PL,
            ledger=used(A, "pool-1", "device-1"),
            slices=[
                devices("slice-1", "pool-1", A, "device-1", "device-2"),
                devices("slice-2", "pool-2", B, "device-1"),
            ],
            expect=got(("req-0/subReq-1", B, "pool-2", "device-1")),
        ),
        id="all-devices-some-allocated-prioritized-list",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a", 1, mem(1)),
                    prioritized(
                        "req-1",
                        sub_request("subReq-0", "class-a", 1, mem(4)),
                        sub_request("subReq-1", "class-a", 2, mem(2)),
                    ),
                )
            ],
            classes=CLASS_A,
            features=PL,
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1", capacity={"memory": "2Gi"}),
                    device("device-2", capacity={"memory": "2Gi"}),
                    device("device-3", capacity={"memory": "1Gi"}),
                )
            ],
            expect=got(
                ("req-0", A, "pool-1", "device-3"),
                ("req-1/subReq-1", A, "pool-1", "device-1"),
                ("req-1/subReq-1", A, "pool-1", "device-2"),
            ),
        ),
        id="prioritized-list-subrequests-with-expressions",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a", 1, mem(8)),
                    prioritized(
                        "req-1",
                        sub_request("subReq-0", "class-a", 1, mem(2)),
                        sub_request("subReq-1", "class-a", 1, mem(1)),
                    ),
                    constraints=[match(f"{A}/driverVersion", "req-0", "req-1")],
                )
            ],
            classes=CLASS_A,
            features=PL,
            slices=[
                slice_with_devices("slice-1", NODE1, "pool-1", A, memory("device-1", 8, "1.0.0")),
                slice_with_devices(
                    "slice-2",
                    NODE1,
                    "pool-2",
                    A,
                    memory("device-2", 2, "2.0.0"),
                    memory("device-3", 1, "1.0.0"),
                ),
            ],
            expect=got(
                ("req-0", A, "pool-1", "device-1"), ("req-1/subReq-1", A, "pool-2", "device-3")
            ),
        ),
        id="prioritized-list-subrequests-with-constraints-ref-parent-request",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a", 1, mem(8)),
                    prioritized(
                        "req-1",
                        sub_request("subReq-0", "class-a", 1, mem(2)),
                        sub_request("subReq-1", "class-a", 1, mem(1)),
                    ),
                    constraints=[match(f"{A}/driverVersion", "req-0", "req-1/subReq-0")],
                )
            ],
            classes=CLASS_A,
            features=PL,
            slices=[
                slice_with_devices("slice-1", NODE1, "pool-1", A, memory("device-1", 8, "1.0.0")),
                slice_with_devices("slice-2", NODE1, "pool-2", A, memory("device-2", 2, "2.0.0")),
            ],
            expect=got(
                ("req-0", A, "pool-1", "device-1"), ("req-1/subReq-1", A, "pool-2", "device-2")
            ),
        ),
        id="prioritized-list-subrequests-with-constraints-ref-sub-request",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", mode=ALL),
                        sub_request("subReq-1", "class-a"),
                    ),
                )
            ],
            classes=CLASS_A,
            features=PL,
            ledger=used(A, "pool-1", "device-1"),
            slices=[devices("slice-1", "pool-1", A, "device-1", "device-2")],
            expect=got(("req-0/subReq-1", A, "pool-1", "device-2")),
        ),
        id="prioritized-list-subrequests-with-allocation-mode-all",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a"),
                    prioritized(
                        "req-1",
                        sub_request("subReq-0", "class-a", mode=ALL),
                        sub_request("subReq-1", "class-a"),
                    ),
                )
            ],
            classes=CLASS_A,
            features=PL,
            slices=[devices("slice-1", "pool-1", A, "device-1", "device-2")],
            expect=got(
                ("req-0", A, "pool-1", "device-1"), ("req-1/subReq-1", A, "pool-1", "device-2")
            ),
        ),
        id="prioritized-list-allocation-mode-all-multiple-requests",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", mode=ALL),
                        sub_request("subReq-1", "class-a"),
                    ),
                )
            ],
            classes=CLASS_A,
            features=PL,
            ledger=used(A, "pool-1", "device-2"),
            slices=[devices("slice-1", "pool-1", A, "device-1", "device-2")],
            expect=got(("req-0/subReq-1", A, "pool-1", "device-1")),
        ),
        id="prioritized-list-allocation-mode-all",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", generations(V6, V5))],
            classes=CLASS_A,
            features=PL,
            slices=[slice_with_devices("slice-1", NODE1, "pool-1", A, gen("device-1", "v5"))],
            expect=got(("req-0/subReq-1", A, "pool-1", "device-1")),
        ),
        id="prioritized-list-allocation-mode-all-with-selectors",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", generations(V6, V5))],
            classes=CLASS_A,
            features=PL,
            slices=[
                slice_with_devices("slice-1", NODE1, "pool-1", A, gen("device-1", "v5")),
                slice_with_devices("slice-2", NODE1, "pool-2", A, gen("device-1", "v5")),
            ],
            expect=got(
                ("req-0/subReq-1", A, "pool-1", "device-1"),
                ("req-0/subReq-1", A, "pool-2", "device-1"),
            ),
        ),
        id="prioritized-list-allocation-mode-all-with-selectors-multiple-pools",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", generations(V6, V5))],
            classes=CLASS_A,
            features=PL,
            slices=[
                slice_with_devices("slice-1", NODE1, "pool-1", A, gen("device-1", "v5")),
                slice_with_devices(
                    "slice-2", NODE2, "pool-2", A, gen("device-1", "v5"), gen("device-2", "v6")
                ),
            ],
            expect=got(("req-0/subReq-1", A, "pool-1", "device-1")),
        ),
        id="prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", generations(V6, V5))],
            classes=[device_class("class-a", A, selectors=[f'device.attributes["{A}"].selected'])],
            features=PL,
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    gen("device-1", "v6", selected=False),
                    gen("device-2", "v5", selected=False),
                    gen("device-3", "v5", selected=True),
                )
            ],
            expect=got(("req-0/subReq-1", A, "pool-1", "device-3")),
        ),
        id="prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 5))],
            features=Features(),
            classes=CLASS_A,
            slices=[
                devices("slice-1", pool("pool-1", 2), A, "device-1", "device-2"),
                devices("slice-2", pool("pool-1", 2), A, "device-3", "device-4"),
            ],
            max_steps=16,
        ),
        id="check-combinations-within-single-request-single-pool-multiple-slices",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 5))],
            features=Features(),
            classes=CLASS_A,
            slices=[
                devices("slice-1", pool("pool-1", 2), A, "device-1"),
                devices("slice-2", pool("pool-1", 2), A, "device-2"),
                devices("slice-3", "pool-2", A, "device-3", "device-4"),
            ],
            max_steps=16,
        ),
        id="check-combinations-within-single-request-multiple-pools-multiple-slices",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-1",
                        sub_request("subReq-0", "class-a", 3, typed("Y")),
                        sub_request("subReq-1", "class-a", 2),
                    ),
                    prioritized(
                        "req-2",
                        sub_request("subReq-0", "class-a", 2),
                        sub_request("subReq-1", "class-a", 1, typed("X")),
                    ),
                )
            ],
            classes=CLASS_A,
            features=PL,
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1", attributes={"type": "X"}),
                    device("device-2", attributes={"type": "Y"}),
                    device("device-3", attributes={"type": "Y"}),
                )
            ],
            expect=got(
                ("req-1/subReq-1", A, "pool-1", "device-2"),
                ("req-1/subReq-1", A, "pool-1", "device-3"),
                ("req-2/subReq-1", A, "pool-1", "device-1"),
            ),
            max_steps=26,
        ),
        id="check-combinations-with-prioritized-list",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)
