"""Type-check a parsed expression against the DRA environment, as cel-go's checker does.

The `device` variable is an object type with fixed fields, so `device.drivr` fails here, at
compile time. Attribute values are `any` (or `dyn` with DRAListTypeAttributes): anything under
them is checked only at runtime. The checker records each node's type and each call's candidate
overloads for the code generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dra_operator.cel import _ast as A
from dra_operator.cel import _types as T
from dra_operator.cel._functions import REGISTRY, Overload
from dra_operator.cel._text import CompileIssue

TYPE_IDENT_NAMES = frozenset(
    {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"}
)


@dataclass(frozen=True, slots=True)
class Environment:
    """The declared environment: DRAListTypeAttributes changes the attribute type;
    `named_resources` is 1.30's instead (`attributes.<type>` maps, no `device`)."""

    list_type_attributes: bool
    named_resources: bool = False

    @property
    def attribute_type(self) -> T.Type:
        return T.DYN if self.list_type_attributes else T.ANY

    def device_fields(self) -> dict[str, T.Type]:
        return {
            "driver": T.STRING,
            "attributes": T.map_of(T.STRING, T.map_of(T.STRING, self.attribute_type)),
            "capacity": T.map_of(T.STRING, T.map_of(T.STRING, T.QUANTITY)),
            "allowMultipleAllocations": T.BOOL,
        }

    @staticmethod
    def has_function(name: str) -> bool:
        return name in REGISTRY


@dataclass(slots=True)
class Checked:
    types: dict[int, T.Type] = field(default_factory=dict)
    overloads: dict[int, list[Overload]] = field(default_factory=dict)

    def type_of(self, node: A.Node) -> T.Type:
        return self.types[id(node)]


Scope = dict[str, T.Type]


