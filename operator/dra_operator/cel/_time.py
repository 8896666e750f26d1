"""CEL durations and timestamps (Go `time.ParseDuration` and RFC 3339 syntax)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable

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


def _zone(name: str) -> datetime.tzinfo:
    """A timezone argument: an IANA name or a fixed `[+-]HH:MM` offset."""
    if name[:1] in "+-" and len(name) == 6 and name[3] == ":":
        offset = datetime.timedelta(hours=int(name[1:3]), minutes=int(name[4:6]))
        return datetime.timezone(offset if name[0] == "+" else -offset)
    try:
        import zoneinfo

        return zoneinfo.ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        raise CELRuntimeError(f"unknown time zone {name}") from None


def _local(stamp: datetime.datetime, zone: str | None) -> datetime.datetime:
    return stamp.astimezone(_zone(zone)) if zone is not None else stamp


TIMESTAMP_GETTERS: dict[str, Callable[[datetime.datetime], int]] = {
    "getFullYear": lambda t: t.year,
    "getMonth": lambda t: t.month - 1,
    "getDayOfMonth": lambda t: t.day - 1,
    "getDate": lambda t: t.day,
    "getDayOfWeek": lambda t: (t.weekday() + 1) % 7,
    "getDayOfYear": lambda t: t.timetuple().tm_yday - 1,
    "getHours": lambda t: t.hour,
    "getMinutes": lambda t: t.minute,
    "getSeconds": lambda t: t.second,
    "getMilliseconds": lambda t: t.microsecond // 1000,
}


def timestamp_getter(name: str) -> Callable[..., int]:
    getter = TIMESTAMP_GETTERS[name]

    def get(stamp: datetime.datetime, zone: str | None = None) -> int:
        return int(getter(_local(stamp, zone)))

    return get


def _total(value: datetime.timedelta, unit_micros: int) -> int:
    micros = value // datetime.timedelta(microseconds=1)
    return int(micros / unit_micros)  # truncates toward zero, as Go's Duration.Hours() casts do


DURATION_GETTERS: dict[str, Callable[[datetime.timedelta], int]] = {
    "getHours": lambda d: _total(d, 3_600_000_000),
    "getMinutes": lambda d: _total(d, 60_000_000),
    "getSeconds": lambda d: _total(d, 1_000_000),
    "getMilliseconds": lambda d: _total(d, 1_000),
}
