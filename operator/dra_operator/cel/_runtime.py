"""CEL operators with cel-go's semantics, called by generated code when types are dynamic.

Errors are raised as CELRuntimeError with cel-go's texts (`no such key: x`, `division by zero`,
`integer overflow`, `no such overload`). Equality is heterogeneous (`1 == 1.0`, `1u == 1`,
`1 == "1"` is false) except that a Semver on the left errs on a non-Semver, as Kubernetes'
Semver does; ordering works across int, uint and double (CrossTypeNumericComparisons).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable
from typing import Any

from dra_operator.cel._values import (
    NONE,
    CelQuantity,
    CelType,
    Optional,
    Semver,
    UInt,
    no_such_overload,
)
from dra_operator.errors import CELRuntimeError

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
UINT_MAX = 2**64 - 1
NoneType = type(None)

_PLAIN = frozenset({str, int, float, bool, bytes, NoneType, UInt})
_NUMBERS = frozenset({int, float, UInt})
_LISTS = (tuple, list)


class DomainMap(dict[str, Any]):
    """`device.attributes` / `device.capacity`: an unknown domain reads as an empty map.

    `in` and iteration see only the real keys, as upstream's map wrapper overrides only Find.
    """

    __slots__ = ()

    def __missing__(self, key: str) -> dict[str, Any]:
        return {}


def no_such_key(key: object) -> CELRuntimeError:
    return CELRuntimeError(f"no such key: {format_key(key)}")


def format_key(key: object) -> str:
    if type(key) is bool:
        return "true" if key else "false"
    return str(key)


# -- equality and ordering -----------------------------------------------------------------------


def eq(a: Any, b: Any) -> bool:
    ta = type(a)
    tb = type(b)
    if ta is tb and ta in _PLAIN:
        return bool(a == b)
    if ta in _NUMBERS and tb in _NUMBERS:
        return bool(a == b)
    if ta is Semver:
        if tb is not Semver:
            raise no_such_overload()
        return bool(a.compare(b) == 0)
    if ta is CelQuantity:
        return tb is CelQuantity and a.nano == b.nano
    if ta in _LISTS:
        return (
            tb in _LISTS
            and len(a) == len(b)
            and all(_eq_quiet(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for key, value in a.items():
            found, other = map_lookup(b, key)
            if not found or not _eq_quiet(value, other):
                return False
        return True
    if ta is Optional:
        if tb is not Optional or a.has_value() != b.has_value():
            return False
        return not a.has_value() or _eq_quiet(a.value, b.value)
    if ta is tb:
        return bool(a == b)
    return False


def _eq_quiet(a: Any, b: Any) -> bool:
    try:
        return eq(a, b)
    except CELRuntimeError:
        return False


def ne(a: Any, b: Any) -> bool:
    """cel-go's `!=` is "not equal to true": an equality error (Semver vs other) gives true."""
    try:
        return not eq(a, b)
    except CELRuntimeError:
        return True


_ORDERED = frozenset({str, bytes, bool, datetime.timedelta, datetime.datetime})


def compare(a: Any, b: Any) -> int:
    ta = type(a)
    tb = type(b)
    if (ta is tb and ta in _ORDERED) or (ta in _NUMBERS and tb in _NUMBERS):
        if (ta is float or tb is float) and (math.isnan(a) or math.isnan(b)):
            raise CELRuntimeError("NaN values cannot be ordered")
        return int((a > b) - (a < b))
    raise no_such_overload()


def lt(a: Any, b: Any) -> bool:
    return compare(a, b) < 0


def le(a: Any, b: Any) -> bool:
    return compare(a, b) <= 0


def gt(a: Any, b: Any) -> bool:
    return compare(a, b) > 0


def ge(a: Any, b: Any) -> bool:
    return compare(a, b) >= 0


def _named(op: str, check: Any) -> Any:
    def compare_named(a: Any, b: Any) -> bool:
        try:
            return bool(check(a, b))
        except CELRuntimeError as exc:
            if str(exc) == "no such overload":
                raise CELRuntimeError(f"no such overload: {op}") from None
            raise

    return compare_named