class Checker:
    def __init__(self, env: Environment) -> None:
        self.env = env
        self.out = Checked()
        self.issues: list[CompileIssue] = []
        self._fields = env.device_fields()

    def check(self, root: A.Node, accept: Callable[[T.Type], bool] | None = None) -> Checked:
        """Type-check `root`; its type must be a selector's (bool), or one `accept` allows."""
        result = self._visit(root, {})
        if self.issues:
            raise CompileIssues(sorted(self.issues, key=lambda issue: issue.pos))
        if accept is not None:
            acceptable = accept(result)
        else:
            acceptable = result in (T.BOOL, T.ANY) or (
                self.env.list_type_attributes and result in (T.DYN, T.FREE)
            )
            if self.env.named_resources:
                acceptable = result == T.BOOL
        if not acceptable:
            raise ResultTypeError(T.format_type(result))
        return self.out

    def _set(self, node: A.Node, t: T.Type) -> T.Type:
        self.out.types[id(node)] = t
        return t

    def _visit(self, node: A.Node, scope: Scope) -> T.Type:
        """Check one node; a problem is recorded and typed `error`, so checking goes on and
        every independent problem is reported, as cel-go does."""
        try:
            return self._visit_node(node, scope)
        except CompileIssue as issue:
            self.issues.append(issue)
            return self._set(node, T.ERROR)

    def _visit_node(self, node: A.Node, scope: Scope) -> T.Type:
        if isinstance(node, A.Const):
            kind = {"null": T.NULL}.get(node.kind, node.kind)
            return self._set(node, kind)
        if isinstance(node, A.Ident):
            return self._set(node, self._ident(node, scope))
        if isinstance(node, A.Select):
            return self._set(node, self._select(node, scope))
        if isinstance(node, A.Index):
            return self._set(node, self._index(node, scope))
        if isinstance(node, A.Call):
            return self._set(node, self._call(node, scope))
        if isinstance(node, A.Logic):
            left = self._visit(node.left, scope)
            right = self._visit(node.right, scope)
            for t in (left, right):
                if not T.is_assignable(T.BOOL, t, {}):
                    op = "_&&_" if node.op == "and" else "_||_"
                    raise _no_overload(node.pos, op, [left, right])
            return self._set(node, T.BOOL)
        if isinstance(node, A.Cond):
            return self._set(node, self._cond(node, scope))
        if isinstance(node, A.ListLit):
            return self._set(node, T.list_of(self._homogeneous(node.items, scope)))
        if isinstance(node, A.MapLit):
            keys = self._homogeneous([k for k, _, _ in node.entries], scope)
            values = self._homogeneous([v for _, v, _ in node.entries], scope)
            for key_node, _, _ in node.entries:
                kt = self.out.type_of(key_node)
                if not T.is_dyn(kt) and kt not in (T.INT, T.UINT, T.BOOL, T.STRING):
                    raise CompileIssue(key_node.pos, f"unsupported map key type: {kt}")
            return self._set(node, T.map_of(keys, values))
        if isinstance(node, A.Bind):
            init = self._visit(node.init, scope)
            return self._set(node, self._visit(node.body, {**scope, node.var: init}))
        if isinstance(node, A.Loop):
            return self._set(node, self._loop(node, scope))
        if isinstance(node, A.StructLit):
            raise CompileIssue(
                node.pos, f"undeclared reference to '{node.type_name}' (in container '')"
            )
        raise CompileIssue(node.pos, f"unsupported expression {type(node).__name__}")

    # -- references ----------------------------------------------------------------------------

    def _ident(self, node: A.Ident, scope: Scope) -> T.Type:
        name = node.name.removeprefix(".")
        if node.name in scope:
            return scope[node.name]
        if name == "device" and not self.env.named_resources:
            return T.DEVICE
        if name in TYPE_IDENT_NAMES:
            return T.TYPE
        raise CompileIssue(node.pos, f"undeclared reference to '{name}' (in container '')")

    def _select(self, node: A.Select, scope: Scope) -> T.Type:
        named = named_attributes(node, scope) if self.env.named_resources else None
        if named is not None:
            return named
        operand = self._visit(node.operand, scope)
        optional_result = node.optional
        target = operand
        if isinstance(target, tuple) and target[0] == "optional_type":
            target = target[1]
            optional_result = True
        result = self._field_type(node, target)
        if node.test_only:
            return T.BOOL
        return T.optional_of(result) if optional_result else result

    def _field_type(self, node: A.Select, target: T.Type) -> T.Type:
        if target == T.DEVICE:
            if node.field not in self._fields:
                raise CompileIssue(node.pos, f"undefined field '{node.field}'")
            return self._fields[node.field]
        if T.is_dyn(target):
            return T.DYN
        if isinstance(target, tuple) and target[0] == "map":
            if not T.is_assignable(target[1], T.STRING, {}):
                raise _no_field_selection(node.pos, target)
            return target[2]
        raise _no_field_selection(node.pos, target)

    def _index(self, node: A.Index, scope: Scope) -> T.Type:
        operand = self._visit(node.operand, scope)
        key = self._visit(node.index, scope)
        optional_result = node.optional
        target = operand
        if isinstance(target, tuple) and target[0] == "optional_type":
            target = target[1]
            optional_result = True
        if T.is_dyn(target):
            result: T.Type = T.DYN
        elif isinstance(target, tuple) and target[0] == "list":
            if not T.is_assignable(T.INT, key, {}):
                raise _no_overload(node.pos, "_[_]", [operand, key])
            result = target[1]
        elif isinstance(target, tuple) and target[0] == "map":
            if not T.is_assignable(target[1], key, {}):
                raise _no_overload(node.pos, "_[_]", [operand, key])
            result = target[2]
        else:
            raise _no_overload(node.pos, "_[_]", [operand, key])
        return T.optional_of(result) if optional_result else result

    # -- calls ---------------------------------------------------------------------------------

    def _call(self, node: A.Call, scope: Scope) -> T.Type:
        arg_types = [self._visit(a, scope) for a in node.args]
        member = node.target is not None
        if node.target is not None:
            arg_types.insert(0, self._visit(node.target, scope))
        if not self.env.has_function(node.name):
            raise CompileIssue(node.pos, f"undeclared reference to '{node.name}' (in container '')")
        matched: list[Overload] = []
        results: list[T.Type] = []
        for overload in REGISTRY[node.name]:
            if overload.member != member or len(overload.params) != len(arg_types):
                continue
            bindings: T.Bindings = {}
            if all(
                T.is_assignable(p, a, bindings)
                for p, a in zip(overload.params, arg_types, strict=True)
            ):
                matched.append(overload)
                results.append(T.substitute(overload.result, bindings))
        if not matched:
            raise _no_overload(node.pos, node.name, arg_types, member=member)
        self.out.overloads[id(node)] = matched
        first = results[0]
        return first if all(r == first for r in results) else T.DYN

    def _cond(self, node: A.Cond, scope: Scope) -> T.Type:
        cond = self._visit(node.cond, scope)
        then = self._visit(node.then, scope)
        other = self._visit(node.other, scope)
        joined = T.join(then, other)
        if not T.is_assignable(T.BOOL, cond, {}) or joined is None:
            raise _no_overload(node.pos, "_?_:_", [cond, then, other])
        return joined

    def _homogeneous(self, items: list[A.Node], scope: Scope) -> T.Type:
        """The common element type; cel-go's validator reports a literal's first mismatch."""
        types = [self._visit(item, scope) for item in items]
        elem: T.Type = types[0] if types else T.FREE
        for item, t in zip(items[1:], types[1:], strict=True):
            joined = T.exact_join(elem, t)
            if joined is None:
                expected = f"expected type '{T.format_type(elem)}' but found '{T.format_type(t)}'"
                self.issues.append(CompileIssue(item.pos, expected))
                break
            elem = joined
        return elem

    def _loop(self, node: A.Loop, scope: Scope) -> T.Type:
        range_type = self._visit(node.range, scope)
        if node.kind in ("optMap", "optFlatMap"):
            if not (isinstance(range_type, tuple) and range_type[0] == "optional_type"):
                if not T.is_dyn(range_type):
                    raise _no_overload(node.pos, "hasValue", [range_type], member=True)
                range_type = T.optional_of(T.DYN)
            body = self._visit(node.body, {**scope, node.var: range_type[1]})
            if node.kind == "optMap":
                return T.optional_of(body)
            return body
        elems = T.element_types(range_type)
        if elems is None:
            raise CompileIssue(
                node.range.pos,
                f"expression of type '{T.format_type(range_type)}' cannot be range of a "
                "comprehension (must be list, map, or dynamic)",
            )
        inner = dict(scope)
        is_map = isinstance(range_type, tuple) and range_type[0] == "map"
        if node.var2 is None:
            inner[node.var] = elems[0] if is_map else elems[1]
        else:
            inner[node.var], inner[node.var2] = elems
        if node.pred is not None:
            self._expect_bool(node, self._visit(node.pred, inner), "_?_:_")
        body = self._visit(node.body, inner)
        kind = node.kind
        if kind in ("all", "exists", "exists_one", "filter"):
            op = {"all": "_&&_", "exists": "_||_"}.get(kind, "_?_:_")
            self._expect_bool(node, body, op)
            if kind == "filter":
                return T.list_of(inner[node.var])
            return T.BOOL
        if kind in ("map", "transformList"):
            return T.list_of(body)
        if kind == "transformMap":
            return T.map_of(elems[0], body)
        if not (T.is_dyn(body) or (isinstance(body, tuple) and body[0] == "map")):
            raise _no_overload(node.pos, "_+_", [T.map_of(T.DYN, T.DYN), body])
        return body if not T.is_dyn(body) else T.map_of(T.DYN, T.DYN)

    @staticmethod
    def _expect_bool(node: A.Loop, t: T.Type, op: str) -> None:
        if not T.is_assignable(T.BOOL, t, {}):
            raise _no_overload(node.pos, op, [T.BOOL, t])


