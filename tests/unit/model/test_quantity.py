"""Quantity parsing and rendering, against apimachinery's resource.Quantity (v0.36).

Covers: accepted syntax and values (upstream's TestQuantityParse table), canonical strings
(TestQuantityString, TestQuantityParseEmit), strings kept verbatim by the fast path, rounding to
nano, the BinarySI cap, rejected input with upstream's messages, arithmetic keeping formats, and
the invariants parse(str(q)) == q and canonical idempotence (hypothesis).
"""

import pickle
from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dra_operator.errors import InvalidObjectError
from dra_operator.model import Quantity, QuantityFormat

BIN = QuantityFormat.BINARY_SI
DEC = QuantityFormat.DECIMAL_SI
EXP = QuantityFormat.DECIMAL_EXPONENT


def dec(mantissa: int, exponent: int) -> Fraction:
    return Fraction(mantissa) * Fraction(10) ** exponent


PARSE_TABLE = [
    ("0", 0, DEC),
    ("0n", 0, DEC),
    ("0m", 0, DEC),
    ("0Ki", 0, BIN),
    ("0k", 0, DEC),
    ("0Mi", 0, BIN),
    ("0G", 0, DEC),
    ("0Ti", 0, BIN),
    ("1", 1, DEC),
    ("1Ki", 1024, BIN),
    ("8Ki", 8 * 1024, BIN),
    ("7Mi", 7 * 1024**2, BIN),
    ("6Gi", 6 * 1024**3, BIN),
    ("5Ti", 5 * 1024**4, BIN),
    ("4Pi", 4 * 1024**5, BIN),
    ("3Ei", 3 * 1024**6, BIN),
    ("100Ti", 100 * 1024**4, BIN),
    ("5n", dec(5, -9), DEC),
    ("4u", dec(4, -6), DEC),
    ("3m", dec(3, -3), DEC),
    ("8k", dec(8, 3), DEC),
    ("50k", dec(5, 4), DEC),
    ("7M", dec(7, 6), DEC),
    ("6G", dec(6, 9), DEC),
    ("40T", dec(4, 13), DEC),
    ("2P", dec(2, 15), DEC),
    ("1E", dec(1, 18), DEC),
    ("1E-3", dec(1, -3), EXP),
    ("1e3", dec(1, 3), EXP),
    ("1E6", dec(1, 6), EXP),
    ("1e14", dec(1, 14), EXP),
    ("100.035k", 100035, DEC),
    ("0.001", dec(1, -3), DEC),
    ("0.0005k", dec(5, -1), DEC),
    ("0.00500", dec(5, -3), DEC),
    ("0.5e-2", dec(5, -3), EXP),
    ("10.035M", dec(10035, 3), DEC),
    ("1.3E+6", dec(13, 5), EXP),
    ("1.7E18", dec(17, 17), EXP),
    ("6.987654321G", 6987654321, DEC),
    ("1.01E", dec(101, 16), DEC),
    ("3.001n", dec(4, -9), DEC),
    ("1.1E-9", dec(2, -9), EXP),
    ("0.0000000001", dec(1, -9), DEC),
    ("0.0000000005", dec(1, -9), DEC),
    ("0.9n", dec(1, -9), DEC),
    ("0.00000012345", dec(124, -9), DEC),
    ("9Ei", 2**63 - 1, BIN),
    ("9223372036854775807Ki", 2**63 - 1, BIN),
    ("12E", dec(12, 18), DEC),
    ("100.035Ki", dec(10243584, -2), BIN),
    ("0.5Mi", 512 * 1024, BIN),
    ("0.05Gi", dec(536870912, -1), BIN),
    ("0.000000000001Ki", dec(2, -9), DEC),
    (".001", dec(1, -3), DEC),
    (".0001k", dec(100, -3), DEC),
    ("1.", 1, DEC),
    ("1.G", dec(1, 9), DEC),
    (".", 0, DEC),
    ("Ki", 0, BIN),
]


@pytest.mark.parametrize(("text", "value", "fmt"), PARSE_TABLE, ids=[r[0] for r in PARSE_TABLE])
def test_parse_gives_upstream_value_and_format(text: str, value: Fraction, fmt: QuantityFormat):
    for sign, text_with_sign in ((1, text), (1, "+" + text), (-1, "-" + text)):
        q = Quantity.parse(text_with_sign)
        assert (q.value, q.format) == (sign * Fraction(value), fmt), text_with_sign


