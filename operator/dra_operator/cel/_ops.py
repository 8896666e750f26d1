"""Small runtime pieces the generated selector code calls by name (bound as its globals)."""

from __future__ import annotations

from typing import Any, NoReturn

from dra_operator.cel import _runtime as R
from dra_operator.cel._values import NONE, Optional, Semver, no_such_overload
from dra_operator.errors import CELAbortError, CELCostLimitError, CELRuntimeError

COST_LIMIT = 1_000_000


def keep(error: CELRuntimeError) -> CELRuntimeError:
    """An error an `&&`, `||` or comprehension may absorb; an abort (a cost overrun, or what
    panics in cel-go) is never absorbed."""
    if isinstance(error, CELAbortError):
        raise error
    return error


def logic_fail(left: Any, right: Any) -> NoReturn:
    """Neither operand decided `&&`/`||`: as cel-go, the first non-boolean operand is reported,
    its own error if it is one, else no such overload (`0 && error` is no such overload)."""
    culprit = right if isinstance(left, bool) else left
    if isinstance(culprit, CELRuntimeError):
        raise culprit
    raise no_such_overload()


def cond_fail(cond: Any) -> NoReturn:
    raise no_such_overload()


def not_bool(value: Any) -> CELRuntimeError:
    return value if isinstance(value, CELRuntimeError) else no_such_overload()


def cost_exceeded() -> NoReturn:
    raise CELCostLimitError("operation cancelled: actual cost limit exceeded")


def mget(m: dict[str, Any], key: str) -> Any:
    try:
        return m[key]
    except KeyError:
        raise R.no_such_key(key) from None


def in_constants(value: Any, items: tuple[Any, ...]) -> bool:
    """`x in [literals]`: cel-go looks x up in a Go hash set, which panics on a Semver; the
    panic ends the evaluation, whatever `&&` or `||` surrounds it."""
    if type(value) is Semver:
        raise CELAbortError("internal error: runtime error: hash of unhashable type cel.Semver")
    return R.contains(items, value)


def nokey(key: str) -> NoReturn:
    raise R.no_such_key(key)


EMPTY: dict[str, Any] = {}


def pairs(container: Any) -> Any:
    """(first, second) comprehension variables: (index, value) for lists, (key, value) for maps."""
    if type(container) in (tuple, list):
        return enumerate(container)
    if isinstance(container, dict):
        return container.items()
    raise no_such_overload()


def as_optional(value: Any) -> Optional:
    if type(value) is Optional:
        return value
    raise no_such_overload()


def opt_body(value: Any) -> Optional:
    if type(value) is Optional:
        return value
    raise no_such_overload()


def put(out: dict[Any, Any], key: Any, value: Any) -> None:
    """One map literal entry: a repeated key keeps the last value, as cel-go's literal does."""
    for existing in list(out):
        if R.map_lookup({existing: None}, key)[0]:
            del out[existing]
    out[key] = value


def put_entry(out: dict[Any, Any], entry: Any) -> None:
    if not isinstance(entry, dict):
        raise no_such_overload()
    for key, value in entry.items():
        if R.map_lookup(out, key)[0]:
            raise CELRuntimeError(f"insert failed: key {R.format_key(key)} already exists")
        out[key] = value


# cel-go's ConvertToNative(bool) errors, which upstream appends to its own message.
_NOT_BOOL = {
    "int": "unsupported type conversion from 'int' to bool",
    "uint": "unsupported type conversion from 'uint' to bool",
    "double": "unsupported type conversion from 'double' to bool",
    "string": "unsupported native conversion from string to 'bool'",
    "bytes": "type conversion error from Bytes to 'bool'",
    "kubernetes.Semver": "type conversion error from 'Semver' to 'bool'",
    "kubernetes.Quantity": "type conversion error from 'Quantity' to 'bool'",
}


def result_not_bool(value: Any) -> NoReturn:
    name = R.type_name(value)
    detail = _NOT_BOOL.get(name, f"type conversion error from '{name}' to 'bool'")
    raise CELRuntimeError(f"CEL result of type {name} could not be converted to bool: {detail}")


GLOBALS: dict[str, Any] = {
    "_Err": CELRuntimeError,
    "_keep": keep,
    "_logic_fail": logic_fail,
    "_cond_fail": cond_fail,
    "_not_bool": not_bool,
    "_cost_exceeded": cost_exceeded,
    "_mget": mget,
    "_nokey": nokey,
    "_EMPTY": EMPTY,
    "_pairs": pairs,
    "_iter": R.iterate,
    "_as_opt": as_optional,
    "_opt_body": opt_body,
    "_put_entry": put_entry,
    "_put": put,
    "_result_not_bool": result_not_bool,
    "_nso": no_such_overload,
    "_NONE": NONE,
    "_Optional": Optional,
    "_eq": R.eq,
    "_ne": R.ne,
    "_lt": R.lt,
    "_le": R.le,
    "_gt": R.gt,
    "_ge": R.ge,
    "_lt_named": R.lt_named,
    "_le_named": R.le_named,
    "_gt_named": R.gt_named,
    "_ge_named": R.ge_named,
    "_add": R.add,
    "_sub": R.sub,
    "_mul": R.mul,
    "_div": R.div,
    "_mod": R.mod,
    "_neg": R.neg,
    "_not": R.logical_not,
    "_chk": R.check_int,
    "_select": R.select,
    "_chain_select": R.chain_select,
    "_has": R.has_field,
    "_index": R.index,
    "_opt_select": R.opt_select,
    "_opt_index": R.opt_index,
    "_contains": R.contains,
    "_in_constants": in_constants,
    "_COST_LIMIT": COST_LIMIT,
}
