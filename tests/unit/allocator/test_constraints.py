"""matchAttribute and distinctAttribute (upstream's "with-constraint*" and distinct families).

Also pins the list-typed semantics behind DRAListTypeAttributes: intersections for
matchAttribute, pairwise disjoint sets for distinctAttribute.
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
    distinct,
    local_node_selector,
    match,
    prioritized,
    range_capacity,
    request,
    result,
    slice_with_devices,
    sub_request,
    version,
)

from dra_operator.allocator._constraints import DistinctAttribute, MatchAttribute
from dra_operator.model import AttributeKind, DeviceAttribute, DeviceConstraint

A = "driver-a"
CLASS_A = device_class("class-a", A)
MULTI_A = device_class("class-a", A, multi=True)
LOCAL = local_node_selector()
INT, VERSION, STRING, BOOL = (
    f"{A}/numa",
    f"{A}/driverVersion",
    f"{A}/stringAttribute",
    f"{A}/boolAttribute",
)
ALL4 = {
    "driverVersion": version("1.0.0"),
    "numa": 1,
    "stringAttribute": "stringAttributeValue",
    "boolAttribute": True,
}
TWO_REQUESTS = (request("req-0", "class-a"), request("req-1", "class-a"))


def devices_with(*attrs: dict, multi: bool | None = None, capacity=None):
    return slice_with_devices(
        "slice-1",
        NODE1,
        "pool-1",
        A,
        *(
            device(f"device-{i}", attributes=a, multi=multi, capacity=capacity)
            for i, a in enumerate(attrs, 1)
        ),
    )


def mismatch(key: str, first: object, second: object) -> dict[str, object]:
    return {"first": {**ALL4, key: first}, "second": {**ALL4, key: second}}


def not_matching(name: str, key: str, first: object, second: object, attribute: str):
    m = mismatch(key, first, second)
    return pytest.param(
        Case(
            claims=[claim("claim-0", *TWO_REQUESTS, constraints=[match(attribute)])],
            classes=[CLASS_A],
            slices=[devices_with(m["first"], m["second"])],
        ),
        id=name,
    )


SCENARIOS = [
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    *TWO_REQUESTS,
                    constraints=[match(INT), match(VERSION), match(STRING), match(BOOL)],
                )
            ],
            classes=[CLASS_A],
            slices=[devices_with(ALL4, ALL4)],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-1", A, "pool-1", "device-2"),
                )
            ],
        ),
        id="with-constraint",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a"),
                    constraints=[match(f"{A}/noSuchAttribute")],
                )
            ],
            classes=[CLASS_A],
            slices=[devices_with({})],
        ),
        id="with-constraint-non-existent-attribute",
    ),
    not_matching("with-constraint-not-matching-int-attribute", "numa", 1, 2, INT),
    not_matching(
        "with-constraint-not-matching-string-attribute", "stringAttribute", "a", "b", STRING
    ),
    not_matching("with-constraint-not-matching-bool-attribute", "boolAttribute", True, False, BOOL),
    not_matching(
        "with-constraint-not-matching-version-attribute",
        "driverVersion",
        version("1.0.0"),
        version("2.0.0"),
        VERSION,
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", all_request("req-0", "class-a"), constraints=[match(INT)])],
            classes=[CLASS_A],
            slices=[devices_with({"numa": 1}, {"numa": 2})],
            error=(
                "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
                "because a claim constraint would not be satisfied"
            ),
        ),
        id="with-constraint-not-matching-int-attribute-all-devices",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", *TWO_REQUESTS, constraints=[match(VERSION, "req-0")])],
            classes=[CLASS_A],
            slices=[
                devices_with(
                    {"driverVersion": version("1.0.0")}, {"driverVersion": version("2.0.0")}
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-1", A, "pool-1", "device-2"),
                )
            ],
        ),
        id="with-constraint-for-request",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0", *TWO_REQUESTS, constraints=[match(VERSION, "req-0"), match(STRING)]
                )
            ],
            classes=[CLASS_A],
            slices=[
                devices_with(
                    {"driverVersion": version("1.0.0"), "stringAttribute": "a"},
                    {"driverVersion": version("2.0.0"), "stringAttribute": "b"},
                    {"driverVersion": version("3.0.0"), "stringAttribute": "b"},
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-2"),
                    result("req-1", A, "pool-1", "device-3"),
                )
            ],
        ),
        id="with-constraint-for-request-retry",
    ),
    pytest.param(
        Case(
            claims=[
                claim("claim-0", request("req-0", "class-a"), constraints=[DeviceConstraint()])
            ],
            classes=[CLASS_A],
            slices=[devices_with({})],
            error="claim claim-0, constraint #0: empty constraint (unsupported constraint type?)",
        ),
        id="unknown-constraint",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    *(request(f"req-{i}", "class-a") for i in range(4)),
                    constraints=[
                        distinct(BOOL, "req-0", "req-1"),
                        distinct(VERSION, "req-0", "req-1", "req-2"),
                        distinct(INT, "req-0", "req-1", "req-2", "req-3"),
                    ],
                )
            ],
            classes=[CLASS_A],
            slices=[
                devices_with(
                    {"driverVersion": version("1.0.0"), "numa": 0, "boolAttribute": True},
                    {"driverVersion": version("1.0.1"), "numa": 1, "boolAttribute": False},
                    {"driverVersion": version("1.0.2"), "numa": 2, "boolAttribute": True},
                    {"driverVersion": version("1.0.0"), "numa": 3, "boolAttribute": True},
                    multi=True,
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    *(
                        result(f"req-{i}", A, "pool-1", f"device-{i + 1}", share=True)
                        for i in range(4)
                    ),
                )
            ],
        ),
        id="with-distinct-constraints",
    ),
    pytest.param(
        Case(
            claims=[
                claim("claim-0", request("req-0", "class-a"), constraints=[distinct(BOOL, "req-0")])
            ],
            classes=[CLASS_A],
            slices=[devices_with({}, multi=True)],
        ),
        id="with-distinct-constraints-attribute-not-set",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    *(
                        prioritized(
                            f"req-{i}",
                            sub_request(
                                "subReq-0", "class-a", 1, f'device.attributes["{A}"].boolAttribute'
                            ),
                            sub_request("subReq-1", "class-a"),
                        )
                        for i in range(3)
                    ),
                    constraints=[distinct(BOOL, "req-0", "req-1")],
                )
            ],
            classes=[CLASS_A],
            slices=[devices_with({"boolAttribute": True}, {"boolAttribute": False}, multi=True)],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0/subReq-0", A, "pool-1", "device-1", share=True),
                    result("req-1/subReq-1", A, "pool-1", "device-2", share=True),
                    result("req-2/subReq-0", A, "pool-1", "device-1", share=True),
                )
            ],
        ),
        id="with-distinct-constraints-with-subrequests",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a", capacity={"capacity-0": "1"}),
                    request("req-1", "class-a", capacity={"capacity-0": "1"}),
                    constraints=[distinct(STRING)],
                )
            ],
            classes=[MULTI_A],
            slices=[
                devices_with(
                    {"stringAttribute": "stringAttributeValue"},
                    multi=True,
                    capacity={"capacity-0": range_capacity("2")},
                )
            ],
        ),
        id="distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", 2),
                        sub_request("subReq-1", "class-a", 1),
                    ),
                    constraints=[match(INT, "req-0")],
                )
            ],
            classes=[CLASS_A],
            slices=[devices_with({"numa": 1}, {"numa": 2})],
            expect=[allocation(LOCAL, result("req-0/subReq-1", A, "pool-1", "device-1"))],
        ),
        id="prioritized-list-with-constraints-ref-parent-request",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        sub_request("subReq-0", "class-a", 2),
                        sub_request("subReq-1", "class-a", 1),
                    ),
                    constraints=[match(INT, "req-0/subReq-0")],
                )
            ],
            classes=[CLASS_A],
            slices=[devices_with({"numa": 1}, {"numa": 2}, {"numa": 1})],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0/subReq-0", A, "pool-1", "device-1"),
                    result("req-0/subReq-0", A, "pool-1", "device-3"),
                )
            ],
        ),
        id="prioritized-list-with-constraints-ref-sub-request",
    ),
]


LIST_FEATURES = Features(list_type_attributes=True, consumable_capacity=True)


def _strings(*values: str) -> DeviceAttribute:
    return DeviceAttribute(kind=AttributeKind.STRINGS, value=values)


def _listed(count: int, constraint: DeviceConstraint, *values: object, features=LIST_FEATURES):  # type: ignore[no-untyped-def]
    return Case(
        claims=[claim("claim-0", request("req-0", "class-a", count), constraints=[constraint])],
        classes=[CLASS_A],
        features=features,
        slices=[devices_with(*({"stringAttribute": v} for v in values))],
    )


DISABLED_MATCH_LISTS = _listed(
    2,
    match(STRING),
    _strings("value1", "value2"),
    _strings("value2", "value3"),
    features=Features(),
)

LIST_SCENARIOS = [
    pytest.param(
        replace(
            _listed(2, match(STRING), _strings("value1", "value2"), _strings("value2", "value3")),
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-0", A, "pool-1", "device-2"),
                )
            ],
        ),
        id="list-attributes-match-constaint-list-of-string-values-with-common-elements",
    ),
    pytest.param(
        _listed(
            3,
            match(STRING),
            _strings("value1", "value2"),
            _strings("value2", "value3"),
            _strings("value3", "value1"),
        ),
        id="list-attributes-match-constaint-list-of-string-values-with-partially-common-elements",
    ),
    pytest.param(
        _listed(2, match(STRING), "value1", _strings("value2", "value3")),
        id="list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements",
    ),
    pytest.param(
        replace(DISABLED_MATCH_LISTS, error="unsupported attribute value", releases=(36,)),
        id="list-attributes-disabled-match-constraint-with-lists",
    ),
    pytest.param(
        replace(DISABLED_MATCH_LISTS, releases=(37,)),  # 1.37: lists reach CEL, no error
        id="list-attributes-disabled-match-constraint-with-lists/1.37",
    ),
    pytest.param(
        replace(
            _listed(2, distinct(STRING), "value1", "value2"),
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-0", A, "pool-1", "device-2"),
                )
            ],
        ),
        id="list-attributes-distinct-constraint-scalar-string-values-all-distinct",
    ),
    pytest.param(
        _listed(
            2,
            distinct(STRING),
            _strings("value1", "value2", "value3"),
            _strings("value2", "value4", "value5"),
        ),
        id="list-attributes-distinct-constraint-list-of-string-values-with-common-elements",
    ),
]


def _one_request(count: int, key: str, *values: object, requests: int = 1) -> Case:
    """`count` devices for req-0 (and one for req-1 when `requests` is 2) under one
    distinctAttribute; device i has values[i - 1] (None: no attribute)."""
    attribute = {"numa": INT, "stringAttribute": STRING}[key]
    wanted = [request("req-0", "class-a", count)]
    if requests == 2:
        wanted.append(request("req-1", "class-a"))
    return Case(
        claims=[claim("claim-0", *wanted, constraints=[distinct(attribute)])],
        classes=[CLASS_A],
        features=Features(consumable_capacity=True),
        slices=[devices_with(*({key: v} if v is not None else {} for v in values))],
        releases=(37,),
    )


def _picked(*numbers: int) -> list:  # type: ignore[type-arg]
    return [allocation(LOCAL, *(result("req-0", A, "pool-1", f"device-{i}") for i in numbers))]


# 1.37 (#140600): distinctAttribute compares every device, also those of one request.
DISTINCT_PER_DEVICE = [
    pytest.param(
        _one_request(3, "stringAttribute", "value1", "value2", "value1"),
        id="distinct-constraint-single-request-count-3-not-distinct",
    ),
    pytest.param(
        replace(
            _one_request(3, "stringAttribute", "value1", "value2", "value3"),
            expect=_picked(1, 2, 3),
        ),
        id="distinct-constraint-single-request-count-3-all-distinct",
    ),
    pytest.param(
        _one_request(2, "stringAttribute", "value1", "value2", "value1", requests=2),
        id="distinct-constraint-two-requests-with-count-not-distinct",
    ),
    pytest.param(
        _one_request(3, "numa", None, None, None),
        id="distinct-constraint-single-request-multiple-devices-attribute-not-set",
    ),
    pytest.param(
        _one_request(3, "numa", 1, 2, 2, 2),
        id="distinct-constraint-single-request-not-enough-distinct-values",
    ),
    pytest.param(
        replace(_one_request(3, "numa", 1, 2, 1, 3), expect=_picked(1, 2, 4)),
        id="distinct-constraint-single-request-multiple-devices-attribute-set",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS + LIST_SCENARIOS + DISTINCT_PER_DEVICE)
def test_scenario(case: Case) -> None:
    check(case)


def _ints(*values: int) -> DeviceAttribute:
    return DeviceAttribute(kind=AttributeKind.INTS, value=values)


LISTS = Features(list_type_attributes=True)


@pytest.mark.parametrize(
    ("values", "fits"),
    [
        pytest.param([_ints(1, 2), _ints(2, 3)], True, id="lists-intersect"),
        pytest.param([_ints(1, 2), _ints(3)], False, id="lists-disjoint"),
        pytest.param([_ints(1, 2), 2, _ints(2, 5)], True, id="scalar-in-list"),
        pytest.param([_ints(1, 2), _ints(2, 3), _ints(1)], False, id="intersection-shrinks"),
        pytest.param([_ints(1), "1"], False, id="type-mismatch"),
        pytest.param([_ints()], False, id="empty-list"),
    ],
)
def test_list_typed_match_attribute_keeps_a_non_empty_intersection(values, fits: bool) -> None:
    constraint = MatchAttribute(requests=frozenset(), attribute=INT, list_types=True)
    added = [constraint.add("req-0", "", device("d", attributes={"numa": v}), A) for v in values]
    assert all(added) is fits


@pytest.mark.parametrize(
    ("values", "fits"),
    [
        pytest.param([_ints(1, 2), _ints(3, 4)], True, id="disjoint"),
        pytest.param([_ints(1, 2), _ints(2, 4)], False, id="overlap"),
        pytest.param([3, _ints(1, 2)], True, id="scalar-and-list-disjoint"),
        pytest.param([_ints(1), "1"], True, id="other-types-never-intersect"),
        pytest.param([_ints(1), _ints()], False, id="empty-list-has-no-set"),
    ],
)
def test_list_typed_distinct_attribute_needs_disjoint_sets(values, fits: bool) -> None:
    constraint = DistinctAttribute(requests=frozenset(), attribute=INT, list_types=True)
    added = [
        constraint.add(f"req-{i}", "", device("d", attributes={"numa": v}), A)
        for i, v in enumerate(values)
    ]
    assert all(added) is fits


def test_scalar_match_rejects_list_attributes_without_the_feature() -> None:
    constraint = MatchAttribute(requests=frozenset(), attribute=INT)
    assert constraint.add("req-0", "", device("d", attributes={"numa": _ints(1)}), A)
    assert not constraint.add("req-0", "", device("e", attributes={"numa": _ints(1)}), A)
    assert LISTS.list_type_attributes


def test_stable_tier_does_not_know_distinct_attribute() -> None:
    check(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a"), constraints=[distinct(INT)])],
            classes=[CLASS_A],
            features=Features(),
            slices=[devices_with({"numa": 1})],
            error="claim claim-0, constraint #0: empty constraint (unsupported constraint type?)",
        )
    )
