"""Kubernetes resource quantities, exact.

A Quantity is a rational number with the format it was written in (BinarySI ``Ki``,
DecimalSI ``k``/``m``, DecimalExponent ``e3``). It reproduces apimachinery's
``resource.Quantity`` (v0.36): the same accepted syntax and error texts, values rounded up
(away from zero) to nano precision, BinarySI values capped at 2^63-1, and `str()` giving exactly
what the API server writes back, including its quirks:

* a parsed string that apimachinery's fast path deems canonical is echoed verbatim (``+1``,
  ``1.500``, ``01Ki`` and ``1.`` come back as written);
* a DecimalSI value whose canonical exponent exceeds 18 loses its suffix (``1000E`` renders
  ``1``), as upstream's suffix lookup fails silently.

One deliberate deviation: a decimal exponent beyond ±`MAX_EXPONENT` is refused instead of being
carried as a huge number, so a hostile object cannot make us compute 10^(2^31).
"""

from __future__ import annotations

import enum
import functools
import math
from fractions import Fraction
from functools import total_ordering

from dra_operator.errors import InvalidObjectError


class QuantityFormat(enum.Enum):
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"
    DECIMAL_EXPONENT = "DecimalExponent"


ERR_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"
MAX_EXPONENT = 4096
MAX_BINARY = 2**63 - 1

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_SUFFIX = {power // 10: suffix for suffix, power in _BINARY.items()}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_NANO = Fraction(1, 10**9)


def _round_up_to_nano(value: Fraction) -> Fraction:
    scaled = value / _NANO
    if scaled.denominator == 1:
        return value
    whole = math.ceil(scaled) if scaled > 0 else math.floor(scaled)
    return whole * _NANO


def _wrap_int32(n: int) -> int:
    return (n + 2**31) % 2**32 - 2**31


@total_ordering
class Quantity:
    """An exact, immutable resource quantity (`k8s.io/apimachinery/pkg/api/resource.Quantity`).

    Equality, ordering and hashing use the value only: ``1Ki == 1024``, as upstream's `Cmp`.
    """

    __slots__ = ("_canonical", "format", "value")

    value: Fraction
    format: QuantityFormat
    _canonical: str | None

    def __init__(self, value: Fraction | int, fmt: QuantityFormat = QuantityFormat.DECIMAL_SI):
        object.__setattr__(self, "value", _round_up_to_nano(Fraction(value)))
        object.__setattr__(self, "format", fmt)
        object.__setattr__(self, "_canonical", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Quantity is immutable")

    @classmethod
    def _with_text(cls, value: Fraction, fmt: QuantityFormat, text: str | None) -> Quantity:
        q = cls(value, fmt)
        object.__setattr__(q, "_canonical", text)
        return q

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """`resource.ParseQuantity`; raises InvalidObjectError with upstream's message.

        Results are cached by text (quantities are immutable and slices repeat the same few
        spellings thousands of times).
        """
        if not isinstance(text, str) or not text:
            raise InvalidObjectError("", ERR_FORMAT_WRONG)
        return _parse(text)

    # -- arithmetic and comparison -------------------------------------------------------------
    # Like upstream, a zero left operand takes the other operand's format.

    def __add__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value + other.value, fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value - other.value, fmt)

    def __neg__(self) -> Quantity:
        return Quantity(-self.value, self.format)

    def __mul__(self, factor: int) -> Quantity:
        return Quantity(self.value * factor, self.format)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def cmp(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    @property
    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def is_zero(self) -> bool:
        return self.value == 0

    def is_integer(self) -> bool:
        return self.value.denominator == 1

    def int_value(self) -> int:
        """`Quantity.Value()`: the value rounded up, away from zero, to an integer."""
        v = self.value
        return math.ceil(v) if v >= 0 else math.floor(v)

    def milli_value(self) -> int:
        """`Quantity.MilliValue()`: value × 1000, rounded away from zero."""
        v = self.value * 1000
        return math.ceil(v) if v >= 0 else math.floor(v)

    def as_float(self) -> float:
        return float(self.value)

    # -- rendering -----------------------------------------------------------------------------

    def canonical(self) -> str:
        """The canonical form, ignoring any text kept from parsing (`CanonicalizeBytes`)."""
        return _canonical(self.value, self.format)

    def __str__(self) -> str:
        canonical: str | None = self._canonical
        if canonical is None:
            canonical = _canonical(self.value, self.format)
            object.__setattr__(self, "_canonical", canonical)
        return canonical

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Quantity._with_text, (self.value, self.format, self._canonical))


# -- parsing ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Quantity:
    if text == "0":
        return Quantity._with_text(Fraction(0), QuantityFormat.DECIMAL_SI, "0")
    positive, value, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    fast = _fast_path(text, positive, num, denom, base, exponent, fmt)
    if fast is not None:
        return fast
    return _slow_path(positive, value, base, exponent, fmt)


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """`parseQuantityString`: (positive, value, num, denom, suffix); leading zeros dropped."""
    end = len(text)
    pos = 0
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise InvalidObjectError("", ERR_FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, QuantityFormat]:
    """(base, exponent, format) of a suffix; exponents wrap to int32 as upstream's do."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], QuantityFormat.DECIMAL_SI
    if suffix in _BINARY:
        return 2, _BINARY[suffix], QuantityFormat.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and all(c in _DIGITS for c in body):
            parsed = int(digits)
            if -(2**63) <= parsed < 2**63:
                exponent = _wrap_int32(parsed)
                if abs(exponent) > MAX_EXPONENT:
                    raise InvalidObjectError("", f"quantity exponent out of range: {exponent}")
                return 10, exponent, QuantityFormat.DECIMAL_EXPONENT
    raise InvalidObjectError("", ERR_SUFFIX)


def _fast_path(
    text: str,
    positive: bool,
    num: str,
    denom: str,
    base: int,
    exponent: int,
    fmt: QuantityFormat,
) -> Quantity | None:
    """Upstream's int64 fast path: same value, but it decides whether `text` is kept as is."""
    if base == 10:
        scale = exponent
        precision = 18 - len(num) - len(denom)
        multiplier = 1
    elif len(denom) == 0:
        scale = 0
        multiplier = 1 << exponent
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
    else:
        return None
    if precision < 0:
        return None
    scale -= len(denom)
    if scale < -9:
        return None
    shifted = num + denom
    mantissa = int(shifted) * multiplier
    if mantissa >= 2**63:
        return None
    signed = mantissa if positive else -mantissa
    if base == 10:
        value = Fraction(signed) * Fraction(10) ** scale
        keep = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    else:
        value = Fraction(signed)
        keep = int(shifted) & 0x07 != 0
    return Quantity._with_text(value, fmt, text if keep else None)


def _slow_path(
    positive: bool, value: str, base: int, exponent: int, fmt: QuantityFormat
) -> Quantity:
    digits = value.lstrip("+-")
    if not any(c in _DIGITS for c in digits):
        raise InvalidObjectError("", ERR_NUMERIC)
    amount = Fraction(digits if not digits.endswith(".") else digits[:-1] or "0")
    if base == 10:
        amount *= Fraction(10) ** exponent
    else:
        amount *= 2**exponent
    amount = _round_up_to_nano(amount)
    if fmt is QuantityFormat.BINARY_SI and amount > MAX_BINARY:
        amount = Fraction(MAX_BINARY)
    if fmt is QuantityFormat.BINARY_SI and 0 < amount < 1:
        fmt = QuantityFormat.DECIMAL_SI
    return Quantity(amount if positive else -amount, fmt)


# -- rendering -------------------------------------------------------------------------------


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """(mantissa, exponent), value == mantissa·10^exponent, exponent the lowest multiple of 3."""
    exponent = -9
    mantissa = int(value / _NANO)
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    return mantissa * 10**shift, exponent - shift


def _canonical(value: Fraction, fmt: QuantityFormat) -> str:
    if value == 0:
        return "0"
    if fmt is QuantityFormat.BINARY_SI and abs(value) >= 1024 and value.denominator == 1:
        m = int(value)
        power = 0
        while m % 1024 == 0:
            m //= 1024
            power += 1
        return f"{m}{_BINARY_SUFFIX.get(power, '')}"
    mantissa, exponent = _decimal_parts(value)
    if fmt is QuantityFormat.DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX.get(exponent, '')}"
