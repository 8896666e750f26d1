"""The CEL standard library: operators, conversions, size, string predicates, regex matches."""

from __future__ import annotations

import datetime
import math
from typing import Any

import re2  # type: ignore[import-untyped]

from dra_operator.cel import _runtime as R
from dra_operator.cel import _types as T
from dra_operator.cel._format import format_double, format_duration, format_timestamp
from dra_operator.cel._functions import declare, declare_both
from dra_operator.cel._time import (
    DURATION_GETTERS,
    TIMESTAMP_GETTERS,
    parse_duration,
    parse_timestamp,
    timestamp_getter,
)
from dra_operator.cel._values import CelType, UInt, no_such_overload
from dra_operator.errors import CELRuntimeError

A, B = "$A", "$B"
LIST_A, MAP_AB = T.list_of(A), T.map_of(A, B)
NUM = (T.INT, T.UINT, T.DOUBLE)


def _declare_operators() -> None:
    declare("_==_", "equals", (A, A), T.BOOL, R.eq)
    declare("_!=_", "not_equals", (A, A), T.BOOL, R.ne)
    ordered = [(t, t) for t in (*NUM, T.STRING, T.BYTES, T.BOOL, T.TIMESTAMP, T.DURATION)]
    ordered += [(a, b) for a in NUM for b in NUM if a != b]  # CrossTypeNumericComparisons
    for op, name, impl in (
        ("_<_", "less", R.lt),
        ("_<=_", "less_equals", R.le),
        ("_>_", "greater", R.gt),
        ("_>=_", "greater_equals", R.ge),
    ):
        for a, b in ordered:
            declare(op, f"{name}_{a}_{b}", (a, b), T.BOOL, impl)
    for t in NUM:
        declare("_+_", f"add_{t}", (t, t), t, R.add)
        declare("_-_", f"subtract_{t}", (t, t), t, R.sub)
        declare("_*_", f"multiply_{t}", (t, t), t, R.mul)
        declare("_/_", f"divide_{t}", (t, t), t, R.div)
    for t in (T.INT, T.UINT):
        declare("_%_", f"modulo_{t}", (t, t), t, R.mod)
    declare("_+_", "add_string", (T.STRING, T.STRING), T.STRING, R.add)
    declare("_+_", "add_bytes", (T.BYTES, T.BYTES), T.BYTES, R.add)
    declare("_+_", "add_list", (LIST_A, LIST_A), LIST_A, R.add)
    declare("_+_", "add_duration_duration", (T.DURATION, T.DURATION), T.DURATION, R.add)
    declare("_+_", "add_timestamp_duration", (T.TIMESTAMP, T.DURATION), T.TIMESTAMP, R.add)
    declare("_+_", "add_duration_timestamp", (T.DURATION, T.TIMESTAMP), T.TIMESTAMP, R.add)
    declare("_-_", "subtract_timestamp_timestamp", (T.TIMESTAMP, T.TIMESTAMP), T.DURATION, R.sub)
    declare("_-_", "subtract_timestamp_duration", (T.TIMESTAMP, T.DURATION), T.TIMESTAMP, R.sub)
    declare("_-_", "subtract_duration_duration", (T.DURATION, T.DURATION), T.DURATION, R.sub)
    declare("-_", "negate_int64", (T.INT,), T.INT, R.neg)
    declare("-_", "negate_double", (T.DOUBLE,), T.DOUBLE, R.neg)
    declare("!_", "logical_not", (T.BOOL,), T.BOOL, R.logical_not)
    declare("@in", "in_list", (A, LIST_A), T.BOOL, lambda v, c: R.contains(c, v))
    declare("@in", "in_map", (A, MAP_AB), T.BOOL, lambda v, c: R.contains(c, v))
    declare("_[_]", "index_list", (LIST_A, T.INT), A, R.index)
    declare("_[_]", "index_map", (MAP_AB, A), B, R.index)


# -- conversions ---------------------------------------------------------------------------------


def _to_int(value: Any) -> int:
    t = type(value)
    if t is int or t is UInt:
        return R.check_int(int(value))
    if t is float:
        if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
            raise CELRuntimeError("integer overflow")
        return int(value)
    if t is str:
        return R.check_int(_parse_go_int(value, "ParseInt"))
    if t is datetime.datetime:
        return int(value.timestamp())
    raise no_such_overload()


def _parse_go_int(text: str, func: str) -> int:
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii():
        raise CELRuntimeError(f'strconv.{func}: parsing "{text}": invalid syntax')
    return int(text)


def _to_uint(value: Any) -> UInt:
    t = type(value)
    if t is int or t is UInt:
        return R.check_uint(int(value))
    if t is float:
        if math.isnan(value) or not 0 <= value < 2.0**64:
            raise CELRuntimeError("unsigned integer overflow")
        return UInt(int(value))
    if t is str:
        if text_is_signed(value):
            raise CELRuntimeError(f'strconv.ParseUint: parsing "{value}": invalid syntax')
        return R.check_uint(_parse_go_int(value, "ParseUint"))
    raise no_such_overload()


def text_is_signed(text: str) -> bool:
    return text[:1] in "+-"


def _to_double(value: Any) -> float:
    t = type(value)
    if t is float:
        return value  # type: ignore[no-any-return]
    if t is int or t is UInt:
        return float(value)
    if t is str:
        try:
            return float(value)
        except ValueError:
            raise CELRuntimeError(
                f'strconv.ParseFloat: parsing "{value}": invalid syntax'
            ) from None
    raise no_such_overload()