lt_named = _named("_<_", lt)
le_named = _named("_<=_", le)
gt_named = _named("_>_", gt)
ge_named = _named("_>=_", ge)


# -- arithmetic ----------------------------------------------------------------------------------


def check_int(value: int) -> int:
    if INT_MIN <= value <= INT_MAX:
        return value
    raise CELRuntimeError("integer overflow")


def check_uint(value: int) -> UInt:
    if 0 <= value <= UINT_MAX:
        return UInt(value)
    raise CELRuntimeError("unsigned integer overflow")


def add(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        return check_int(a + b)
    if ta is UInt and tb is UInt:
        return check_uint(a + b)
    if ta is tb and ta in (float, str, bytes):
        return a + b
    if ta in _LISTS and tb in _LISTS:
        return (*a, *b)
    if ta is datetime.timedelta and tb is datetime.timedelta:
        return a + b
    if {ta, tb} == {datetime.timedelta, datetime.datetime}:
        return a + b
    raise no_such_overload()


def sub(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        return check_int(a - b)
    if ta is UInt and tb is UInt:
        return check_uint(a - b)
    if ta is float and tb is float:
        return a - b
    if ta is datetime.datetime and tb in (datetime.datetime, datetime.timedelta):
        return a - b
    if ta is datetime.timedelta and tb is datetime.timedelta:
        return a - b
    raise no_such_overload()


def mul(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        return check_int(a * b)
    if ta is UInt and tb is UInt:
        return check_uint(a * b)
    if ta is float and tb is float:
        return a * b
    raise no_such_overload()


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def div(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is float and tb is float:
        if b == 0:
            return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 else math.nan
        return a / b
    if (ta is int and tb is int) or (ta is UInt and tb is UInt):
        if b == 0:
            raise CELRuntimeError("division by zero")
        result = _trunc_div(a, b)
        return check_int(result) if ta is int else UInt(result)
    raise no_such_overload()


def mod(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if (ta is int and tb is int) or (ta is UInt and tb is UInt):
        if b == 0:
            raise CELRuntimeError("modulus by zero")
        if ta is int and a == INT_MIN and b == -1:
            raise CELRuntimeError("integer overflow")
        result = a - _trunc_div(a, b) * b
        return result if ta is int else UInt(result)
    raise no_such_overload()


def neg(a: Any) -> Any:
    ta = type(a)
    if ta is int:
        return check_int(-a)
    if ta is float:
        return -a
    if ta is datetime.timedelta:
        return -a
    raise no_such_overload()


def logical_not(a: Any) -> bool:
    if type(a) is bool:
        return not a
    raise no_such_overload()


# -- access --------------------------------------------------------------------------------------


def map_lookup(m: dict[Any, Any], key: Any) -> tuple[bool, Any]:
    """Heterogeneous key lookup: `{1: x}[1u]` and `{1: x}[1.0]` find x, `{1: x}[true]` does not."""
    tk = type(key)
    if tk is str:
        return (True, m[key]) if key in m else (False, None)
    if isinstance(m, DomainMap):
        return True, m[key]
    if tk in _LISTS or isinstance(key, dict) or tk is Optional:
        raise CELRuntimeError(f"unsupported key type: {type_name(key)}")
    try:
        present = key in m
    except TypeError:
        return False, None
    if present:
        is_bool = tk is bool
        for k in m:
            if type(k) is not str and (type(k) is bool) == is_bool and k == key:
                return True, m[k]
    return False, None


def index(container: Any, key: Any) -> Any:
    if isinstance(container, dict):
        if isinstance(container, DomainMap) and type(key) is str:
            return container[key]
        found, value = map_lookup(container, key)
        if not found:
            raise no_such_key(key)
        return value
    if type(container) in _LISTS:
        return container[list_position(container, key)]
    raise no_such_key(key)


def list_position(items: tuple[Any, ...] | list[Any], key: Any) -> int:
    tk = type(key)
    if tk is int or tk is UInt or (tk is float and key.is_integer()):
        i = int(key)
    elif tk is float:
        raise CELRuntimeError(f"unsupported index value {key} in list")
    else:
        raise CELRuntimeError(f"unsupported index type '{type_name(key)}' in list")
    if not 0 <= i < len(items):
        raise CELRuntimeError(f"index out of bounds: {i}")
    return i


def select(operand: Any, field: str) -> Any:
    if isinstance(operand, dict):
        if isinstance(operand, DomainMap):
            return operand[field]
        try:
            return operand[field]
        except KeyError:
            raise no_such_key(field) from None
    getter = getattr(operand, "cel_field", None)
    if getter is not None:
        return getter(field)
    raise no_such_key(field)


def has_field(operand: Any, field: str) -> bool:
    if isinstance(operand, DomainMap):
        return True
    if isinstance(operand, dict):
        return field in operand
    present = getattr(operand, "cel_has", None)
    return bool(present(field)) if present is not None else False


def contains(container: Any, value: Any) -> bool:
    """`value in container`."""
    if type(value) is str and type(container) is tuple:
        return value in container  # a str equals only an equal str, as in CEL
    if type(container) in _LISTS:
        return any(_eq_quiet(item, value) for item in container)
    if isinstance(container, dict):
        if isinstance(container, DomainMap):
            return value in dict.keys(container)
        return map_lookup(container, value)[0]
    raise no_such_overload()


def iterate(container: Any) -> Iterable[Any]:
    if type(container) in _LISTS or isinstance(container, dict):
        return container  # type: ignore[no-any-return]
    raise no_such_overload()


# -- optionals -----------------------------------------------------------------------------------


def opt_select(operand: Any, field: str) -> Optional:
    if type(operand) is Optional:
        if not operand.has_value():
            return NONE
        operand = operand.value
    if isinstance(operand, DomainMap):
        return Optional(operand[field])
    if isinstance(operand, dict):
        return Optional(operand[field]) if field in operand else NONE
    if has_field(operand, field):
        return Optional(select(operand, field))
    return NONE


def opt_index(operand: Any, key: Any) -> Optional:
    if type(operand) is Optional:
        if not operand.has_value():
            return NONE
        operand = operand.value
    if isinstance(operand, dict):
        found, value = map_lookup(operand, key)
        return Optional(value) if found else NONE
    if type(operand) in _LISTS:
        tk = type(key)
        if tk is int or tk is UInt or (tk is float and key.is_integer()):
            i = int(key)
            return Optional(operand[i]) if 0 <= i < len(operand) else NONE
    raise no_such_overload()


def chain_select(operand: Any, field: str) -> Any:
    """`x.f` where x may be an optional (optional chaining keeps the optional)."""
    if type(operand) is Optional:
        return opt_select(operand, field)
    return select(operand, field)


# -- types ---------------------------------------------------------------------------------------

_TYPE_NAMES: dict[type, str] = {
    bool: "bool",
    int: "int",
    UInt: "uint",
    float: "double",
    str: "string",
    bytes: "bytes",
    NoneType: "null_type",
    tuple: "list",
    list: "list",
    dict: "map",
    DomainMap: "map",
    Semver: "kubernetes.Semver",
    CelQuantity: "kubernetes.Quantity",
    Optional: "optional_type",
    CelType: "type",
    datetime.timedelta: "google.protobuf.Duration",
    datetime.datetime: "google.protobuf.Timestamp",
}


def register_type_name(py_type: type, name: str) -> None:
    _TYPE_NAMES[py_type] = name


def python_types(kind: str) -> frozenset[type]:
    """The Python classes that carry values of CEL kind `kind` (`list`, `int`, ...)."""
    return frozenset(t for t, name in _TYPE_NAMES.items() if name == kind)


def type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def type_value(value: Any) -> CelType:
    return CelType(type_name(value))