STRING_TABLE = [
    # (input, what the API server writes back). The quirky rows (kept text, "1000E", "9Ei",
    # "1e400", "0.000000000001Ki") were confirmed against kube-apiserver v1.36.4.
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("307200Ki", "300Mi"),
    ("1025024Mi", "1001Gi"),
    ("1024Gi", "1Ti"),
    ("5000m", "5"),
    ("0.5", "500m"),
    ("1000M", "1G"),
    ("0.001T", "1G"),
    ("1000u", "1m"),
    ("1.08", "1080m"),
    ("1080000000n", "1080m"),
    (".001e12", "1e9"),
    ("0.001e0", "1e-3"),
    ("1000e-12", "1e-9"),
    ("00", "0"),
    ("-.", "0"),
    ("0.5Gi", "512Mi"),
    ("1.5Gi", "1536Mi"),
    ("1.5Ki", "1536"),
    ("1.5k", "1500"),
    ("1500", "1500"),
    ("15000", "15k"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
    ("-.000000000001Ki", "-2n"),
    ("1.1E-9", "2e-9"),
    ("0.5e-1", "50e-3"),
    ("1e400", "10e399"),
    ("100.035Ki", "102435840m"),
    ("1023Ki", "1023Ki"),
    ("1.0Ki", "1Ki"),
    ("2048", "2048"),
    ("-1024Mi", "-1Gi"),
    ("9Ei", "9223372036854775807"),
    ("1000E", "1"),  # upstream has no suffix for 10^21 and silently drops it
    ("1000000E", "1"),
    # kept verbatim: the fast path judged them canonical
    ("+1", "+1"),
    ("1.500", "1.500"),
    ("01Ki", "01Ki"),
    ("005", "005"),
    ("1.", "1."),
    ("1.G", "1.G"),
    ("1E+3", "1E+3"),
    ("12E", "12E"),
    ("1025Ki", "1025Ki"),
    ("300M", "300M"),
    ("99Ti", "99Ti"),
    ("1023Ki", "1023Ki"),
    ("0.0Ki", "0"),
    ("-0", "0"),
    (".5", "500m"),
    ("1000e0", "1e3"),
    ("3.001n", "4n"),
    ("0.000000000001Ki", "2n"),
]


@pytest.mark.parametrize(("text", "expect"), STRING_TABLE, ids=[r[0] for r in STRING_TABLE])
def test_str_is_what_the_api_server_writes(text: str, expect: str) -> None:
    assert str(Quantity.parse(text)) == expect


@pytest.mark.parametrize(
    ("value", "fmt", "expect"),
    [
        pytest.param(1024**3, BIN, "1Gi", id="binary-gi"),
        pytest.param(6 * 1024, BIN, "6Ki", id="binary-ki"),
        pytest.param(5, BIN, "5", id="binary-below-1024-is-decimal"),
        pytest.param(dec(500, -3), BIN, "500m", id="binary-fraction-is-decimal"),
        pytest.param(1025, BIN, "1025", id="binary-not-multiple"),
        pytest.param(2**70, BIN, "1", id="binary-beyond-ei-loses-suffix"),
        pytest.param(dec(1, 9), DEC, "1G", id="decimal-g"),
        pytest.param(dec(108, -2), DEC, "1080m", id="decimal-milli"),
        pytest.param(dec(1234567, 6), DEC, "1234567M", id="decimal-no-reduction"),
        pytest.param(dec(1234567, -3), BIN, "1234567m", id="binary-milli"),
        pytest.param(dec(1, -9), DEC, "1n", id="nano"),
        pytest.param(dec(10800, -10), DEC, "1080n", id="nano-reduced"),
        pytest.param(dec(1, -6), DEC, "1u", id="micro"),
        pytest.param(dec(80, -3), EXP, "80e-3", id="exponent-negative"),
        pytest.param(dec(300, 6), EXP, "300e6", id="exponent-positive"),
        pytest.param(dec(3, 3), EXP, "3e3", id="exponent-three"),
        pytest.param(0, EXP, "0", id="zero"),
        pytest.param(Fraction(1, 3), DEC, "333333334n", id="rounds-up-to-nano"),
        pytest.param(Fraction(-1, 3), DEC, "-333333334n", id="rounds-away-from-zero"),
    ],
)
def test_canonical_string_of_a_value(value: Fraction, fmt: QuantityFormat, expect: str) -> None:
    q = Quantity(value, fmt)
    assert str(q) == expect
    assert q.canonical() == expect


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "quantities must match", id="empty"),
        pytest.param("1.1.M", "quantities must match", id="two-dots"),
        pytest.param("1+1.0M", "quantities must match", id="inner-sign"),
        pytest.param("0.1mi", "unable to parse quantity's suffix", id="mi-lowercase"),
        pytest.param("0.1am", "quantities must match", id="unknown-letter"),
        pytest.param("aoeu", "quantities must match", id="word"),
        pytest.param(".5i", "unable to parse quantity's suffix", id="bare-i"),
        pytest.param("1i", "unable to parse quantity's suffix", id="one-i"),
        pytest.param("-3.01i", "unable to parse quantity's suffix", id="negative-i"),
        pytest.param("-3.01e-", "unable to parse quantity's suffix", id="dangling-exponent"),
        pytest.param("1e", "unable to parse quantity's suffix", id="bare-e"),
        pytest.param("1K", "unable to parse quantity's suffix", id="capital-k"),
        pytest.param("1Ki3", "unable to parse quantity's suffix", id="digits-after-binary"),
        pytest.param("1e3.5", "quantities must match", id="fractional-exponent"),
        pytest.param(" 1", "quantities must match", id="leading-space"),
        pytest.param("1 ", "quantities must match", id="trailing-space"),
        pytest.param("Ei", "unable to parse numeric part of quantity", id="no-digits-slow-path"),
        pytest.param("1e5000", "quantity exponent out of range: 5000", id="exponent-guard"),
    ],
)
def test_invalid_quantities_are_refused_with_upstream_text(text: str, message: str) -> None:
    with pytest.raises(InvalidObjectError, match="^" + message.replace("(", r"\(")):
        Quantity.parse(text)