def to_string(value: Any) -> str:
    t = type(value)
    if t is str:
        return value  # type: ignore[no-any-return]
    if t is bool:
        return "true" if value else "false"
    if t is int or t is UInt:
        return str(int(value))
    if t is float:
        return format_double(value)
    if t is bytes:
        try:
            return value.decode("utf-8")  # type: ignore[no-any-return]
        except UnicodeDecodeError:
            raise CELRuntimeError("invalid UTF-8 in bytes, cannot convert to string") from None
    if t is datetime.datetime:
        return format_timestamp(value)
    if t is datetime.timedelta:
        return format_duration(value)
    raise no_such_overload()


def _to_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise no_such_overload()


_BOOL_TEXT = {
    "1": True,
    "t": True,
    "T": True,
    "TRUE": True,
    "true": True,
    "True": True,
    "0": False,
    "f": False,
    "F": False,
    "FALSE": False,
    "false": False,
    "False": False,
}


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if type(value) is str:
        if value in _BOOL_TEXT:
            return _BOOL_TEXT[value]
        raise CELRuntimeError("type conversion error from 'string' to 'bool'")
    raise no_such_overload()


def _size(value: Any) -> int:
    if type(value) is str or type(value) is bytes:
        return len(value)
    if type(value) in (tuple, list) or isinstance(value, dict):
        return len(value)
    raise no_such_overload()


def _declare_conversions() -> None:
    for t in (T.INT, T.UINT, T.DOUBLE, T.STRING, T.TIMESTAMP):
        declare("int", f"{t}_to_int", (t,), T.INT, _to_int)
    for t in (T.INT, T.UINT, T.DOUBLE, T.STRING):
        declare("uint", f"{t}_to_uint", (t,), T.UINT, _to_uint)
        declare("double", f"{t}_to_double", (t,), T.DOUBLE, _to_double)
    for t in (T.INT, T.UINT, T.DOUBLE, T.STRING, T.BYTES, T.BOOL, T.TIMESTAMP, T.DURATION):
        declare("string", f"{t}_to_string", (t,), T.STRING, to_string)
    declare("bytes", "string_to_bytes", (T.STRING,), T.BYTES, _to_bytes)
    declare("bytes", "bytes_to_bytes", (T.BYTES,), T.BYTES, _to_bytes)
    declare("bool", "bool_to_bool", (T.BOOL,), T.BOOL, _to_bool)
    declare("bool", "string_to_bool", (T.STRING,), T.BOOL, _to_bool)
    declare("dyn", "to_dyn", (A,), T.DYN, lambda v: v)
    declare("type", "type", (A,), T.TYPE, R.type_value)
    declare("duration", "string_to_duration", (T.STRING,), T.DURATION, parse_duration)
    declare("duration", "duration_to_duration", (T.DURATION,), T.DURATION, lambda v: v)
    declare("timestamp", "string_to_timestamp", (T.STRING,), T.TIMESTAMP, parse_timestamp)
    declare("timestamp", "timestamp_to_timestamp", (T.TIMESTAMP,), T.TIMESTAMP, lambda v: v)
    declare("timestamp", "int_to_timestamp", (T.INT,), T.TIMESTAMP, _int_to_timestamp)


def _int_to_timestamp(seconds: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)


# -- strings, size, regex ------------------------------------------------------------------------


def _matches(text: str, pattern: str) -> bool:
    return compile_regex(pattern).search(text) is not None


_REGEX_CACHE: dict[str, Any] = {}


def compile_regex(pattern: str) -> Any:
    compiled = _REGEX_CACHE.get(pattern)
    if compiled is None:
        try:
            compiled = re2.compile(pattern)
        except re2.error as exc:
            raise CELRuntimeError(f"error parsing regexp: {exc}") from None
        if len(_REGEX_CACHE) > 1024:
            _REGEX_CACHE.clear()
        _REGEX_CACHE[pattern] = compiled
    return compiled


def _declare_strings() -> None:
    for t, kind in ((T.STRING, "string"), (T.BYTES, "bytes"), (LIST_A, "list"), (MAP_AB, "map")):
        declare_both("size", f"size_{kind}", (t,), T.INT, _size)
    declare_both("matches", "matches", (T.STRING, T.STRING), T.BOOL, _matches)
    declare(
        "contains", "contains_string", (T.STRING, T.STRING), T.BOOL, str.__contains__, member=True
    )
    declare(
        "startsWith",
        "starts_with_string",
        (T.STRING, T.STRING),
        T.BOOL,
        str.startswith,
        member=True,
    )
    declare("endsWith", "ends_with_string", (T.STRING, T.STRING), T.BOOL, str.endswith, member=True)


TYPE_IDENTS: dict[str, CelType] = {
    name: CelType(name)
    for name in ("int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type")
}
TYPE_IDENTS["type"] = CelType("type")


def _declare_time() -> None:
    for name in TIMESTAMP_GETTERS:
        get = timestamp_getter(name)
        declare(name, f"timestamp_to_{name}", (T.TIMESTAMP,), T.INT, get, member=True)
        declare(
            name, f"timestamp_to_{name}_with_tz", (T.TIMESTAMP, T.STRING), T.INT, get, member=True
        )
    for name, getter in DURATION_GETTERS.items():
        declare(name, f"duration_to_{name}", (T.DURATION,), T.INT, getter, member=True)


def install() -> None:
    _declare_operators()
    _declare_conversions()
    _declare_strings()
    _declare_time()
