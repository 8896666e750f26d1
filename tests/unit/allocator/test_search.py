"""The search: prioritized lists, backtracking, combination order, pruning and the budget.

Upstream's `expectNumAllocateOneInvocations` pins become `max_steps`: our search, with its
count-based and attribute-grouped pruning, never takes more steps than upstream's and picks the
same devices. The adversarial rows are cases where upstream backtracks exponentially.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from allocator_builders import (
    ALL,
    NODE1,
    Case,
    Features,
    allocation,
    check,
    claim,
    device,
    device_class,
    fake_selectors,
    local_node_selector,
    match,
    node,
    pool,
    prioritized,
    request,
    result,
    run,
    slice_with_devices,
    sub_request,
)

from dra_operator.allocator import Budget, Ledger, allocate
from dra_operator.model import DeviceID

A, B = "driver-a", "driver-b"
CLASS_A, CLASS_B = device_class("class-a", A), device_class("class-b", B)
LOCAL = local_node_selector()
TYPE_X = f'device.attributes["{A}"].type == "X"'


def mem(gi: int) -> str:
    return f'device.capacity["{A}"].memory.compareTo(quantity("{gi}Gi")) >= 0'


def many(name: str, pool_name: str, driver: str, count: int):
    return slice_with_devices(
        name,
        NODE1,
        pool_name,
        driver,
        *(device(f"device-{i}", driver=driver) for i in range(count)),
    )


def typed(name: str, kind: str, **kw: object):
    return device(name, attributes={"type": kind}, **kw)  # type: ignore[arg-type]


SCENARIOS = [
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-b"),
                        sub_request("subReq-1", "class-a"),
                    ),
                )
            ],
            classes=[CLASS_A, CLASS_B],
            slices=[slice_with_devices("slice-1", NODE1, "pool-1", A, device("device-1"))],
            expect=[allocation(LOCAL, result("req-0/subReq-1", A, "pool-1", "device-1"))],
        ),
        id="prioritized-list-first-unavailable",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-b"),
                        sub_request("subReq-1", "class-a"),
                    ),
                )
            ],
            classes=[CLASS_A, CLASS_B],
            slices=[slice_with_devices("slice-1", NODE1, "pool-1", A, device("device-1"))],
            features=Features(),
            error=(
                "claim claim-0, request req-0: has subrequests, "
                "but the DRAPrioritizedList feature is disabled"
            ),
        ),
        id="prioritized-list-disabled",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-b"),
                        sub_request("subReq-1", "class-b"),
                    ),
                )
            ],
            classes=[CLASS_A, CLASS_B],
            slices=[slice_with_devices("slice-1", NODE1, "pool-1", A, device("device-1"))],
            expect=None,
        ),
        id="prioritized-list-non-available",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", 1, mem(8)),
                        sub_request("subReq-1", "class-a", 1, mem(4)),
                    ),
                    request("req-1", "class-a", 1, mem(8)),
                )
            ],
            classes=[CLASS_A],
            slices=[
                slice_with_devices(
                    "slice-1", NODE1, "pool-1", A, device("device-1", capacity={"memory": "8Gi"})
                ),
                slice_with_devices(
                    "slice-2", NODE1, "pool-2", A, device("device-2", capacity={"memory": "4Gi"})
                ),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0/subReq-1", A, "pool-2", "device-2"),
                    result("req-1", A, "pool-1", "device-1"),
                )
            ],
        ),
        id="prioritized-list-with-backtracking",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-1", "class-a", 1, mem(8)),
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", 1, mem(8)),
                        sub_request("subReq-1", "class-a", 1, mem(4)),
                    ),
                )
            ],
            classes=[CLASS_A],
            slices=[
                slice_with_devices(
                    "slice-1", NODE1, "pool-1", A, device("device-1", capacity={"memory": "8Gi"})
                ),
                slice_with_devices(
                    "slice-2", NODE1, "pool-2", A, device("device-2", capacity={"memory": "4Gi"})
                ),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-1", A, "pool-1", "device-1"),
                    result("req-0/subReq-1", A, "pool-2", "device-2"),
                )
            ],
        ),
        id="prioritized-list-multi-request",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-b", 500),
                        sub_request("subReq-1", "class-a"),
                    ),
                )
            ],
            classes=[CLASS_A, CLASS_B],
            slices=[slice_with_devices("slice-1", NODE1, "pool-1", A, device("device-1"))],
            expect=[allocation(LOCAL, result("req-0/subReq-1", A, "pool-1", "device-1"))],
        ),
        id="prioritized-list-too-many-in-first-subrequest",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", 32),
                        sub_request("subReq-1", "class-a", 16),
                    ),
                    prioritized(
                        "req-1",
                        sub_request("subReq-0", "class-a", 32),
                        sub_request("subReq-1", "class-a", 16),
                    ),
                )
            ],
            classes=[CLASS_A],
            slices=[many("slice-1", "pool-1", A, 64)],
            expect=[
                allocation(
                    LOCAL,
                    *[result("req-0/subReq-1", A, "pool-1", f"device-{i}") for i in range(16)],
                    *[result("req-1/subReq-1", A, "pool-1", f"device-{i}") for i in range(16, 32)],
                )
            ],
            max_steps=75,
        ),
        id="prioritized-list-max-allocation-limit-request",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", 0, mode=ALL),
                        sub_request("subReq-1", "class-a", 2),
                    ),
                    request("req-1", "class-b", 2),
                )
            ],
            classes=[CLASS_A, CLASS_B],
            slices=[many("slice-1", "pool-1", A, 31), many("slice-2", "pool-2", B, 2)],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0/subReq-1", A, "pool-1", "device-0"),
                    result("req-0/subReq-1", A, "pool-1", "device-1"),
                    result("req-1", B, "pool-2", "device-0"),
                    result("req-1", B, "pool-2", "device-1"),
                )
            ],
            max_steps=42,
        ),
        id="prioritized-list-max-allocation-allocation-mode-all",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 5))],
            classes=[CLASS_A],
            slices=[
                slice_with_devices(
                    "slice-1", NODE1, "pool-1", A, *(device(f"device-{i}") for i in range(1, 5))
                )
            ],
            expect=None,
            max_steps=16,
        ),
        id="check-combinations-within-single-request-single-pool-single-slice",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 5))],
            classes=[CLASS_A],
            slices=[
                slice_with_devices(f"slice-{i}", NODE1, f"pool-{i}", A, device(f"device-{i}"))
                for i in range(1, 5)
            ],
            expect=None,
            max_steps=16,
        ),
        id="check-combinations-within-single-request-many-pools",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-1", "class-a", 2),
                    request("req-2", "class-a", 1, TYPE_X),
                )
            ],
            classes=[CLASS_A],
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    typed("device-1", "X"),
                    typed("device-2", "Y"),
                    typed("device-3", "Y"),
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-1", A, "pool-1", "device-2"),
                    result("req-1", A, "pool-1", "device-3"),
                    result("req-2", A, "pool-1", "device-1"),
                )
            ],
            max_steps=12,
        ),
        id="check-combinations-with-backtracking",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-1", "class-a", 2),
                    request("req-2", "class-a", 1, TYPE_X),
                )
            ],
            classes=[CLASS_A],
            slices=[
                slice_with_devices("slice-1", NODE1, pool("pool-1", 2), A, typed("device-1", "X")),
                slice_with_devices("slice-2", NODE1, pool("pool-1", 2), A, typed("device-2", "Y")),
                slice_with_devices(
                    "slice-3", NODE1, "pool-2", A, typed("device-3", "Y", binding=["IsPrepare"])
                ),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-1", A, "pool-1", "device-2"),
                    result("req-1", A, "pool-2", "device-3", binding=["IsPrepare"]),
                    result("req-2", A, "pool-1", "device-1"),
                )
            ],
            max_steps=12,
        ),
        id="check-combinations-with-backtracking-across-slices-and-pools",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)


def _numa_devices(count: int, groups: int):
    return [device(f"device-{i}", attributes={"numa": i % groups}) for i in range(count)]


def test_unmatched_constraint_fails_fast_where_upstream_backtracks() -> None:
    """6 of 48 devices with one NUMA value, 8 per value: upstream tries C(48, k) prefixes."""
    case = Case(
        claims=[claim("claim-0", request("req-0", "class-a", 9), constraints=[match(f"{A}/numa")])],
        classes=[CLASS_A],
        slices=[slice_with_devices("slice-1", NODE1, "pool-1", A, *_numa_devices(48, 6))],
        expect=None,
    )
    got = check(case)
    assert got is not None and got.steps < 200


def test_matching_group_is_found_without_exploring_the_others() -> None:
    case = Case(
        claims=[claim("claim-0", request("req-0", "class-a", 9), constraints=[match(f"{A}/numa")])],
        classes=[CLASS_A],
        slices=[
            slice_with_devices(
                "slice-1",
                NODE1,
                "pool-1",
                A,
                *_numa_devices(40, 5),
                *(device(f"extra-{i}", attributes={"numa": 4}) for i in range(3)),
            )
        ],
    )
    got = run(case)
    assert got.results is not None
    names = [r.device for r in got.results[0].devices.results]
    assert names == [f"device-{i}" for i in range(4, 40, 5)] + ["extra-0"]
    assert got.steps < 200


def test_step_budget_ends_the_search_with_an_explanation() -> None:
    case = Case(
        claims=[
            claim("claim-0", request("req-0", "class-a", 2), request("req-1", "class-a", 3, TYPE_X))
        ],
        classes=[CLASS_A],
        slices=[
            slice_with_devices(
                "slice-1",
                NODE1,
                "pool-1",
                A,
                *(typed(f"device-{i}", "Y") for i in range(30)),
                typed("device-x", "X"),
                typed("device-z", "X"),
            )
        ],
    )
    got = allocate(
        case.claims,
        classes=case.classes,
        slices=case.slices,
        node=node(),
        features=case.features,
        selectors=fake_selectors,
        budget=Budget(max_steps=5),
    )
    assert got.results is None and got.explanation is not None
    assert got.explanation.aborted
    assert got.explanation.summary == "search budget exhausted after 6 steps"


def test_deadline_ends_the_search_on_the_injected_clock() -> None:
    """Pigeonholes: 8 requests of 2 among 15 devices; each fits alone, together they cannot."""
    ticks = iter(range(0, 10**9, 5))
    case = Case(
        claims=[claim("claim-0", *(request(f"req-{i}", "class-a", 2) for i in range(8)))],
        classes=[CLASS_A],
        slices=[many("slice-1", "pool-1", A, 15)],
    )
    got = allocate(
        case.claims,
        classes=case.classes,
        slices=case.slices,
        node=node(),
        features=case.features,
        selectors=fake_selectors,
        budget=Budget(timeout=1.0, clock=lambda: float(next(ticks))),
    )
    assert got.explanation is not None and got.explanation.aborted
    assert got.explanation.steps == 256
    assert got.explanation.lines()[0] == "search budget exhausted after 256 steps"


def test_a_doomed_match_still_reaches_a_device_whose_selector_fails() -> None:
    """Once device-0 fixes NUMA 0, no device left can join it: the branch is cut, but only after
    judging the devices upstream's loop would visit. device-3's selector fails there, so the
    claim fails as upstream's does (checked with the oracle), instead of going on to pick
    device-1 and device-2."""
    ok = f'device.attributes["{A}"].ok'
    case = Case(
        claims=[
            claim(
                "claim-0",
                request("req-0", "class-a", 2, ok),
                constraints=[match(f"{A}/numa")],
                namespace="default",
            )
        ],
        classes=[CLASS_A],
        slices=[
            slice_with_devices(
                "slice-1",
                NODE1,
                "pool-1",
                A,
                device("device-0", attributes={"numa": 0, "ok": True}),
                device("device-1", attributes={"numa": 1, "ok": True}),
                device("device-2", attributes={"numa": 1, "ok": True}),
                device("device-3", attributes={"numa": 1}),
            )
        ],
        error="claim default/claim-0: selector #0: CEL runtime error: no such key: ok",
        releases=(36,),
    )
    check(case)
    # 1.37 names the device and adds upstream's hint for a missing key
    check(
        replace(
            case,
            error=(
                "claim default/claim-0: selector #0 on device driver-a/pool-1/device-3: CEL "
                "runtime error: no such key: ok. consider using CEL optional chaining (.? "
                "followed by orValue()) or guarding the check with has() for optional fields"
            ),
            releases=(37,),
        )
    )


def test_a_doomed_match_is_cut_at_its_first_device() -> None:
    """Three free devices per NUMA node and a claim for four on one node: a pick shows at once
    that its node cannot hold the rest (upstream tries every combination of the node's three
    devices first). The bench's match-attribute-heavy scenario is this shape."""
    busy = {i for i in range(64) if i % 8 >= 3 and i < 56}
    case = Case(
        claims=[claim("claim-0", request("req-0", "class-a", 4), constraints=[match(f"{A}/numa")])],
        classes=[CLASS_A],
        slices=[
            slice_with_devices(
                "slice-1",
                NODE1,
                "pool-1",
                A,
                *(device(f"gpu-{i}", attributes={"numa": i // 8}) for i in range(64)),
            )
        ],
        ledger=Ledger(exclusive=frozenset(DeviceID(A, "pool-1", f"gpu-{i}") for i in busy)),
        expect=[
            allocation(LOCAL, *(result("req-0", A, "pool-1", f"gpu-{i}") for i in range(56, 60)))
        ],
    )
    got = check(case)
    # The first step, one per free device of NUMA 0-6 (each cut one level down), then four
    # picks on NUMA 7 and the two ends; upstream takes 7 steps per NUMA node it rules out.
    assert got is not None and got.steps == 1 + 21 + 4 + 2
