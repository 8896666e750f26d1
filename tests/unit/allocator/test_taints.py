"""Device taints and request tolerations (upstream's "tainted-*" family and `ToleratesTaint`)."""

from __future__ import annotations

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
    request,
    result,
    slice_with_devices,
    sub_request,
    taint,
    toleration,
)

from dra_operator.allocator import Ledger
from dra_operator.model import DeviceID, tolerates

A, B = "driver-a", "driver-b"
CLASSES = [device_class("class-a", A), device_class("class-b", B)]
LOCAL = local_node_selector()
NO_SCHEDULE = taint("taint-key", "taint-value", "NoSchedule")
NO_EXECUTE = taint("taint-key", "taint-value-2", "NoExecute")
NONE = taint("taint-key", "taint-value", "None")
TOL_NO_SCHEDULE = toleration("taint-key", operator="Exists", effect="NoSchedule")
TOL_NO_EXECUTE = toleration("taint-key", "taint-value-2", effect="NoExecute")
TAINTS = Features(device_taints=True, admin_access=True, prioritized_list=True)
NO_TAINTS = Features(admin_access=True, prioritized_list=True)
TWO = [
    slice_with_devices(
        "slice-1",
        NODE1,
        "pool-1",
        A,
        device("device-1", taints=[NO_SCHEDULE]),
        device("device-2", taints=[NO_EXECUTE]),
    )
]
ONE_TAINTED = [
    slice_with_devices("slice-1", NODE1, "pool-1", A, device("device-1", taints=[NO_SCHEDULE]))
]
FIRST_B_THEN_A = prioritized(
    "req-0", sub_request("subReq-0", "class-b"), sub_request("subReq-1", "class-a")
)

SCENARIOS = [
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            slices=TWO,
            features=TAINTS,
        ),
        id="tainted-two-devices",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1", taints=[NO_SCHEDULE, NO_EXECUTE]),
                )
            ],
            features=TAINTS,
        ),
        id="tainted-one-device-two-taints",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", tolerations=[TOL_NO_EXECUTE]))],
            classes=CLASSES,
            slices=TWO,
            features=TAINTS,
            expect=[
                allocation(
                    LOCAL, result("req-0", A, "pool-1", "device-2", tolerations=[TOL_NO_EXECUTE])
                )
            ],
        ),
        id="tainted-two-devices-tolerated",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0", sub_request("subReq-0", "class-a", tolerations=[TOL_NO_EXECUTE])
                    ),
                )
            ],
            classes=CLASSES,
            slices=TWO,
            features=TAINTS,
            expect=[
                allocation(
                    LOCAL,
                    result("req-0/subReq-0", A, "pool-1", "device-2", tolerations=[TOL_NO_EXECUTE]),
                )
            ],
        ),
        id="tainted-two-devices-prioritized-list-tolerated",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            slices=[
                slice_with_devices("slice-1", NODE1, "pool-1", A, device("device-1", taints=[NONE]))
            ],
            features=TAINTS,
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="tainted-no-effect",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a", tolerations=[TOL_NO_SCHEDULE, TOL_NO_EXECUTE]),
                )
            ],
            classes=CLASSES,
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1", taints=[NO_SCHEDULE, NO_EXECUTE]),
                )
            ],
            features=TAINTS,
            expect=[
                allocation(
                    LOCAL,
                    result(
                        "req-0",
                        A,
                        "pool-1",
                        "device-1",
                        tolerations=[TOL_NO_SCHEDULE, TOL_NO_EXECUTE],
                    ),
                )
            ],
        ),
        id="tainted-one-device-two-taints-both-tolerated",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"))],
            classes=CLASSES,
            slices=ONE_TAINTED,
            features=NO_TAINTS,
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="tainted-disabled",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", FIRST_B_THEN_A)],
            classes=CLASSES,
            slices=ONE_TAINTED,
            features=TAINTS,
        ),
        id="tainted-prioritized-list",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", FIRST_B_THEN_A)],
            classes=CLASSES,
            slices=ONE_TAINTED,
            features=NO_TAINTS,
            expect=[allocation(LOCAL, result("req-0/subReq-1", A, "pool-1", "device-1"))],
        ),
        id="tainted-prioritized-list-disabled",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", admin=True))],
            classes=CLASSES,
            slices=ONE_TAINTED,
            features=TAINTS,
            ledger=Ledger(
                exclusive=frozenset(
                    {DeviceID(A, "pool-1", "device-1"), DeviceID(A, "pool-1", "device-2")}
                )
            ),
        ),
        id="tainted-admin-access",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", admin=True))],
            classes=CLASSES,
            slices=ONE_TAINTED,
            features=NO_TAINTS,
            ledger=Ledger(
                exclusive=frozenset(
                    {DeviceID(A, "pool-1", "device-1"), DeviceID(A, "pool-1", "device-2")}
                )
            ),
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1", admin=True))],
        ),
        id="tainted-admin-access-disabled",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", all_request("req-0", "class-a"))],
            classes=CLASSES,
            slices=ONE_TAINTED,
            features=TAINTS,
        ),
        id="tainted-all-devices-single",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", all_request("req-0", "class-a"))],
            classes=CLASSES,
            slices=ONE_TAINTED,
            features=NO_TAINTS,
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="tainted-all-devices-single-disabled",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)


@pytest.mark.parametrize(
    ("tol", "expected"),
    [
        pytest.param(toleration("taint-key", "taint-value"), True, id="equal-key-and-value"),
        pytest.param(toleration("taint-key", "other"), False, id="equal-other-value"),
        pytest.param(toleration("taint-key", operator="Exists"), True, id="exists-key"),
        pytest.param(toleration(operator="Exists"), True, id="exists-everything"),
        pytest.param(toleration("other", operator="Exists"), False, id="exists-other-key"),
        pytest.param(
            toleration("taint-key", "taint-value", operator=""), True, id="empty-operator-is-equal"
        ),
        pytest.param(toleration(operator="Exists", effect="NoExecute"), False, id="other-effect"),
        pytest.param(toleration("taint-key", operator="Bogus"), False, id="unknown-operator"),
    ],
)
def test_tolerates(tol, expected: bool) -> None:
    assert tolerates(tol, NO_SCHEDULE) is expected


def test_explanation_names_the_untolerated_taint() -> None:
    got = check(SCENARIOS[0].values[0])  # type: ignore[arg-type]
    assert got is not None and got.explanation is not None
    lines = got.explanation.lines()
    assert lines[0] == "not enough usable devices"
    assert lines[1] == (
        "claim claim-0, request req-0: 0/2 devices usable: "
        "1 with untolerated taint taint-key=taint-value-2:NoExecute, "
        "1 with untolerated taint taint-key=taint-value:NoSchedule"
    )


def test_explanation_counts_a_tainted_device_in_use_as_tainted() -> None:
    """Taints come before "in use" in the explanation, the order of explain's funnel."""
    case = Case(
        claims=[claim("claim-1", request("req-0", "class-a"))],
        classes=CLASSES,
        slices=[slice_with_devices("s", NODE1, "pool-1", A, device("d", taints=[NO_SCHEDULE]))],
        features=TAINTS,
        ledger=Ledger(exclusive=frozenset({DeviceID(A, "pool-1", "d")})),
    )
    got = check(case)
    assert got is not None and got.explanation is not None
    assert got.explanation.lines()[1] == (
        "claim claim-1, request req-0: 0/1 devices usable: "
        "1 with untolerated taint taint-key=taint-value:NoSchedule"
    )
