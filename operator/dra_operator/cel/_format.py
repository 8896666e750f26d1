"""Go-compatible rendering of CEL values (`string(x)` and the Kubernetes `format` library)."""

from __future__ import annotations

import datetime
import decimal
import math


def _digits(value: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of |value| and the position of the decimal point."""
    sign_digits_exp = decimal.Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in sign_digits_exp.digits)
    exponent = sign_digits_exp.exponent
    assert isinstance(exponent, int)
    return digits, len(digits) + exponent


def format_double(value: float) -> str:
    """Go's `strconv.FormatFloat(v, 'g', -1, 64)`, which cel-go uses for `string(double)`."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    digits, point = _digits(value)
    exp = point - 1
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def format_duration(value: datetime.timedelta) -> str:
    """cel-go renders durations as seconds with an `s` suffix (`1.5s`)."""
    micros = value.days * 86_400_000_000 + value.seconds * 1_000_000 + value.microseconds
    seconds, rest = divmod(abs(micros), 1_000_000)
    sign = "-" if micros < 0 else ""
    if rest:
        return f"{sign}{seconds}.{rest:06d}".rstrip("0") + "s"
    return f"{sign}{seconds}s"


def format_timestamp(value: datetime.datetime) -> str:
    utc = value.astimezone(datetime.UTC)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += f".{utc.microsecond:06d}".rstrip("0")
    return text + "Z"
