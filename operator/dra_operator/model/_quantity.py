"""Kubernetes resource quantities, exact.

A Quantity is a rational number with the format it was written in (BinarySI ``Ki``,
DecimalSI ``k``/``m``, DecimalExponent ``e3``). Values carry at most nano precision: finer values
round up (away from zero), as Kubernetes does. `str()` gives Kubernetes' canonical form, so a
parsed and re-rendered quantity reads exactly as the API server would write it.
"""

from __future__ import annotations

import enum
import math
import re
from fractions import Fraction
from functools import total_ordering

from dra_operator.errors import InvalidObjectError


class QuantityFormat(enum.Enum):
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"
    DECIMAL_EXPONENT = "DecimalExponent"


_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()}
_PATTERN = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>\d+(?:\.\d*)?|\.\d+)"
    r"(?:(?P<exp>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)
_NANO = Fraction(1, 10**9)


def _round_up_to_nano(value: Fraction) -> Fraction:
    scaled = value / _NANO
    if scaled.denominator == 1:
        return value
    whole = math.ceil(scaled) if scaled > 0 else math.floor(scaled)
    return whole * _NANO


@total_ordering
class Quantity:
    """An exact, immutable resource quantity (`k8s.io/apimachinery/pkg/api/resource.Quantity`)."""

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
    def parse(cls, text: str) -> Quantity:
        """Parse Kubernetes quantity syntax; raises InvalidObjectError on anything else."""
        match = _PATTERN.match(text.strip()) if isinstance(text, str) else None
        if not match or text != text.strip():
            raise InvalidObjectError(
                "", f"quantities must match the regular expression '{_PATTERN.pattern}': {text!r}"
            )
        number = Fraction(match["num"])
        if match["sign"] == "-":
            number = -number
        if match["exp"]:
            return cls(
                number * Fraction(10) ** int(match["exp"][1:]), QuantityFormat.DECIMAL_EXPONENT
            )
        suffix = match["suffix"] or ""
        if suffix in _BINARY:
            return cls(number * 1024 ** _BINARY[suffix], QuantityFormat.BINARY_SI)
        return cls(number * Fraction(10) ** _DECIMAL[suffix], QuantityFormat.DECIMAL_SI)

    # -- arithmetic and comparison -------------------------------------------------------------

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.format)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.value - other.value, self.format)

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

    def __str__(self) -> str:
        canonical: str | None = self._canonical
        if canonical is None:
            canonical = _canonical(self.value, self.format)
            object.__setattr__(self, "_canonical", canonical)
        return canonical

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Quantity, (self.value, self.format))


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """(mantissa, exponent) with value == mantissa·10^exponent and exponent a multiple of 3."""
    exponent = 0
    mantissa = value
    while mantissa.denominator != 1:
        mantissa *= 1000
        exponent -= 3
    m = int(mantissa)
    while m != 0 and m % 1000 == 0 and exponent < 18:
        m //= 1000
        exponent += 3
    return m, exponent


def _canonical(value: Fraction, fmt: QuantityFormat) -> str:
    if value == 0:
        return "0"
    if fmt is QuantityFormat.BINARY_SI and value.denominator == 1 and abs(value) >= 1024:
        m = int(value)
        power = 0
        while m % 1024 == 0 and power < 6:
            m //= 1024
            power += 1
        suffix = {v: k for k, v in _BINARY.items()}.get(power, "")
        if power:
            return f"{m}{suffix}"
    mantissa, exponent = _decimal_parts(value)
    if fmt is QuantityFormat.DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"
