"""Kubernetes' own CEL libraries: Semver, Quantity, lists, regex find, and `includes`.

Texts and edge cases follow k8s.io/apiserver/pkg/cel/library (v0.36): `quantity()` errors with
apimachinery's format message, `asInteger()` fails with `cannot convert value to integer` when
the value does not fit int64 exactly, `semver()` errors with blang/semver's messages.
"""

from __future__ import annotations

import functools
from typing import Any

from dra_operator.cel import _runtime as R
from dra_operator.cel import _types as T
from dra_operator.cel._functions import declare
from dra_operator.cel._lib_core import compile_regex
from dra_operator.cel._values import CelQuantity, Semver, go_quantity_scale
from dra_operator.errors import CELRuntimeError, InvalidObjectError
from dra_operator.model import Quantity

QUANTITY_FORMAT_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


# -- semver --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def parse_semver(text: str, normalize: bool = False) -> Semver:
    try:
        return Semver.parse_normalized(text) if normalize else Semver.parse(text)
    except ValueError as exc:
        raise CELRuntimeError(str(exc)) from None


def _semver(text: str, normalize: bool = False) -> Semver:
    return parse_semver(text, normalize)


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except CELRuntimeError:
        return False
    return True


def _declare_semver() -> None:
    S = T.SEMVER
    declare("semver", "string_to_semver", (T.STRING,), S, _semver)
    declare("semver", "string_bool_to_semver", (T.STRING, T.BOOL), S, _semver)
    declare("isSemver", "is_semver_string", (T.STRING,), T.BOOL, _is_semver)
    declare("isSemver", "is_semver_string_bool", (T.STRING, T.BOOL), T.BOOL, _is_semver)
    for name, overload, impl in (
        ("isGreaterThan", "semver_is_greater_than", lambda a, b: a.key > b.key),
        ("isLessThan", "semver_is_less_than", lambda a, b: a.key < b.key),
    ):
        declare(name, overload, (S, S), T.BOOL, impl, member=True)
    declare("compareTo", "semver_compare_to", (S, S), T.INT, Semver.compare, member=True)
    declare("major", "semver_major", (S,), T.INT, lambda v: v.major, member=True)
    declare("minor", "semver_minor", (S,), T.INT, lambda v: v.minor, member=True)
    declare("patch", "semver_patch", (S,), T.INT, lambda v: v.patch, member=True)


# -- quantity ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def parse_quantity(text: str) -> CelQuantity:
    try:
        parsed = Quantity.parse(text)
        return CelQuantity(int(parsed.value * 10**9), go_quantity_scale(text))
    except InvalidObjectError:
        raise CELRuntimeError(QUANTITY_FORMAT_ERROR) from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except CELRuntimeError:
        return False
    return True


def _as_integer(q: CelQuantity) -> int:
    result = q.as_int64()
    if result is None:
        raise CELRuntimeError("cannot convert value to integer")
    return result


def _q_add(a: CelQuantity, b: CelQuantity | int) -> CelQuantity:
    other = b if isinstance(b, CelQuantity) else CelQuantity(b * 10**9)
    return a.combine(other, a.nano + other.nano)


def _q_sub(a: CelQuantity, b: CelQuantity | int) -> CelQuantity:
    other = b if isinstance(b, CelQuantity) else CelQuantity(b * 10**9)
    return a.combine(other, a.nano - other.nano)


def _declare_quantity() -> None:
    Q = T.QUANTITY
    declare("quantity", "string_to_quantity", (T.STRING,), Q, parse_quantity)
    declare("isQuantity", "is_quantity_string", (T.STRING,), T.BOOL, _is_quantity)
    declare("sign", "quantity_sign", (Q,), T.INT, lambda q: q.sign)
    declare(
        "isGreaterThan",
        "quantity_is_greater_than",
        (Q, Q),
        T.BOOL,
        lambda a, b: a.nano > b.nano,
        member=True,
    )
    declare(
        "isLessThan",
        "quantity_is_less_than",
        (Q, Q),
        T.BOOL,
        lambda a, b: a.nano < b.nano,
        member=True,
    )
    declare("compareTo", "quantity_compare_to", (Q, Q), T.INT, CelQuantity.compare, member=True)
    declare(
        "asApproximateFloat",
        "quantity_get_float",
        (Q,),
        T.DOUBLE,
        CelQuantity.as_float,
        member=True,
    )
    declare("asInteger", "quantity_get_int", (Q,), T.INT, _as_integer, member=True)
    declare(
        "isInteger",
        "quantity_is_integer",
        (Q,),
        T.BOOL,
        lambda q: q.as_int64() is not None,
        member=True,
    )
    declare("add", "quantity_add", (Q, Q), Q, _q_add, member=True)
    declare("add", "quantity_add_int", (Q, T.INT), Q, _q_add, member=True)
    declare("sub", "quantity_sub", (Q, Q), Q, _q_sub, member=True)
    declare("sub", "quantity_sub_int", (Q, T.INT), Q, _q_sub, member=True)


