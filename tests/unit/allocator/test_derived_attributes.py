"""DRADerivedAttributes (1.37 alpha, KEP-6080): per-request attributes computed by CEL.

Upstream's derived-attributes-* scenarios of v0.37.2, plus the texts of compile and
evaluation errors (both abort the allocation) and the gate-off refusal.
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
    local_node_selector,
    match,
    prioritized,
    request,
    result,
    slice_with_devices,
    sub_request,
)

from dra_operator.cel import CELFeatures, compile_derived
from dra_operator.errors import CELCompileError
from dra_operator.model import DeviceDerivedAttribute, DeviceRequest, DeviceSubRequest

A, B, EXAMPLE = "driver-a", "driver-b", "dra.example.com"
CLASSES = [device_class("class-a", A), device_class("class-b", B)]
LOCAL = local_node_selector()
DERIVED = Features(derived_attributes=True, release=37)


def deriving(req: DeviceRequest | DeviceSubRequest, **expressions: str):
    """The request with derived attributes; keyword `derived__x` names `derived/x`."""
    derived = tuple(
        DeviceDerivedAttribute(name=name.replace("__", "/"), expression=expression)
        for name, expression in expressions.items()
    )
    if isinstance(req, DeviceSubRequest):
        return replace(req, derived_attributes=derived)
    assert req.exactly is not None
    return replace(req, exactly=replace(req.exactly, derived_attributes=derived))


def attr_of(driver: str, name: str) -> str:
    return f'device.attributes["{driver}"]["{name}"]'


def devices(name: str, pool_: str, driver: str, *rows: tuple[str, dict[str, object]]):
    return slice_with_devices(
        name, NODE1, pool_, driver, *(device(d, driver=driver, attributes=a) for d, a in rows)
    )


SCENARIOS = [
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    deriving(
                        request("req-0", "class-a"), derived__sharedNumaNode=attr_of(A, "numa")
                    ),
                    deriving(
                        request("req-1", "class-b"),
                        derived__sharedNumaNode=attr_of(B, "numaNode"),
                    ),
                    constraints=[match("derived/sharedNumaNode", "req-0", "req-1")],
                )
            ],
            classes=CLASSES,
            features=DERIVED,
            slices=[
                devices(
                    "slice-1",
                    "pool-1",
                    A,
                    ("device-2", {"numa": "numa-0"}),
                    ("device-1", {"numa": "numa-1"}),
                ),
                devices(
                    "slice-2",
                    "pool-2",
                    B,
                    ("device-3", {"numaNode": "numa-1"}),
                    ("device-4", {"numaNode": "numa-2"}),
                ),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-1", B, "pool-2", "device-3"),
                )
            ],
            releases=(37,),
        ),
        id="derived-attributes",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    prioritized(
                        "req-0",
                        deriving(
                            sub_request("subReq-0", "class-a", 1), derived__match=attr_of(A, "foo")
                        ),
                        deriving(
                            sub_request("subReq-1", "class-a", 1), derived__match=attr_of(A, "bar")
                        ),
                    ),
                    deriving(request("req-1", "class-b"), derived__match=attr_of(B, "baz")),
                    constraints=[match("derived/match", "req-0", "req-1")],
                )
            ],
            classes=CLASSES,
            features=replace(DERIVED, prioritized_list=True),
            slices=[
                devices("slice-1", "pool-1", A, ("device-1", {"foo": "A", "bar": "B"})),
                devices("slice-2", "pool-2", B, ("device-2", {"baz": "B"})),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0/subReq-1", A, "pool-1", "device-1"),
                    result("req-1", B, "pool-2", "device-2"),
                )
            ],
            releases=(37,),
        ),
        id="derived-attributes-with-prioritized-list",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    deriving(
                        request("req-0", "class-a"),
                        **{"dra.example.com__myAttr": '"value-2"'},
                    ),
                    request("req-1", "class-a"),
                    constraints=[match("dra.example.com/myAttr", "req-0", "req-1")],
                )
            ],
            classes=[device_class("class-a", EXAMPLE)],
            features=DERIVED,
            slices=[
                devices(
                    "slice-1",
                    "pool-1",
                    EXAMPLE,
                    ("device-1", {"myAttr": "value-1"}),
                    ("device-2", {"myAttr": "value-2"}),
                )
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", EXAMPLE, "pool-1", "device-1"),
                    result("req-1", EXAMPLE, "pool-1", "device-2"),
                )
            ],
            releases=(37,),
        ),
        id="derived-attributes-override",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    deriving(
                        request("req-0", "class-a"), derived__missing=attr_of(A, "missingAttr")
                    ),
                    constraints=[match("derived/missing", "req-0")],
                )
            ],
            classes=CLASSES,
            features=DERIVED,
            slices=[devices("slice-1", "pool-1", A, ("device-1", {"existingAttr": "yes"}))],
            error="no such key: missingAttr",
            releases=(37,),
        ),
        id="derived-attributes-cel-missing-attribute",
    ),
    pytest.param(
        Case(
            claims=[
                claim(
                    "claim-0",
                    deriving(request("req-0", "class-a", 2), derived__myAttr=attr_of(A, "static")),
                    constraints=[match("derived/myAttr", "req-0")],
                )
            ],
            classes=CLASSES,
            features=DERIVED,
            slices=[
                devices(
                    "slice-1",
                    "pool-1",
                    A,
                    ("device-1", {"static": "value"}),
                    ("device-2", {"static": 1}),
                )
            ],
            releases=(37,),
        ),
        id="derived-attributes-type-mismatch",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)


def _one(expression: str, features: Features = DERIVED, **kw: object) -> Case:
    return Case(
        claims=[
            claim(
                "claim-0",
                deriving(request("req-0", "class-a"), derived__x=expression),
                constraints=[match("derived/x", "req-0")],
            )
        ],
        classes=CLASSES,
        features=features,
        slices=[devices("slice-1", "pool-1", A, ("device-1", {"numa": 1}))],
        releases=(37,),
        **kw,  # type: ignore[arg-type]
    )


def test_errors_name_the_attribute_and_device() -> None:
    check(
        _one(
            attr_of(A, "gone"),
            error=(
                "evaluate derived attribute derived/x on device driver-a/pool-1/device-1 failed: "
                "no such key: gone"
            ),
        )
    )
    check(
        _one(
            "1.5",
            error=(
                "compile derived attribute derived/x failed: must evaluate to a primitive scalar "
                "(string, integer, boolean, semver) or a list of these scalars, not double"
            ),
        )
    )


def test_a_request_with_derived_attributes_is_refused_with_the_gate_off() -> None:
    check(
        _one(
            attr_of(A, "numa"),
            features=Features.for_kubernetes("1.37"),
            error=(
                "claim claim-0, request req-0: cannot handle request with derived attributes, the "
                "feature is disabled"
            ),
        )
    )


def test_derived_values_are_not_visible_to_selectors() -> None:
    """A derived name is for constraints only: a selector reading it finds no such key."""
    req = request("req-0", "class-a", 1, 'device.attributes["derived"].x == 1')
    check(
        replace(
            _one(attr_of(A, "numa")),
            claims=[
                claim(
                    "claim-0",
                    deriving(req, derived__x=attr_of(A, "numa")),
                    constraints=[match("derived/x", "req-0")],
                )
            ],
            error="selector #0 on device driver-a/pool-1/device-1: CEL runtime error: no such key",
        )
    )


@pytest.mark.parametrize(
    ("expression", "kind", "value"),
    [
        ("[1, 2]", "ints", (1, 2)),
        ("[]", "strings", ()),
        ('semver("1.2.3")', "version", "1.2.3"),
        ("[true]", "bools", (True,)),
        ('["a", "b"]', "strings", ("a", "b")),
    ],
)
def test_values_convert_as_upstream(expression: str, kind: str, value: object) -> None:
    from dra_operator.cel import device_view

    got = compile_derived(expression, CELFeatures(expose_lists=True)).evaluate(
        device_view(A, device("d"))
    )
    assert got.kind is not None and got.kind.value == kind
    assert got.value == value


def test_a_map_result_does_not_compile() -> None:
    with pytest.raises(CELCompileError, match=r"not map\(string, int\)"):
        compile_derived('{"a": 1}', CELFeatures(expose_lists=True))
