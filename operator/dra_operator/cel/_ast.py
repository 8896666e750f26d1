"""The CEL syntax tree after macro expansion.

Nodes keep the source offset cel-go reports for them (the operator or the dot of a select, the
open parenthesis of a call), so compile errors point where upstream's do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ConstValue = int | float | str | bytes | bool | None


@dataclass(eq=False, slots=True)
class Node:
    pos: int


@dataclass(eq=False, slots=True)
class Const(Node):
    kind: str  # int, uint, double, string, bytes, bool, null
    value: ConstValue


@dataclass(eq=False, slots=True)
class Ident(Node):
    name: str


@dataclass(eq=False, slots=True)
class Select(Node):
    operand: Node
    field: str
    test_only: bool = False  # has()
    optional: bool = False  # .?


@dataclass(eq=False, slots=True)
class Index(Node):
    operand: Node
    index: Node
    optional: bool = False  # [?


@dataclass(eq=False, slots=True)
class Call(Node):
    """A function or operator (`_+_`, `!_`, `@in`); `target` is the receiver of `x.f()`."""

    name: str
    args: list[Node]
    target: Node | None = None


@dataclass(eq=False, slots=True)
class ListLit(Node):
    items: list[Node]
    optional: list[bool] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class MapLit(Node):
    entries: list[tuple[Node, Node, bool]]


@dataclass(eq=False, slots=True)
class Cond(Node):
    cond: Node
    then: Node
    other: Node


@dataclass(eq=False, slots=True)
class Logic(Node):
    """`&&` (op "and") or `||` (op "or"): non-strict, errors absorbed by a deciding operand."""

    op: str
    left: Node
    right: Node


@dataclass(eq=False, slots=True)
class Bind(Node):
    """`cel.bind(var, init, body)`."""

    var: str
    init: Node
    body: Node


@dataclass(eq=False, slots=True)
class Loop(Node):
    """A comprehension macro.

    `kind` is the macro (all, exists, exists_one, map, filter, transformList, transformMap,
    transformMapEntry); `var2` is set for the two-variable forms; `pred` is the filter of
    map/transform* with a filter argument.
    """

    kind: str
    var: str
    var2: str | None
    range: Node
    body: Node
    pred: Node | None = None


@dataclass(eq=False, slots=True)
class StructLit(Node):
    """`T{f: v}`: parsed so it can be rejected with upstream's undeclared-type error."""

    type_name: str
    fields: list[tuple[str, Node]]
