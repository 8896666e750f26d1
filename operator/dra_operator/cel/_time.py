"""CEL durations and timestamps (Go `time.ParseDuration` and RFC 3339 syntax)."""

from __future__ import annotations

import datetime
import re

from dra_operator.errors import CELRuntimeError

_UNITS = {
    "ns": 1e-3,
    "us": 1.0,
    "µs": 1.0,
    "μs": 1.0,
    "ms": 1e3,
    "s": 1e6,
    "m": 60e6,
    "h": 3600e6,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_MAX_SECONDS = 315576000000


def parse_duration(text: str) -> datetime.timedelta:
    body = text
    sign = 1
    if body[:1] in "+-":
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return datetime.timedelta(0)
    micros = 0.0
    pos = 0
    if not body:
        raise CELRuntimeError(f'time: invalid duration "{text}"')
    while pos < len(body):
        match = _PART.match(body, pos)
        if not match:
            raise CELRuntimeError(f'time: invalid duration "{text}"')
        micros += float(match[1]) * _UNITS[match[2]]
        pos = match.end()
    result = datetime.timedelta(microseconds=sign * micros)
    if abs(result.total_seconds()) > _MAX_SECONDS:
        raise CELRuntimeError("duration out of range")
    return result


_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_timestamp(text: str) -> datetime.datetime:
    match = _RFC3339.match(text)
    if not match:
        raise CELRuntimeError(f'parsing time "{text}" as RFC3339: invalid syntax')
    year, month, day, hour, minute, second = (int(match[i]) for i in range(1, 7))
    fraction = match[7] or ""
    micros = int((fraction[1:] + "000000")[:6]) if fraction else 0
    zone = match[8]
    if zone in ("Z", "z"):
        tz = datetime.UTC
    else:
        offset = datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        tz = datetime.timezone(offset if zone[0] == "+" else -offset)
    try:
        value = datetime.datetime(year, month, day, hour, minute, second, micros, tzinfo=tz)
    except ValueError as exc:
        raise CELRuntimeError(f'parsing time "{text}": {exc}') from None
    return value.astimezone(datetime.UTC)