class CompileIssues(Exception):
    """Every problem the checker found, in source order."""

    def __init__(self, issues: list[CompileIssue]) -> None:
        super().__init__(issues[0].message)
        self.issues = issues


# 1.30's named-resources variables `attributes.<type>`: map(string, <type>) per instance.
NAMED_ATTRIBUTE_TYPES: dict[str, T.Type] = {
    "quantity": T.map_of(T.STRING, T.QUANTITY),
    "bool": T.map_of(T.STRING, T.BOOL),
    "int": T.map_of(T.STRING, T.INT),
    "intslice": T.map_of(T.STRING, T.list_of(T.INT)),
    "string": T.map_of(T.STRING, T.STRING),
    "stringslice": T.map_of(T.STRING, T.list_of(T.STRING)),
    "version": T.map_of(T.STRING, T.SEMVER),
}


def named_attributes(node: A.Select, scope: Scope | dict[str, str]) -> T.Type | None:
    """The type of `attributes.<type>` when `node` is one (cel-go resolves the dotted name)."""
    operand = node.operand
    if (
        isinstance(operand, A.Ident)
        and operand.name.removeprefix(".") == "attributes"
        and operand.name not in scope
        and not node.test_only
        and not node.optional
    ):
        return NAMED_ATTRIBUTE_TYPES.get(node.field)
    return None


class ResultTypeError(Exception):
    """The expression type-checks but its type is not acceptable as a selector result."""


def _no_overload(pos: int, name: str, args: list[T.Type], *, member: bool = False) -> CompileIssue:
    formatted = [T.format_type(a) for a in args]
    if member:
        shown = f"{formatted[0]}.({', '.join(formatted[1:])})"
    else:
        shown = f"({', '.join(formatted)})"
    return CompileIssue(pos, f"found no matching overload for '{name}' applied to '{shown}'")


def _no_field_selection(pos: int, target: T.Type) -> CompileIssue:
    return CompileIssue(pos, f"type '{T.format_type(target)}' does not support field selection")
