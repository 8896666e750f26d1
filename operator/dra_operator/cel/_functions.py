"""The function registry: every overload the DRA environment declares, with its Python body.

The checker resolves overloads by static type; the code generator calls the body directly when
exactly one overload fits statically, and otherwise a dispatcher that picks by runtime kind, as
cel-go's dynamic dispatch does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dra_operator.cel import _types as T
from dra_operator.cel._runtime import python_types, type_name
from dra_operator.errors import CELRuntimeError

Impl = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Overload:
    id: str
    member: bool
    params: tuple[T.Type, ...]
    result: T.Type
    impl: Impl


REGISTRY: dict[str, list[Overload]] = {}


def declare(
    name: str,
    overload_id: str,
    params: tuple[T.Type, ...],
    result: T.Type,
    impl: Impl,
    *,
    member: bool = False,
) -> None:
    REGISTRY.setdefault(name, []).append(Overload(overload_id, member, params, result, impl))


def declare_both(
    name: str, overload_id: str, params: tuple[T.Type, ...], result: T.Type, impl: Impl
) -> None:
    """A function callable as `f(x, ...)` and as `x.f(...)` (cel-go declares both overloads)."""
    declare(name, overload_id, params, result, impl)
    declare(name, overload_id + "_member", params, result, impl, member=True)


def _python_types(param: T.Type) -> frozenset[type] | None:
    """The runtime classes a parameter accepts; None for dyn and type parameters."""
    if T.is_dyn(param):
        return None
    return python_types(T.head(param))


# cel-go's standard functions fail a dynamic dispatch with a shorter text than libraries do.
_STDLIB_NO_OVERLOAD = {
    "size": "no such overload: size",
    "matches": "no such overload",
    "contains": "no such overload",
    "startsWith": "no such overload",
    "endsWith": "no such overload",
}


def _no_overload(name: str, args: tuple[Any, ...]) -> CELRuntimeError:
    text = _STDLIB_NO_OVERLOAD.get(name)
    if text is None:
        text = f"no such overload: {name}({', '.join(type_name(a) for a in args)})"
    return CELRuntimeError(text)


def make_dispatcher(name: str, overloads: list[Overload]) -> Impl:
    """Pick the first overload whose parameter kinds fit the runtime values (dynamic dispatch).

    The checker passes only overloads of one arity; one- and two-argument dispatchers are
    unrolled because they sit on the hot path of selectors over `any`-typed attributes.
    """
    table = [(tuple(_python_types(p) for p in o.params), o.impl) for o in overloads]
    arity = len(table[0][0])
    if arity == 1:
        table1 = [(accepted[0], impl) for accepted, impl in table]

        def dispatch1(a: Any) -> Any:
            ta = type(a)
            for t0, impl in table1:
                if t0 is None or ta in t0:
                    return impl(a)
            raise _no_overload(name, (a,))

        return dispatch1
    if arity == 2:
        table2 = [(accepted[0], accepted[1], impl) for accepted, impl in table]

        def dispatch2(a: Any, b: Any) -> Any:
            ta = type(a)
            tb = type(b)
            for t0, t1, impl in table2:
                if (t0 is None or ta in t0) and (t1 is None or tb in t1):
                    return impl(a, b)
            raise _no_overload(name, (a, b))

        return dispatch2

    def dispatch(*args: Any) -> Any:
        for accepted, impl in table:
            for types, arg in zip(accepted, args, strict=True):
                if types is not None and type(arg) not in types:
                    break
            else:
                return impl(*args)
        raise _no_overload(name, args)

    return dispatch
