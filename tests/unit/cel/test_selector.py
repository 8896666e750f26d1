"""Conformance of compiled selectors on the reference device: the core language and DRA access."""

from __future__ import annotations

import pytest

from dra_operator import cel
from dra_operator.errors import CELCompileError

MATCH_TRUE = ("match", True)
MATCH_FALSE = ("match", False)

CORE = [
    # device access
    pytest.param('device.driver == "gpu.example.com"', MATCH_TRUE, id="driver-equality"),
    pytest.param('device.driver != "gpu.example.com"', MATCH_FALSE, id="driver-inequality"),
    pytest.param('device.attributes["gpu.example.com"].model == "a100"', MATCH_TRUE, id="attr-eq"),
    pytest.param(
        'device.attributes["gpu.example.com"]["model"] == "a100"', MATCH_TRUE, id="attr-index"
    ),
    pytest.param('device.attributes["gpu.example.com"].cores >= 64', MATCH_TRUE, id="attr-int"),
    pytest.param('device.attributes["gpu.example.com"].enabled', MATCH_TRUE, id="bare-bool-attr"),
    pytest.param('device.attributes["numa.example.com"].node == 1', MATCH_TRUE, id="other-domain"),
    pytest.param(
        'device.attributes["nope.example.com"].size() == 0', MATCH_TRUE, id="unknown-domain-empty"
    ),
    pytest.param("has(device.attributes.nope)", MATCH_TRUE, id="has-unknown-domain"),
    pytest.param('"nope.example.com" in device.attributes', MATCH_FALSE, id="in-unknown-domain"),
    pytest.param('"gpu.example.com" in device.attributes', MATCH_TRUE, id="in-known-domain"),
    pytest.param('has(device.attributes["gpu.example.com"].model)', MATCH_TRUE, id="has-id"),
    pytest.param('has(device.attributes["gpu.example.com"].nope)', MATCH_FALSE, id="has-no-id"),
    pytest.param(
        'device.attributes["gpu.example.com"].nope == 1',
        ("runtime", "no such key: nope"),
        id="missing-id",
    ),
    pytest.param(
        'device.attributes["gpu.example.com"]["nope"] == 1',
        ("runtime", "no such key: nope"),
        id="missing-id-index",
    ),
    pytest.param(
        'device.attributes["gpu.example.com"].cores',
        (
            "runtime",
            "CEL result of type int could not be converted to bool: "
            "unsupported type conversion from 'int' to bool",
        ),
        id="non-bool-result",
    ),
    pytest.param("device.allowMultipleAllocations", MATCH_FALSE, id="gated-field-reads-false"),
    # semver and quantity
    pytest.param(
        'device.attributes["gpu.example.com"].driverVersion == semver("1.4.2")',
        MATCH_TRUE,
        id="semver-eq-ignores-build",
    ),
    pytest.param(
        'device.attributes["gpu.example.com"].driverVersion == "1.4.2"',
        ("runtime", "no such overload"),
        id="semver-eq-string-errs",
    ),
    pytest.param(
        '"1.4.2" == device.attributes["gpu.example.com"].driverVersion',
        MATCH_FALSE,
        id="string-eq-semver-false",
    ),
    pytest.param(
        'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))',
        MATCH_TRUE,
        id="semver-gt",
    ),
    pytest.param(
        'device.attributes["gpu.example.com"].driverVersion.major() == 1',
        MATCH_TRUE,
        id="semver-major",
    ),
    pytest.param('semver("1.2.3-alpha").isLessThan(semver("1.2.3"))', MATCH_TRUE, id="semver-pre"),
    pytest.param(
        'semver("1.2.3-alpha.1").compareTo(semver("1.2.3-alpha.beta")) == -1',
        MATCH_TRUE,
        id="semver-pre-numeric-first",
    ),
    pytest.param('semver("v1.02", true) == semver("1.2.0")', MATCH_TRUE, id="semver-normalize"),
    pytest.param('isSemver("1.2")', MATCH_FALSE, id="is-semver-short"),
    pytest.param('isSemver("1.2", true)', MATCH_TRUE, id="is-semver-normalize"),
    pytest.param(
        'semver("1.2") == semver("1.2.0")',
        ("runtime", "No Major.Minor.Patch elements found"),
        id="semver-error",
    ),
    pytest.param(
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0',
        MATCH_TRUE,
        id="quantity-compare",
    ),
    pytest.param(
        'device.capacity["gpu.example.com"].memory == quantity("40960Mi")',
        MATCH_TRUE,
        id="quantity-numeric-eq",
    ),
    pytest.param(
        'device.capacity["gpu.example.com"].memory == "40Gi"',
        ("compile", None),
        id="quantity-eq-string-compile-error",
    ),
    pytest.param(
        'device.capacity["gpu.example.com"].memory == dyn("40Gi")',
        MATCH_FALSE,
        id="quantity-eq-other-false",
    ),
    pytest.param(
        "dyn(true)",
        ("compile", "must evaluate to bool or the unknown type, not dyn"),
        id="dyn-result-rejected",
    ),
    pytest.param(
        'device.capacity["gpu.example.com"].slices.asInteger() == 7',
        MATCH_TRUE,
        id="quantity-as-integer",
    ),
    pytest.param(
        'device.capacity["gpu.example.com"].power.isInteger()',
        MATCH_FALSE,
        id="quantity-is-integer",
    ),
    pytest.param(
        'device.capacity["gpu.example.com"].power.asInteger() == 0',
        ("runtime", "cannot convert value to integer"),
        id="quantity-as-integer-err",
    ),
    pytest.param(
        'device.capacity["gpu.example.com"].power.asApproximateFloat() == 0.25',
        MATCH_TRUE,
        id="quantity-float",
    ),
    pytest.param(
        'quantity("1Gi").add(quantity("1Gi")) == quantity("2Gi")', MATCH_TRUE, id="quantity-add"
    ),
    pytest.param(
        'quantity("1").sub(2).isLessThan(quantity("0"))', MATCH_TRUE, id="quantity-sub-int"
    ),
    pytest.param('sign(quantity("-1m")) == -1', MATCH_TRUE, id="quantity-sign"),
    pytest.param('isQuantity("1Zi")', MATCH_FALSE, id="is-quantity"),
    pytest.param(
        'quantity("1Zi") == quantity("1")',
        (
            "runtime",
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        id="quantity-error",
    ),
    pytest.param(
        'quantity("1").compareTo(semver("1.0.0")) == 0', ("compile", None), id="quantity-semver-mix"
    ),
    # logic and error absorption
    pytest.param("(1/0 == 1) && false", MATCH_FALSE, id="and-absorbs-left"),
    pytest.param("false && (1/0 == 1)", MATCH_FALSE, id="and-short-circuit"),
    pytest.param("(1/0 == 1) || true", MATCH_TRUE, id="or-absorbs-left"),
    pytest.param("(1/0 == 1) && true", ("runtime", "division by zero"), id="and-keeps-error"),
    pytest.param("(1 % 0 == 1) || (1/0 == 1)", ("runtime", "modulus by zero"), id="first-error"),
    pytest.param(
        'device.attributes["gpu.example.com"].cores && false', MATCH_FALSE, id="non-bool-and-false"
    ),
    pytest.param(
        'device.attributes["gpu.example.com"].cores && true',
        ("runtime", "no such overload"),
        id="non-bool-and-true",
    ),
    pytest.param(
        'device.attributes["gpu.example.com"].cores && (1/0 == 1)',
        ("runtime", "no such overload"),
        id="non-bool-left-outranks-right-error",
    ),
    pytest.param(
        'true && device.attributes["gpu.example.com"].missing',
        ("runtime", "no such key: missing"),
        id="bool-left-keeps-right-error",
    ),
    pytest.param("true ? true : 1/0 == 1", MATCH_TRUE, id="ternary-lazy"),
    pytest.param("!(1 > 2)", MATCH_TRUE, id="not"),
    # numbers
    pytest.param("dyn(1) == 1.0", MATCH_TRUE, id="heterogeneous-eq"),
    pytest.param("dyn(1u) == 1", MATCH_TRUE, id="heterogeneous-uint-eq"),
    pytest.param('dyn(1) == "1"', MATCH_FALSE, id="heterogeneous-eq-string"),
    pytest.param("dyn(true) == 1", MATCH_FALSE, id="bool-is-not-int"),
    pytest.param("1 == 1.0", ("compile", None), id="literal-mixed-eq"),
    pytest.param("1 < 1.5", MATCH_TRUE, id="cross-type-order"),
    pytest.param("2u > 1", MATCH_TRUE, id="uint-int-order"),
    pytest.param("9223372036854775807 + 1 > 0", ("runtime", "integer overflow"), id="overflow"),
    pytest.param("-9223372036854775808 - 1 < 0", ("runtime", "integer overflow"), id="underflow"),
    pytest.param("0u - 1u == 0u", ("runtime", "unsigned integer overflow"), id="uint-overflow"),
    pytest.param(
        "-9223372036854775808 / -1 == 0", ("runtime", "integer overflow"), id="div-overflow"
    ),
    pytest.param("-7 / 2 == -3 && -7 % 2 == -1", MATCH_TRUE, id="truncating-division"),
    pytest.param("1.0 / 0.0 > 1.0", MATCH_TRUE, id="double-div-zero-inf"),
    pytest.param("9223372036854775808 > 0", ("compile", None), id="int-literal-range"),
    # macros and bind
    pytest.param('["a", "b"].exists(x, x == "b")', MATCH_TRUE, id="exists"),
    pytest.param("[1, 2, 3].all(x, x > 0)", MATCH_TRUE, id="all"),
    pytest.param("[1, 2, 3].exists_one(x, x > 2)", MATCH_TRUE, id="exists-one"),
    pytest.param("[1, 0].exists(x, 1 / x == 1)", MATCH_TRUE, id="exists-absorbs-error"),
    pytest.param("[0, 1].all(x, 1 / x == 1)", ("runtime", "division by zero"), id="all-error"),
    pytest.param("[0, 1].all(x, 1 / x == 5)", MATCH_FALSE, id="all-absorbs-error"),
    pytest.param("[1, 2, 3].map(x, x * 2) == [2, 4, 6]", MATCH_TRUE, id="map"),
    pytest.param("[1, 2, 3].map(x, x > 1, x * 2) == [4, 6]", MATCH_TRUE, id="map-filter"),
    pytest.param("[1, 2, 3].filter(x, x > 1) == [2, 3]", MATCH_TRUE, id="filter"),
    pytest.param('{"a": 1, "b": 2}.all(k, v, v > 0)', MATCH_TRUE, id="two-var-all"),
    pytest.param('["x", "y"].exists(i, v, i == 1 && v == "y")', MATCH_TRUE, id="two-var-list"),
    pytest.param("[1, 2].transformList(i, v, v * 10) == [10, 20]", MATCH_TRUE, id="transform-list"),
    pytest.param('{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}', MATCH_TRUE, id="transform-map"),
    pytest.param(
        'device.attributes["gpu.example.com"].exists(k, k == "model")',
        MATCH_TRUE,
        id="exists-over-domain",
    ),
    pytest.param(
        'device.attributes["gpu.example.com"].model.exists(c, true)',
        ("compile", None),
        id="any-is-not-a-range",
    ),
    pytest.param(
        'cel.bind(a, device.attributes["gpu.example.com"], '
        'a.model == "a100" && a.cores >= 64 && a.enabled)',
        MATCH_TRUE,
        id="bind",
    ),
    pytest.param("cel.bind(x, 1, cel.bind(x, x + 1, x == 2))", MATCH_TRUE, id="bind-shadow"),
    # cost budget
    pytest.param(
        "lists.range(1000).all(i, lists.range(1000).all(j, j >= 0))",
        ("cost", "operation cancelled: actual cost limit exceeded"),
        id="cost-limit",
    ),
    pytest.param(
        "lists.range(1000).all(i, lists.range(1000).all(j, j >= 0)) || true",
        ("cost", "operation cancelled: actual cost limit exceeded"),
        id="cost-limit-not-absorbed",
    ),
    # cel-go panics hashing a Semver for `in` over a literal list; nothing absorbs a panic
    pytest.param(
        'device.attributes["gpu.example.com"].driverVersion in [""] && false',
        ("runtime", "internal error: runtime error: hash of unhashable type cel.Semver"),
        id="panic-not-absorbed",
    ),
    pytest.param(
        "lists.range(400).all(i, lists.range(400).all(j, j >= 0))",
        MATCH_TRUE,
        id="within-cost-budget",
    ),
    pytest.param(
        "lists.range(500).all(i, lists.range(500).all(j, j >= 0))",
        ("cost", "operation cancelled: actual cost limit exceeded"),
        id="over-cost-budget",
    ),
    pytest.param(
        "lists.range(1000001).size() > 0",
        ("cost", "operation cancelled: actual cost limit exceeded"),
        id="range-is-charged",
    ),
    # optionals
    pytest.param(
        'device.attributes["gpu.example.com"].?nope.orValue(5) == 5',
        MATCH_TRUE,
        id="optional-select-none",
    ),
    pytest.param(
        'device.attributes["gpu.example.com"].?cores.orValue(5) == 108',
        MATCH_TRUE,
        id="optional-select-some",
    ),
    pytest.param(
        'device.attributes["gpu.example.com"][?"cores"].hasValue()', MATCH_TRUE, id="optional-index"
    ),
    pytest.param("optional.none().orValue(true)", MATCH_TRUE, id="optional-none"),
    pytest.param("optional.of(1).value() == 1", MATCH_TRUE, id="optional-value"),
    pytest.param(
        "optional.none().value() == 1",
        ("runtime", "optional.none() dereference"),
        id="optional-none-value",
    ),
    pytest.param('{"a": {"b": 1}}.?a.b.orValue(0) == 1', MATCH_TRUE, id="optional-chain"),
    pytest.param("optional.of(2).optMap(x, x * 2).value() == 4", MATCH_TRUE, id="opt-map"),
    # compile errors
    pytest.param(
        'device.drivr == "x"',
        (
            "compile",
            "compilation failed: ERROR: <input>:1:7: "
            "undefined field 'drivr'\n | device.drivr == \"x\"\n | ......^",
        ),
        id="typo",
    ),
    pytest.param(
        "devices.driver == 'x'",
        (
            "compile",
            "compilation failed: ERROR: <input>:1:1: "
            "undeclared reference to 'devices' (in container '')\n"
            " | devices.driver == 'x'\n | ^",
        ),
        id="undeclared",
    ),
    pytest.param(
        "1 + 1", ("compile", "must evaluate to bool or the unknown type, not int"), id="result-type"
    ),
    pytest.param("device.driver + 1 == 2", ("compile", None), id="no-overload"),
    pytest.param("device.driver ==", ("compile", None), id="syntax"),
    pytest.param('nosuchfunc("x")', ("compile", None), id="undeclared-function"),
    pytest.param('["a", 1] == []', ("compile", None), id="heterogeneous-list-literal"),
    pytest.param("includes(1)", ("compile", None), id="includes-is-a-member-function"),
    pytest.param(
        "[?optional.none()] == []",
        (
            "compile",
            "compilation failed: ERROR: <input>:1:2: unsupported feature: optional entries in "
            "list and map literals ([?x], {?k: v})\n | [?optional.none()] == []\n | .^",
        ),
        id="unsupported-feature",
    ),
]


def _matches(actual: tuple[str, object], expected: tuple[str, object | None]) -> bool:
    return actual[0] == expected[0] and (expected[1] is None or actual[1] == expected[1])


@pytest.mark.parametrize(("expression", "expected"), CORE)
def test_core_conformance(outcome, expression: str, expected: tuple[str, object]) -> None:
    actual = outcome(expression)
    assert _matches(actual, expected), actual


FEATURES = cel.CELFeatures(list_type_attributes=True, consumable_capacity=True)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param("device.allowMultipleAllocations", MATCH_TRUE, id="allow-multiple"),
        pytest.param(
            'device.attributes["gpu.example.com"].cores.includes(108)',
            MATCH_TRUE,
            id="includes-scalar",
        ),
        pytest.param("dyn(true)", MATCH_TRUE, id="dyn-result-accepted"),
    ],
)
def test_feature_gated_environment(outcome, expression: str, expected: tuple[str, object]) -> None:
    actual = outcome(expression, features=FEATURES)
    assert _matches(actual, expected), actual


def test_expression_length_limit() -> None:
    expression = "true" + " && true" * 2000
    with pytest.raises(CELCompileError, match="Too long"):
        cel.compile_selector(expression)
