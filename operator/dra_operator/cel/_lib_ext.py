"""cel-go extensions in the Kubernetes base environment: optional types, sets, lists (v3)."""

from __future__ import annotations

from typing import Any

from dra_operator.cel import _runtime as R
from dra_operator.cel import _types as T
from dra_operator.cel._functions import declare
from dra_operator.cel._values import NONE, Optional, UInt, no_such_overload
from dra_operator.errors import CELCostLimitError, CELRuntimeError

A, B = "$A", "$B"
OPT_A = T.optional_of(A)
LIST_A = T.list_of(A)


# -- optional types ------------------------------------------------------------------------------


def _value(opt: Optional) -> Any:
    if not opt.has_value():
        raise CELRuntimeError("optional.none() dereference")
    return opt.value


def _is_zero(value: Any) -> bool:
    if value is None:
        return True
    if type(value) in (int, UInt, float, bool, str, bytes, tuple, list) or isinstance(value, dict):
        return not value
    return False


def _declare_optional() -> None:
    declare("optional.of", "optional_of", (A,), OPT_A, Optional)
    declare(
        "optional.ofNonZeroValue",
        "optional_ofNonZeroValue",
        (A,),
        OPT_A,
        lambda v: NONE if _is_zero(v) else Optional(v),
    )
    declare("optional.none", "optional_none", (), T.optional_of(T.FREE), lambda: NONE)
    declare("value", "optional_value", (OPT_A,), A, _value, member=True)
    declare("hasValue", "optional_hasValue", (OPT_A,), T.BOOL, Optional.has_value, member=True)
    declare(
        "orValue",
        "optional_orValue_value",
        (OPT_A, A),
        A,
        lambda o, v: o.value if o.has_value() else v,
        member=True,
    )
    declare(
        "or",
        "optional_or_optional",
        (OPT_A, OPT_A),
        OPT_A,
        lambda o, other: o if o.has_value() else other,
        member=True,
    )


# -- sets ----------------------------------------------------------------------------------------


def _contains_all(haystack: Any, needles: Any) -> bool:
    return all(any(R.eq(h, n) for h in haystack) for n in needles)


def _declare_sets() -> None:
    declare("sets.contains", "list_sets_contains_list", (LIST_A, LIST_A), T.BOOL, _contains_all)
    declare(
        "sets.equivalent",
        "list_sets_equivalent_list",
        (LIST_A, LIST_A),
        T.BOOL,
        lambda a, b: _contains_all(a, b) and _contains_all(b, a),
    )
    declare(
        "sets.intersects",
        "list_sets_intersects_list",
        (LIST_A, LIST_A),
        T.BOOL,
        lambda a, b: any(R.eq(x, y) for x in a for y in b),
    )


# -- lists extension, version 3 ------------------------------------------------------------------


def _flatten(items: Any, depth: int = 1) -> tuple[Any, ...]:
    if depth < 0:
        raise CELRuntimeError("level must be non-negative")
    out: list[Any] = []
    for item in items:
        if type(item) in (tuple, list) and depth > 0:
            out += _flatten(item, depth - 1)
        else:
            out.append(item)
    return tuple(out)


def _range(n: int) -> tuple[int, ...]:
    if n > 1_000_000:  # the caller charges the size; refuse before building a huge list
        raise CELCostLimitError("operation cancelled: actual cost limit exceeded")
    return tuple(range(max(n, 0)))


def _slice(items: Any, start: int, end: int) -> tuple[Any, ...]:
    if start < 0 or end < 0:
        raise CELRuntimeError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CELRuntimeError(
            f"cannot slice({start}, {end}), start index must be less than or equal to end index"
        )
    if len(items) < end:
        raise CELRuntimeError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return tuple(items[start:end])


def _sort(items: Any) -> tuple[Any, ...]:
    import functools

    if items and len({R.type_name(i) for i in items}) > 1:
        raise no_such_overload()
    return tuple(sorted(items, key=functools.cmp_to_key(R.compare)))


def _distinct(items: Any) -> tuple[Any, ...]:
    out: list[Any] = []
    for item in items:
        if not any(R.eq(seen, item) for seen in out):
            out.append(item)
    return tuple(out)


def _declare_lists() -> None:
    declare("flatten", "list_flatten", (T.list_of(LIST_A),), LIST_A, _flatten, member=True)
    declare(
        "flatten",
        "list_flatten_int",
        (T.list_of(T.DYN), T.INT),
        T.list_of(T.DYN),
        _flatten,
        member=True,
    )
    declare("lists.range", "lists_range", (T.INT,), T.list_of(T.INT), _range)
    declare("slice", "list_slice", (LIST_A, T.INT, T.INT), LIST_A, _slice, member=True)
    declare("sort", "list_sort", (LIST_A,), LIST_A, _sort, member=True)
    declare("distinct", "list_distinct", (LIST_A,), LIST_A, _distinct, member=True)
    declare(
        "reverse", "list_reverse", (LIST_A,), LIST_A, lambda xs: tuple(reversed(xs)), member=True
    )
    declare(
        "first",
        "list_first",
        (LIST_A,),
        OPT_A,
        lambda xs: Optional(xs[0]) if xs else NONE,
        member=True,
    )
    declare(
        "last",
        "list_last",
        (LIST_A,),
        OPT_A,
        lambda xs: Optional(xs[-1]) if xs else NONE,
        member=True,
    )


def install() -> None:
    _declare_optional()
    _declare_sets()
    _declare_lists()
