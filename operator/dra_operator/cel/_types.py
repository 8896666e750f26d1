"""Static CEL types for the checker, in cel-go's spelling.

A type is a string (`int`, `dyn`, `kubernetes.Semver`, a type parameter `$A`) or a tuple
(`("list", T)`, `("map", K, V)`, `("optional_type", T)`); type values are plain `type`. `any` is the
attribute value type without DRAListTypeAttributes: dynamic everywhere except as the range of a
comprehension, exactly as in cel-go.
"""

from __future__ import annotations

Type = str | tuple["Type", ...]

INT, UINT, DOUBLE, STRING, BYTES, BOOL = "int", "uint", "double", "string", "bytes", "bool"
NULL, DYN, ANY, TYPE = "null_type", "dyn", "any", "type"
DURATION, TIMESTAMP = "google.protobuf.Duration", "google.protobuf.Timestamp"
SEMVER, QUANTITY = "kubernetes.Semver", "kubernetes.Quantity"
IP, CIDR, URL = "net.IP", "net.CIDR", "kubernetes.URL"
DEVICE = "kubernetes.DRADevice"


def list_of(elem: Type) -> Type:
    return ("list", elem)


def map_of(key: Type, value: Type) -> Type:
    return ("map", key, value)


def optional_of(elem: Type) -> Type:
    return ("optional_type", elem)


FREE = "$"  # an unbound type parameter (`[]`, `optional.none()`): binds on first use
ERROR = "error"  # the type of a node that failed to check: fits anywhere, so errors don't cascade


def is_dyn(t: Type) -> bool:
    return t in (DYN, ANY, ERROR) or (isinstance(t, str) and t.startswith("$"))


def head(t: Type) -> str:
    return t if isinstance(t, str) else str(t[0])


def format_type(t: Type) -> str:
    if isinstance(t, str):
        if t == FREE:
            return "dyn"
        if t.startswith("$"):
            return t[1:]
        return {DURATION: "google.protobuf.Duration", TIMESTAMP: "google.protobuf.Timestamp"}.get(
            t, t
        )
    return f"{t[0]}({', '.join(format_type(p) for p in t[1:])})"


Bindings = dict[str, Type]


def is_assignable(param: Type, arg: Type, bindings: Bindings) -> bool:
    """cel-go's `isAssignable`, with dyn/any assignable both ways and type parameters bound."""
    if isinstance(param, str) and param.startswith("$"):
        bound = bindings.get(param)
        if bound is None or bound == FREE:
            bindings[param] = arg
            return True
        return is_assignable(bound, arg, bindings)
    if is_dyn(arg) or is_dyn(param):
        return True
    if isinstance(param, str) or isinstance(arg, str):
        return param == arg
    if param[0] != arg[0] or len(param) != len(arg):
        return False
    return all(is_assignable(p, a, bindings) for p, a in zip(param[1:], arg[1:], strict=True))


def substitute(t: Type, bindings: Bindings) -> Type:
    if isinstance(t, str):
        if t.startswith("$"):
            bound = bindings.get(t)
            return FREE if bound is None else substitute(bound, bindings)
        return t
    return (t[0], *(substitute(p, bindings) for p in t[1:]))


def join(a: Type, b: Type) -> Type | None:
    """The common type of two branches or elements, or None when they conflict."""
    if a == b or b == FREE:
        return a
    if a == FREE:
        return b
    if is_dyn(a):
        return a
    if is_dyn(b):
        return b
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] and len(a) == len(b):
        parts = [join(x, y) for x, y in zip(a[1:], b[1:], strict=True)]
        if any(p is None for p in parts):
            return None
        return (a[0], *(p for p in parts if p is not None))
    return None


def exact_join(a: Type, b: Type) -> Type | None:
    """Homogeneous aggregate literals: element types must be equal (`dyn` is not `int`)."""
    if a == b or b in (FREE, ERROR):
        return a
    if a in (FREE, ERROR):
        return b
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] and len(a) == len(b):
        parts = [exact_join(x, y) for x, y in zip(a[1:], b[1:], strict=True)]
        if any(p is None for p in parts):
            return None
        return (a[0], *(p for p in parts if p is not None))
    return None


def element_types(t: Type) -> tuple[Type, Type] | None:
    """(first, second) comprehension variable types over `t`, or None if not iterable."""
    if is_dyn(t) and t != ANY:
        return DYN, DYN
    if isinstance(t, tuple) and t[0] == "list":
        return INT, t[1]
    if isinstance(t, tuple) and t[0] == "map":
        return t[1], t[2]
    return None
