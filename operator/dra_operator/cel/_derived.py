"""Derived attributes (1.37 alpha, DRADerivedAttributes): a CEL expression computing a value.

Compiled in the selectors' environment but typed as upstream's `GetOrCompileDerivedAttribute`
wants: a primitive scalar (string, integer, boolean, semver, or dyn) or a list of these (the
scheduler compiles for stored expressions, which always allows lists). The value comes back
as a `DeviceAttribute`, converted as upstream's `valToDeviceAttribute` does; a value of
another type is a runtime error with upstream's text.
"""

from __future__ import annotations

import functools
from typing import Any

from dra_operator.cel import _types as T
from dra_operator.cel._device import DeviceView
from dra_operator.cel._selector import CELFeatures, compile_python
from dra_operator.cel._values import Semver, UInt
from dra_operator.errors import CELRuntimeError
from dra_operator.model import AttributeKind, DeviceAttribute

_SCALARS = frozenset({T.BOOL, T.INT, T.STRING, T.ANY, T.DYN, T.FREE, T.SEMVER})
_EXPECTED = (
    "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of these "
    "scalars, not {}"
)


def _allowed(t: T.Type) -> bool:
    if t in _SCALARS:
        return True
    return isinstance(t, tuple) and t[0] == "list" and len(t) == 2 and t[1] in _SCALARS


class CompiledDerived:
    """A derived-attribute expression compiled to Python; `evaluate` runs it on one device."""

    __slots__ = ("_fn", "_list_index", "expression")

    def __init__(self, expression: str, features: CELFeatures, fn: Any) -> None:
        self.expression = expression
        self._fn = fn
        self._list_index = 1 if features.list_type_attributes or features.expose_lists else 0

    def evaluate(self, device: DeviceView) -> DeviceAttribute:
        """The value as an attribute; raises CELRuntimeError as upstream's evaluation fails."""
        error = device.errors[self._list_index]
        if error is not None:
            raise CELRuntimeError(error)
        try:
            value = self._fn(device)
        except RecursionError:
            raise CELRuntimeError("max recursion depth exceeded") from None
        return to_attribute(value)


@functools.lru_cache(maxsize=256)
def compile_derived(expression: str, features: CELFeatures) -> CompiledDerived:
    """Compile `expression`; raises CELCompileError with upstream's text (not cached then)."""
    _, fn = compile_python(expression, features, result_error=_EXPECTED.format, accept=_allowed)
    return CompiledDerived(expression, features, fn)


def _go_type(value: object) -> str:
    """Go's `%T` of the value cel-go would hold, for error texts."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, UInt):
        return "uint64"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "[]uint8"
    if isinstance(value, Semver):
        return "semver.Version"
    if value is None:
        return "structpb.NullValue"
    if isinstance(value, dict):
        return "map[ref.Val]ref.Val"
    return type(value).__name__


def _kind_of(value: object) -> tuple[AttributeKind, AttributeKind, str] | None:
    """(scalar kind, list kind, element name) for an allowed value, else None."""
    if isinstance(value, bool):
        return AttributeKind.BOOL, AttributeKind.BOOLS, "bool"
    if isinstance(value, int) and not isinstance(value, UInt):
        return AttributeKind.INT, AttributeKind.INTS, "int"
    if isinstance(value, str):
        return AttributeKind.STRING, AttributeKind.STRINGS, "string"
    if isinstance(value, Semver):
        return AttributeKind.VERSION, AttributeKind.VERSIONS, "semver"
    return None


def _plain(value: object) -> int | bool | str:
    if isinstance(value, Semver):
        return str(value)
    assert isinstance(value, int | bool | str)
    return value


def to_attribute(value: object) -> DeviceAttribute:
    """upstream's valToDeviceAttribute; an empty list is an empty string list."""
    found = _kind_of(value)
    if found is not None:
        return DeviceAttribute(kind=found[0], value=_plain(value))
    if isinstance(value, tuple | list):
        if not value:
            return DeviceAttribute(kind=AttributeKind.STRINGS, value=())
        first = _kind_of(value[0])
        if first is None:
            raise CELRuntimeError(f"unsupported list element type: {_go_type(value[0])}")
        items = []
        for index, item in enumerate(value):
            kind = _kind_of(item)
            if kind is None or kind[0] is not first[0]:
                raise CELRuntimeError(
                    f"expected list element at index {index} to be {first[2]}, got {_go_type(item)}"
                )
            items.append(_plain(item))
        return DeviceAttribute(kind=first[1], value=tuple(items))  # type: ignore[arg-type]
    raise CELRuntimeError(f"unsupported CEL return type: {_go_type(value)}")
