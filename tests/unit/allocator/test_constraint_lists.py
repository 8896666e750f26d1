"""Upstream's list-attributes family and the remaining distinct-constraint scenarios.

Behind DRAListTypeAttributes a matchAttribute keeps the non-empty intersection of the values
seen so far and a distinctAttribute needs pairwise disjoint sets; scalars count as one-element
lists. An attribute with no value (or an empty list) is a fatal "unsupported attribute value".
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
    device,
    device_class,
    distinct,
    local_node_selector,
    match,
    pool,
    range_capacity,
    request,
    result,
    slice_with_devices,
)

from dra_operator.model import AttributeKind, DeviceAttribute, DeviceConstraint

A = "driver-a"
CLASS_A = device_class("class-a", A)
LOCAL = local_node_selector()
INT, VERSION, STRING, BOOL = (
    f"{A}/numa",
    f"{A}/driverVersion",
    f"{A}/stringAttribute",
    f"{A}/boolAttribute",
)
KEYS = {INT: "numa", VERSION: "driverVersion", STRING: "stringAttribute", BOOL: "boolAttribute"}
MATCH_LISTS = Features(list_type_attributes=True)
DISTINCT_LISTS = Features(list_type_attributes=True, consumable_capacity=True)
NO_VALUE = DeviceAttribute(kind=None)


def strings(*values: str) -> DeviceAttribute:
    return DeviceAttribute(kind=AttributeKind.STRINGS, value=values)


def ints(*values: int) -> DeviceAttribute:
    return DeviceAttribute(kind=AttributeKind.INTS, value=values)


def bools(*values: bool) -> DeviceAttribute:
    return DeviceAttribute(kind=AttributeKind.BOOLS, value=values)


def versions(*values: str) -> DeviceAttribute:
    return DeviceAttribute(kind=AttributeKind.VERSIONS, value=values)


def one_request(
    count: int,
    constraint: DeviceConstraint,
    *values: object,
    features: Features,
    picked: tuple[int, ...] = (),
    error: str = "",
) -> Case:
    """`count` devices of one request under `constraint`; device i has values[i - 1]."""
    key = KEYS[constraint.match_attribute or constraint.distinct_attribute or ""]
    devices = [device(f"device-{i}", attributes={key: v}) for i, v in enumerate(values, 1)]
    expect = [allocation(LOCAL, *(result("req-0", A, "pool-1", f"device-{i}") for i in picked))]
    return Case(
        claims=[claim("claim-0", request("req-0", "class-a", count), constraints=[constraint])],
        classes=[CLASS_A],
        features=features,
        slices=[slice_with_devices("slice-1", NODE1, "pool-1", A, *devices)],
        expect=expect if picked else None,
        error=error,
    )


UNSUPPORTED = "unsupported attribute value"

DISABLED_DISTINCT_LISTS = one_request(
    2,
    distinct(STRING),
    strings("value1", "value2", "value3"),
    strings("value2", "value3", "value4"),
    features=Features(consumable_capacity=True),
)

SCENARIOS = [
    pytest.param(
        one_request(2, match(STRING), "value1", "value1", features=MATCH_LISTS, picked=(1, 2)),
        id="list-attributes-match-constaint-scalar-string-values",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a"),
                    request("req-0", "class-a"),
                    constraints=[match(STRING)],
                )
            ],
            classes=[CLASS_A],
            features=MATCH_LISTS,
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1", attributes={"stringAttribute": strings("value1", "value2")}),
                    device("device-2", attributes={"stringAttribute": strings("value3", "value4")}),
                )
            ],
        ),
        id="list-attributes-match-constaint-list-of-string-values-without-common-elements",
    ),
    pytest.param(
        one_request(
            2,
            match(STRING),
            "value1",
            strings("value1", "value2"),
            features=MATCH_LISTS,
            picked=(1, 2),
        ),
        id="list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements",
    ),
    pytest.param(
        one_request(
            3,
            match(STRING),
            "value1",
            strings("value1", "value2"),
            strings("value2", "value3"),
            features=MATCH_LISTS,
        ),
        id="list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements",
    ),
    pytest.param(
        one_request(
            2, match(INT), ints(0, 1, 2), ints(1, 2, 3), features=MATCH_LISTS, picked=(1, 2)
        ),
        id="list-attributes-match-constaint-list-of-int-values-with-common-elements",
    ),
    pytest.param(
        one_request(
            2, match(BOOL), bools(True, False), bools(True), features=MATCH_LISTS, picked=(1, 2)
        ),
        id="list-attributes-match-constaint-list-of-bool-values-with-common-elements",
    ),
    pytest.param(
        one_request(
            2,
            match(VERSION),
            versions("1.0.0", "1.1.0", "2.0.0"),
            versions("1.1.0", "2.0.0", "2.1.0"),
            features=MATCH_LISTS,
            picked=(1, 2),
        ),
        id="list-attributes-match-constaint-list-of-version-values-with-common-elements",
    ),
    pytest.param(
        one_request(2, match(STRING), NO_VALUE, strings(), features=MATCH_LISTS, error=UNSUPPORTED),
        id="list-attributes-match-constaint-with-empty-or-unknown-type",
    ),
    pytest.param(
        one_request(2, distinct(STRING), "value1", "value1", features=DISTINCT_LISTS),
        id="list-attributes-distinct-constraint-scalar-string-values-not-distinct",
    ),
    pytest.param(
        one_request(
            2,
            distinct(STRING),
            strings("value1", "value2"),
            strings("value2", "value3"),
            strings("value3", "value4"),
            features=DISTINCT_LISTS,
            picked=(1, 3),
        ),
        id="list-attributes-distinct-constraint-list-of-string-values-all-distinct",
    ),
    pytest.param(
        one_request(
            2,
            distinct(STRING),
            "value1",
            strings("value1", "value2"),
            strings("value2", "value3"),
            features=DISTINCT_LISTS,
            picked=(1, 3),
        ),
        id="list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct",
    ),
    pytest.param(
        one_request(
            2, distinct(STRING), "value1", strings("value1", "value2"), features=DISTINCT_LISTS
        ),
        id="list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements",
    ),
    pytest.param(
        one_request(
            2,
            distinct(INT),
            ints(0, 1),
            ints(1, 2),
            ints(2, 3),
            features=DISTINCT_LISTS,
            picked=(1, 3),
        ),
        id="list-attributes-distinct-constraint-list-of-int-values-all-distinct",
    ),
    pytest.param(
        one_request(
            2,
            distinct(BOOL),
            bools(True),
            bools(True, False),
            bools(False),
            features=DISTINCT_LISTS,
            picked=(1, 3),
        ),
        id="list-attributes-distinct-constraint-list-of-bool-values-all-distinct",
    ),
    pytest.param(
        one_request(
            2,
            distinct(VERSION),
            versions("1.0.0", "1.1.0"),
            versions("1.1.0", "2.0.0"),
            versions("2.0.0", "2.1.0"),
            features=DISTINCT_LISTS,
            picked=(1, 3),
        ),
        id="list-attributes-distinct-constraint-list-of-version-values-all-distinct",
    ),
    pytest.param(
        one_request(
            2, distinct(VERSION), versions(), NO_VALUE, features=DISTINCT_LISTS, error=UNSUPPORTED
        ),
        id="list-attributes-distinct-constaint-with-empty-or-unknown-type",
    ),
    pytest.param(
        replace(DISABLED_DISTINCT_LISTS, error=UNSUPPORTED, releases=(36,)),
        id="list-attributes-disabled-distinct-constraint-with-lists",
    ),
    pytest.param(
        replace(DISABLED_DISTINCT_LISTS, releases=(37,)),  # 1.37: lists reach CEL, no error
        id="list-attributes-disabled-distinct-constraint-with-lists/1.37",
    ),
    pytest.param(
        Case(
            claims=[
                claim("claim-0", request("req-0", "class-a"), constraints=[distinct(BOOL, "req-0")])
            ],
            classes=[CLASS_A],
            features=Features(consumable_capacity=True),
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    device("device-1", attributes={"boolAttribute": NO_VALUE}, multi=True),
                )
            ],
            error=UNSUPPORTED,
        ),
        id="with-distinct-constraints-unknown-type-attribute",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", "class-a", capacity={"capacity-0": "2"}),
                    request("req-1", "class-a", capacity={"capacity-0": "2"}),
                    constraints=[distinct(STRING)],
                )
            ],
            classes=[device_class("class-a", A, multi=True)],
            features=Features(consumable_capacity=True),
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    pool("pool-1", 2),
                    A,
                    device(
                        f"device-{i}",
                        attributes={"stringAttribute": f"stringAttributeValue{i}"},
                        multi=True,
                        capacity={"capacity-0": range_capacity("4")},
                    ),
                )
                for i in (1, 2)
            ],
            expect=[
                allocation(
                    LOCAL,
                    result(
                        "req-0", A, "pool-1", "device-1", share=True, consumed={"capacity-0": "2"}
                    ),
                    result(
                        "req-1", A, "pool-1", "device-2", share=True, consumed={"capacity-0": "2"}
                    ),
                )
            ],
        ),
        id="distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
    ),
]


NUMA_NODE = "resource.kubernetes.io/numaNode"


def _numa_nodes(*lists: tuple[int, ...], picked: tuple[int, ...] = ()) -> Case:
    """KEP-6072: two devices of one request matched on their int-list numaNode."""
    devices = [
        device(f"device-{i}", attributes={NUMA_NODE: ints(*values)})
        for i, values in enumerate(lists, 1)
    ]
    expect = [allocation(LOCAL, *(result("req-0", A, "pool-1", f"device-{i}") for i in picked))]
    return Case(
        claims=[claim("claim-0", request("req-0", "class-a", 2), constraints=[match(NUMA_NODE)])],
        classes=[CLASS_A],
        features=MATCH_LISTS,
        slices=[slice_with_devices("slice-1", NODE1, "pool-1", A, *devices)],
        expect=expect if picked else None,
        releases=(37,),
    )


# Upstream's 1.37 additions to this family (v0.37.2).
SCENARIOS_137 = [
    pytest.param(
        replace(
            one_request(3, distinct(STRING), "value1", "value2", "value1", features=DISTINCT_LISTS),
            releases=(37,),
        ),
        id="list-attributes-distinct-constraint-single-request-count-3-not-distinct",
    ),
    pytest.param(
        replace(
            one_request(
                3,
                distinct(STRING),
                "value1",
                "value2",
                "value3",
                features=DISTINCT_LISTS,
                picked=(1, 2, 3),
            ),
            releases=(37,),
        ),
        id="list-attributes-distinct-constraint-single-request-count-3-all-distinct",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    *(request(f"req-{i}", "class-a") for i in range(3)),
                    constraints=[distinct(STRING, "req-0", "req-1", "req-2")],
                )
            ],
            classes=[CLASS_A],
            features=DISTINCT_LISTS,
            slices=[
                slice_with_devices(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    A,
                    *(
                        device(name, attributes={"stringAttribute": strings(*values)})
                        for name, values in (
                            ("device-1", ("value1", "value2", "value3")),
                            ("device-2", ("value3", "value4", "value5")),
                            ("device-3", ("value1", "value2")),
                            ("device-4", ("value3", "value4")),
                            ("device-0", ("value5", "value6")),
                        )
                    ),
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-3"),
                    result("req-1", A, "pool-1", "device-4"),
                    result("req-2", A, "pool-1", "device-0"),
                )
            ],
            releases=(37,),
        ),
        id="list-attributes-distinct-constraint-backtrack-needs-remove",
    ),
    pytest.param(
        replace(
            one_request(
                3,
                match(STRING),
                strings("value1", "value2"),
                strings("value1"),
                strings("value2"),
                strings("value2"),
                features=MATCH_LISTS,
                picked=(1, 3, 4),
            ),
            releases=(37,),
        ),
        id="list-attributes-match-constraint-backtrack-needs-intersection-restore",
    ),
    pytest.param(
        _numa_nodes((4,), (4, 5, 6, 7), picked=(1, 2)),
        id="numanode-matchattribute-overlapping-lists-are-co-placed",
    ),
    pytest.param(
        _numa_nodes((0,), (4, 5, 6, 7)),
        id="numanode-matchattribute-disjoint-lists-are-not-allocated",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS + SCENARIOS_137)
def test_scenario(case: Case) -> None:
    check(case)