def test_error_message_is_upstream_regular_expression() -> None:
    with pytest.raises(InvalidObjectError) as info:
        Quantity.parse("x")
    assert info.value.message == (
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def test_equality_and_order_use_the_value_only() -> None:
    assert Quantity.parse("1Ki") == Quantity.parse("1024")
    assert hash(Quantity.parse("1Ki")) == hash(Quantity.parse("1024"))
    assert Quantity.parse("999m") < Quantity.parse("1") < Quantity.parse("1001m")
    assert Quantity.parse("1Gi").cmp(Quantity.parse("1G")) == 1
    assert sorted([Quantity.parse("2"), Quantity.parse("1500m")]) == [
        Quantity.parse("1.5"),
        Quantity.parse("2"),
    ]


@pytest.mark.parametrize(
    ("left", "op", "right", "expect"),
    [
        pytest.param("100m", "+", "0", "100m", id="add-zero-keeps-suffix"),
        pytest.param("0", "+", "1Gi", "1Gi", id="zero-plus-takes-format"),
        pytest.param("1Gi", "-", "0", "1Gi", id="sub-zero-keeps-suffix"),
        pytest.param("0", "-", "1Gi", "-1Gi", id="zero-minus-takes-format"),
        pytest.param("1Gi", "+", "1Gi", "2Gi", id="binary-sum"),
        pytest.param("1.500", "+", "0", "1500m", id="arithmetic-drops-kept-text"),
    ],
)
def test_arithmetic_formats_like_upstream(left: str, op: str, right: str, expect: str) -> None:
    a, b = Quantity.parse(left), Quantity.parse(right)
    assert str(a + b if op == "+" else a - b) == expect


def test_integer_views_round_away_from_zero() -> None:
    assert Quantity.parse("1500m").int_value() == 2
    assert Quantity.parse("-1500m").int_value() == -2
    assert Quantity.parse("1n").milli_value() == 1
    assert Quantity.parse("2Ki").int_value() == 2048


def test_parse_caps_binary_values_that_arithmetic_may_exceed() -> None:
    big = Quantity(2**64, BIN)
    assert str(big) == "16Ei"
    assert Quantity.parse(str(big)) == Quantity(2**63 - 1)


def test_quantity_is_immutable_and_pickles_with_its_text() -> None:
    q = Quantity.parse("1.500")
    with pytest.raises(AttributeError):
        q.value = Fraction(2)  # type: ignore[misc]
    copy = pickle.loads(pickle.dumps(q))
    assert (copy, str(copy), copy.format) == (q, "1.500", q.format)


_suffixes = st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi"])
_texts = st.builds(
    lambda sign, whole, frac, suffix: f"{sign}{whole}{frac}{suffix}",
    st.sampled_from(["", "-", "+"]),
    st.integers(min_value=0, max_value=10**12).map(str),
    st.one_of(st.just(""), st.integers(min_value=0, max_value=10**6).map(lambda n: f".{n}")),
    st.one_of(_suffixes, st.integers(min_value=-30, max_value=30).map(lambda e: f"e{e}")),
)


@given(_texts)
def test_parse_of_str_is_the_same_quantity(text: str) -> None:
    q = Quantity.parse(text)
    # From 10^21 on, a DecimalSI value's canonical exponent passes 18 and upstream drops the
    # suffix (``1000E`` renders ``1``, pinned above), so the round trip is not defined there.
    assume(q.format is not QuantityFormat.DECIMAL_SI or abs(q.value) < 10**21)
    again = Quantity.parse(str(q))
    assert again == q
    assert str(again) == str(q)


@given(
    # Parsing caps BinarySI at 2^63-1 (arithmetic does not), so stay below it.
    st.fractions(max_denominator=10**6).filter(lambda f: abs(f) < 2**63),
    st.sampled_from(list(QuantityFormat)),
)
def test_canonical_form_is_idempotent(value: Fraction, fmt: QuantityFormat) -> None:
    q = Quantity(value, fmt)
    again = Quantity.parse(str(q))
    assert again == q
    # The text is stable from the first re-parse on, not before: a BinarySI value that is no
    # multiple of 1024 renders without a suffix ("5000") and parses back as DecimalSI ("5k"),
    # exactly as apimachinery does.
    assert Quantity.parse(str(again)).canonical() == again.canonical() == str(again)
    if fmt is not QuantityFormat.BINARY_SI:
        assert again.canonical() == q.canonical()


def test_binary_value_without_binary_suffix_reparses_as_decimal() -> None:
    q = Quantity(5000, QuantityFormat.BINARY_SI)
    assert str(q) == "5000"
    assert str(Quantity.parse(str(q))) == "5k"
