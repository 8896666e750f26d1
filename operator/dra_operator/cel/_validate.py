"""Literal-argument checks upstream runs at compile time (cel-go AST validators, constant folding).

Kubernetes' base environment validates regex, duration and timestamp literals and `format`
templates, and cel-go's optimizer folds conversions of literals: a bad literal is a compile
error there, so it is one here too, with the same text.
"""

from __future__ import annotations

import re
from typing import Any

from dra_operator.cel import _ast as A
from dra_operator.cel import _types as T
from dra_operator.cel._checker import Checked
from dra_operator.cel._lib_core import compile_regex
from dra_operator.cel._text import CompileIssue
from dra_operator.cel._time import parse_duration, parse_timestamp
from dra_operator.errors import CELRuntimeError

_CONVERSIONS = {"int": "int", "uint": "uint", "double": "double", "bool": "bool"}
_CLAUSE = re.compile(r"%(?:\.\d+)?([a-zA-Z%])?")
_INTEGERS = {T.INT, T.UINT}
_FORMAT_RULES: dict[str, tuple[frozenset[T.Type], str]] = {
    "d": (frozenset({T.INT, T.UINT, T.DOUBLE}), "decimal clause can only be used on integers"),
    "f": (frozenset({T.DOUBLE, T.INT, T.UINT}), "fixed-point clause can only be used on doubles"),
    "e": (frozenset({T.DOUBLE, T.INT, T.UINT}), "scientific clause can only be used on doubles"),
    "o": (frozenset(_INTEGERS), "octal clause can only be used on integers"),
    "b": (frozenset({*_INTEGERS, T.BOOL}), "only integers and bools can be formatted as binary"),
    "x": (
        frozenset({*_INTEGERS, T.STRING, T.BYTES}),
        "only integers, byte buffers, and strings can be formatted as hex",
    ),
}


class ProgramError(Exception):
    """A literal that cel-go's optimizer fails to fold: `program instantiation failed: ...`."""


def validate(root: A.Node, checked: Checked) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, A.Call):
            _check_call(node, checked)
        for value in _children(node):
            stack.append(value)


def _children(node: A.Node) -> list[A.Node]:
    out: list[A.Node] = []
    for name in type(node).__slots__:
        value: Any = getattr(node, name)
        if isinstance(value, A.Node):
            out.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, A.Node):
                    out.append(item)
                elif isinstance(item, tuple):
                    out += [x for x in item if isinstance(x, A.Node)]
    return out


def _const_string(node: A.Node) -> str | None:
    if isinstance(node, A.Const) and node.kind == "string" and isinstance(node.value, str):
        return node.value
    return None


def _check_call(node: A.Call, checked: Checked) -> None:
    args = [node.target, *node.args] if node.target is not None else list(node.args)
    name = node.name
    if name == "matches" and len(args) == 2 and (pattern := _const_string(args[1])) is not None:
        try:
            compile_regex(pattern)
        except CELRuntimeError:
            raise CompileIssue(args[1].pos, "invalid matches argument") from None
    if name in ("duration", "timestamp") and len(args) == 1:
        text = _const_string(args[0])
        if text is not None:
            try:
                (parse_duration if name == "duration" else parse_timestamp)(text)
            except CELRuntimeError:
                raise CompileIssue(args[0].pos, f"invalid {name} argument") from None
    if name in _CONVERSIONS and node.target is None and len(args) == 1:
        text = _const_string(args[0])
        if text is not None:
            overloads = checked.overloads.get(id(node), [])
            try:
                if overloads:
                    overloads[0].impl(text)
            except CELRuntimeError:
                raise ProgramError(
                    f"type conversion error from 'string' to '{_CONVERSIONS[name]}'"
                ) from None
    if name == "format" and node.target is not None and len(node.args) == 1:
        template = _const_string(node.target)
        values = node.args[0]
        if template is not None and isinstance(values, A.ListLit):
            _check_format(template, values, checked)


def _check_format(template: str, values: A.ListLit, checked: Checked) -> None:
    index = 0
    for match in _CLAUSE.finditer(template):
        verb = match[1]
        if verb is None or verb == "%":
            continue
        if index >= len(values.items):
            raise CompileIssue(values.pos, f"index {index} out of range")
        item = values.items[index]
        index += 1
        t = checked.type_of(item)
        rule = _FORMAT_RULES.get(verb.lower() if verb == "X" else verb)
        if rule is None or T.is_dyn(t):
            continue
        allowed, message = rule
        if t not in allowed:
            raise CompileIssue(
                item.pos, f"error during formatting: {message}, was given {T.format_type(t)}"
            )