# -- Kubernetes lists library --------------------------------------------------------------------

_COMPARABLE = (T.INT, T.UINT, T.DOUBLE, T.BOOL, T.STRING, T.BYTES, T.DURATION, T.TIMESTAMP)
_SUMMABLE = (T.INT, T.UINT, T.DOUBLE, T.DURATION)


def _is_sorted(items: Any) -> bool:
    return all(R.compare(items[i], items[i + 1]) <= 0 for i in range(len(items) - 1))


def _sum(items: Any, zero: Any) -> Any:
    total = zero
    for item in items:
        total = R.add(total, item)
    return total


def _extreme(items: Any, sign: int) -> Any:
    if not items:
        raise CELRuntimeError(f"{'min' if sign < 0 else 'max'} called on empty list")
    best = items[0]
    for item in items[1:]:
        if R.compare(item, best) * sign > 0:
            best = item
    return best


def _index_of(items: Any, value: Any) -> int:
    for i, item in enumerate(items):
        if R.eq(item, value):
            return i
    return -1


def _last_index_of(items: Any, value: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if R.eq(items[i], value):
            return i
    return -1


def _declare_lists() -> None:
    import datetime

    zeros: dict[T.Type, Any] = {
        T.INT: 0,
        T.UINT: R.check_uint(0),
        T.DOUBLE: 0.0,
        T.DURATION: datetime.timedelta(0),
    }
    for t in _COMPARABLE:
        lt = T.list_of(t)
        declare("isSorted", f"list_{t}_is_sorted", (lt,), T.BOOL, _is_sorted, member=True)
        declare("min", f"list_{t}_min", (lt,), t, lambda xs: _extreme(xs, -1), member=True)
        declare("max", f"list_{t}_max", (lt,), t, lambda xs: _extreme(xs, 1), member=True)
    for t in _SUMMABLE:
        zero = zeros[t]
        declare(
            "sum", f"list_{t}_sum", (T.list_of(t),), t, lambda xs, z=zero: _sum(xs, z), member=True
        )
    la = T.list_of("$A")
    declare("indexOf", "list_a_index_of", (la, "$A"), T.INT, _index_of, member=True)
    declare("lastIndexOf", "list_a_last_index_of", (la, "$A"), T.INT, _last_index_of, member=True)


# -- regex (find, findAll) -----------------------------------------------------------------------


def _find(text: str, pattern: str) -> str:
    match = compile_regex(pattern).search(text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> tuple[str, ...]:
    if limit == 0:
        return ()
    found = [m.group(0) for m in compile_regex(pattern).finditer(text)]
    return tuple(found if limit < 0 else found[:limit])


def _declare_regex() -> None:
    declare("find", "string_find_string", (T.STRING, T.STRING), T.STRING, _find, member=True)
    declare(
        "findAll",
        "string_find_all_string",
        (T.STRING, T.STRING),
        T.list_of(T.STRING),
        _find_all,
        member=True,
    )
    declare(
        "findAll",
        "string_find_all_string_int",
        (T.STRING, T.STRING, T.INT),
        T.list_of(T.STRING),
        _find_all,
        member=True,
    )


# -- DRA includes() (DRAListTypeAttributes) ------------------------------------------------------

INCLUDES_MAX = 48


def includes(target: Any, arg: Any) -> bool:
    if type(target) in (tuple, list):
        if len(target) > INCLUDES_MAX:
            raise CELRuntimeError(
                f"'includes' function cannot be applied to lists longer than {INCLUDES_MAX} values"
            )
        return any(R.eq(item, arg) for item in target)
    return R.eq(target, arg)


def install() -> None:
    declare("includes", "dra_includes_dyn_dyn", (T.DYN, T.DYN), T.BOOL, includes, member=True)
    _declare_semver()
    _declare_quantity()
    _declare_lists()
    _declare_regex()
