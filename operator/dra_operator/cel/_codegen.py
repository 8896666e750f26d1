# Over 500 lines for one job: a compiler case per CEL node kind, sharing one emitter's state.
"""Compile a checked expression into the source of one Python function, `_selector(_d)`.

Every node becomes a Python expression plus, where CEL needs control flow (`&&`, `||`, `?:`,
comprehensions), statements that run before it. Errors are exceptions; the non-strict operators
catch them into locals so that a later deciding operand can absorb them, which is cel-go's
commutative error semantics. Where static types make an operator unambiguous (string == string,
int < int) it becomes the plain Python operator; dynamic operands go through `_runtime`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from dra_operator.cel import _ast as A
from dra_operator.cel import _types as T
from dra_operator.cel._checker import Checked, named_attributes
from dra_operator.cel._functions import Overload, make_dispatcher
from dra_operator.cel._lib_core import TYPE_IDENTS
from dra_operator.cel._runtime import python_types
from dra_operator.cel._values import CelType, UInt

_SAME_TYPE_EQ = frozenset({T.INT, T.UINT, T.STRING, T.BOOL, T.BYTES, T.DOUBLE, T.NULL})
_SAME_TYPE_ORDER = frozenset({T.INT, T.STRING, T.BYTES, T.BOOL})
_CMP = {"_<_": ("<", "_lt"), "_<=_": ("<=", "_le"), "_>_": (">", "_gt"), "_>=_": (">=", "_ge")}
_ARITH = {"_+_": ("+", "_add"), "_-_": ("-", "_sub"), "_*_": ("*", "_mul")}
_DEVICE_FIELDS = {
    "driver": "driver",
    "attributes": "attributes",
    "capacity": "capacity",
    "allowMultipleAllocations": "allow_multiple_allocations",
}
# Functions folded at compile time when every argument is a literal (no error at fold time).
FOLDABLE = frozenset(
    {"semver", "quantity", "duration", "timestamp", "ip", "cidr", "url", "isSemver", "isQuantity"}
)


@dataclass(slots=True)
class Code:
    stmts: list[str]
    expr: str
    fallible: bool = True


@dataclass(slots=True)
class Generated:
    source: str
    namespace: dict[str, Any] = field(default_factory=dict)


def _indent(lines: list[str], n: int = 1) -> list[str]:
    pad = "    " * n
    return [pad + line for line in lines]


class CodeGen:
    def __init__(
        self, checked: Checked, *, consumable_capacity: bool, named_resources: bool = False
    ) -> None:
        self.checked = checked
        self.consumable_capacity = consumable_capacity
        self.named_resources = named_resources
        self.namespace: dict[str, Any] = {}
        self._names = itertools.count()
        self._const_ids: dict[tuple[type, object], str] = {}
        self.uses_cost = False

    # -- plumbing ------------------------------------------------------------------------------

    def tmp(self, prefix: str = "t") -> str:
        return f"_{prefix}{next(self._names)}"

    def const(self, value: Any) -> str:
        if type(value) in (str, int, bool) or value is None:
            return repr(value)
        key = (type(value), value if _hashable(value) else id(value))
        name = self._const_ids.get(key)
        if name is None:
            name = self.tmp("k")
            self._const_ids[key] = name
            self.namespace[name] = value
        return name

    def bind(self, value: Any, prefix: str = "f") -> str:
        name = self.tmp(prefix)
        self.namespace[name] = value
        return name

    def type_of(self, node: A.Node) -> T.Type:
        return self.checked.type_of(node)

    def seq(self, codes: list[Code]) -> tuple[list[str], list[str]]:
        """Statements and operand expressions that keep cel-go's left-to-right order."""
        stmts: list[str] = []
        exprs: list[str] = []
        for i, code in enumerate(codes):
            stmts += code.stmts
            if any(c.stmts for c in codes[i + 1 :]) and not _trivial(code.expr):
                name = self.tmp()
                stmts.append(f"{name} = {code.expr}")
                exprs.append(name)
            else:
                exprs.append(code.expr)
        return stmts, exprs

    # -- entry ---------------------------------------------------------------------------------

    def function(self, root: A.Node, *, any_result: bool = False) -> Generated:
        """`_selector(_d)`; it returns a bool unless `any_result` (a derived attribute)."""
        code = self.emit(root, {})
        body = list(code.stmts)
        if any_result or self.type_of(root) == T.BOOL:
            body.append(f"return {code.expr}")
        else:
            body += [f"_r = {code.expr}", "if type(_r) is not bool:", "    _result_not_bool(_r)"]
            body.append("return _r")
        if self.uses_cost:
            body.insert(0, "_c = 0")
        source = "def _selector(_d):\n" + "\n".join(_indent(body)) + "\n"
        return Generated(source, self.namespace)

    # -- nodes ---------------------------------------------------------------------------------

    def emit(self, node: A.Node, scope: dict[str, str]) -> Code:
        if isinstance(node, A.Const):
            value = node.value
            if node.kind == "uint":
                assert isinstance(value, int)
                return Code([], self.const(UInt(value)), False)
            return Code([], self.const(value), False)
        if isinstance(node, A.Ident):
            if node.name in scope:
                return Code([], scope[node.name], False)
            name = node.name.removeprefix(".")
            if name == "device":
                return Code([], "_d", False)
            return Code([], self.const(TYPE_IDENTS.get(name, CelType(name))), False)
        if isinstance(node, A.Select):
            return self._select(node, scope)
        if isinstance(node, A.Index):
            return self._index(node, scope)
        if isinstance(node, A.Call):
            return self._call(node, scope)
        if isinstance(node, A.Logic):
            return self._logic(node, scope)
        if isinstance(node, A.Cond):
            return self._cond(node, scope)
        if isinstance(node, A.ListLit):
            stmts, exprs = self.seq([self.emit(i, scope) for i in node.items])
            inner = ", ".join(exprs) + ("," if len(exprs) == 1 else "")
            return Code(stmts, f"({inner})")
        if isinstance(node, A.MapLit):
            return self._map(node, scope)
        if isinstance(node, A.Bind):
            init = self.emit(node.init, scope)
            var = self.tmp("v")
            body = self.emit(node.body, {**scope, node.var: var})
            return Code([*init.stmts, f"{var} = {init.expr}", *body.stmts], body.expr)
        if isinstance(node, A.Loop):
            return self._loop(node, scope)
        raise AssertionError(f"unchecked node {node!r}")

    def _select(self, node: A.Select, scope: dict[str, str]) -> Code:
        if self.named_resources and named_attributes(node, scope) is not None:
            return Code([], f"_d.{node.field}", False)  # a NamedView's typed map
        operand = self.emit(node.operand, scope)
        target = self.type_of(node.operand)
        f = repr(node.field)
        if node.test_only:
            if target == T.DEVICE:
                return Code(operand.stmts, f"({operand.expr} is not None)", operand.fallible)
            return Code(operand.stmts, f"_has({operand.expr}, {f})")
        if node.optional:
            return Code(operand.stmts, f"_opt_select({operand.expr}, {f})")
        if target == T.DEVICE:
            attr = _DEVICE_FIELDS[node.field]
            if attr == "allow_multiple_allocations" and not self.consumable_capacity:
                return Code(operand.stmts, "False", operand.fallible)
            return Code(operand.stmts, f"{operand.expr}.{attr}", operand.fallible)
        if isinstance(target, tuple) and target[0] == "optional_type":
            return Code(operand.stmts, f"_chain_select({operand.expr}, {f})")
        if isinstance(target, tuple) and target[0] == "map":
            return Code(operand.stmts, self._map_get(node.operand, operand.expr, f))
        return Code(operand.stmts, f"_select({operand.expr}, {f})")

    def _map_get(self, operand_node: A.Node, operand: str, key: str) -> str:
        """A string-keyed lookup in a statically typed map, inlined for speed."""
        if _is_domain_map(operand_node, self.checked):
            return f"{operand}.get({key}, _EMPTY)"
        if _trivial(operand):
            return f"({operand}[{key}] if {key} in {operand} else _nokey({key}))"
        t = self.tmp()
        return f"({t}[{key}] if {key} in ({t} := {operand}) else _nokey({key}))"

    def _index(self, node: A.Index, scope: dict[str, str]) -> Code:
        stmts, (operand, key) = self.seq(
            [self.emit(node.operand, scope), self.emit(node.index, scope)]
        )
        target = self.type_of(node.operand)
        if node.optional:
            return Code(stmts, f"_opt_index({operand}, {key})")
        if isinstance(target, tuple) and target[0] == "optional_type":
            return Code(stmts, f"_opt_index({operand}, {key})")
        if (
            isinstance(target, tuple)
            and target[0] == "map"
            and target[1] == T.STRING
            and self.type_of(node.index) == T.STRING
        ):
            if _trivial(key):
                return Code(stmts, self._map_get(node.operand, operand, key))
            return Code(stmts, f"_mget({operand}, {key})")
        return Code(stmts, f"_index({operand}, {key})")

    def _call(self, node: A.Call, scope: dict[str, str]) -> Code:
        folded = self._fold(node)
        if folded is not None:
            return folded
        if node.name == "@in" and isinstance(node.args[1], A.ListLit) and not node.args[1].items:
            return Code([], "False", False)  # cel-go folds `x in []` without evaluating x
        if node.name in ("orValue", "or") and node.target is not None and len(node.args) == 1:
            return self._or_value(node, scope)
        args = list(node.args)
        if node.target is not None:
            args.insert(0, node.target)
        codes = [self.emit(a, scope) for a in args]
        stmts, exprs = self.seq(codes)
        types = [self.type_of(a) for a in args]
        infallible = not any(c.fallible for c in codes)
        name = node.name
        if name in ("_==_", "_!=_"):
            op, helper = ("==", "_eq") if name == "_==_" else ("!=", "_ne")
            if types[0] == types[1] and types[0] in _SAME_TYPE_EQ:
                return Code(stmts, f"({exprs[0]} {op} {exprs[1]})", not infallible)
            return Code(stmts, self._dyn_eq(op, helper, types, exprs))
        if name in _CMP:
            op, helper = _CMP[name]
            if types[0] == types[1] and types[0] in _SAME_TYPE_ORDER:
                return Code(stmts, f"({exprs[0]} {op} {exprs[1]})", not infallible)
            if T.is_dyn(types[0]) != T.is_dyn(types[1]):
                # one operand typed: cel-go dispatches among named overloads, and says so
                helper = f"{helper}_named"
            return Code(stmts, self._dyn_eq(op, helper, types, exprs))
        if name in _ARITH:
            op, helper = _ARITH[name]
            if types == [T.INT, T.INT]:
                return Code(stmts, f"_chk({exprs[0]} {op} {exprs[1]})")
            if types == [T.STRING, T.STRING] and name == "_+_":
                return Code(stmts, f"({exprs[0]} + {exprs[1]})", not infallible)
            return Code(stmts, f"{helper}({exprs[0]}, {exprs[1]})")
        if name == "!_":
            if types[0] == T.BOOL:
                return Code(stmts, f"(not {exprs[0]})", not infallible)
            return Code(stmts, f"_not({exprs[0]})")
        if name == "-_":
            return Code(stmts, f"_neg({exprs[0]})")
        if name == "@in":
            if _is_constant_list(node.args[1]):
                return Code(stmts, f"_in_constants({exprs[0]}, {exprs[1]})")
            return Code(stmts, f"_contains({exprs[1]}, {exprs[0]})")
        overloads = self.checked.overloads[id(node)]
        if name == "lists.range":
            # cel-go charges the list it builds, one unit per element
            self.uses_cost = True
            fn, out = self.bind(overloads[0].impl), self.tmp()
            stmts += [f"{out} = {fn}({exprs[0]})", f"_c += len({out})"]
            stmts += ["if _c > _COST_LIMIT:", "    _cost_exceeded()"]
            return Code(stmts, out)
        if len(overloads) == 1 and not any(T.is_dyn(t) for t in types):
            fn = self.bind(overloads[0].impl)
            return Code(stmts, f"{fn}({', '.join(exprs)})")
        dispatch = self.bind(make_dispatcher(name, overloads))
        fast = self._receiver_fast_path(overloads, types, exprs, dispatch)
        return Code(stmts, fast or f"{dispatch}({', '.join(exprs)})")

    def _receiver_fast_path(
        self, overloads: list[Overload], types: list[T.Type], exprs: list[str], dispatch: str
    ) -> str | None:
        """`<dyn>.f(<typed args>)`: test the receiver's class inline, dispatch only otherwise."""
        if not T.is_dyn(types[0]) or any(T.is_dyn(t) for t in types[1:]):
            return None
        if not all(_trivial(e) for e in exprs[1:]):
            return None
        fitting = [o for o in overloads if list(o.params[1:]) == types[1:]]
        if len(fitting) != 1 or T.is_dyn(fitting[0].params[0]):
            return None
        classes = python_types(T.head(fitting[0].params[0]))
        if len(classes) != 1:
            return None
        cls = self.bind(next(iter(classes)), "c")
        impl = self.bind(fitting[0].impl)
        t = self.tmp()
        rest = "".join(f", {e}" for e in exprs[1:])
        return f"({impl}({t}{rest}) if type({t} := {exprs[0]}) is {cls} else {dispatch}({t}{rest}))"

    def _dyn_eq(self, op: str, helper: str, types: list[T.Type], exprs: list[str]) -> str:
        """`dyn <op> literal`: a type test and the Python operator, else the full operator."""
        for dyn_side, lit_side in ((0, 1), (1, 0)):
            py = _PY_TYPE.get(types[lit_side])
            lit = exprs[lit_side]
            if T.is_dyn(types[dyn_side]) and py and _trivial(lit):
                t = self.tmp()
                args = f"{t}, {lit}" if dyn_side == 0 else f"{lit}, {t}"
                plain = f"{t} {op} {lit}" if dyn_side == 0 else f"{lit} {op} {t}"
                return f"({plain} if type({t} := {exprs[dyn_side]}) is {py} else {helper}({args}))"
        return f"{helper}({exprs[0]}, {exprs[1]})"

    def _or_value(self, node: A.Call, scope: dict[str, str]) -> Code:
        """`opt.orValue(x)` and `opt.or(o)` evaluate their argument only when opt is empty."""
        assert node.target is not None
        target = self.emit(node.target, scope)
        alternative = self.emit(node.args[0], scope)
        ov, out = self.tmp(), self.tmp()
        present = f"{ov}.value" if node.name == "orValue" else ov
        fallback = alternative.expr if node.name == "orValue" else f"_as_opt({alternative.expr})"
        lines = [*target.stmts, f"{ov} = _as_opt({target.expr})", f"if {ov}.has_value():"]
        lines += [f"    {out} = {present}", "else:"]
        lines += _indent([*alternative.stmts, f"{out} = {fallback}"])
        return Code(lines, out)

    def _fold(self, node: A.Call) -> Code | None:
        if node.name not in FOLDABLE or node.target is not None:
            return None
        if not all(isinstance(a, A.Const) for a in node.args):
            return None
        overloads = self.checked.overloads.get(id(node), [])
        if len(overloads) != 1:
            return None
        from dra_operator.errors import CELRuntimeError

        values = [a.value for a in node.args if isinstance(a, A.Const)]
        try:
            value = overloads[0].impl(*values)
        except CELRuntimeError:
            return None
        return Code([], self.const(value), False)

    def _logic(self, node: A.Logic, scope: dict[str, str]) -> Code:
        left = self.emit(node.left, scope)
        right = self.emit(node.right, scope)
        is_and = node.op == "and"
        both_bool = self.type_of(node.left) == T.BOOL and self.type_of(node.right) == T.BOOL
        if both_bool and not left.fallible and not right.fallible and not right.stmts:
            return Code(left.stmts, f"({left.expr} {node.op} {right.expr})", False)
        decide, other = ("False", "True") if is_and else ("True", "False")
        lv, rv, out = self.tmp(), self.tmp(), self.tmp()
        lines = self._guarded(left, lv)
        lines += [f"if {lv} is {decide}:", f"    {out} = {decide}", "else:"]
        inner = self._guarded(right, rv)
        inner += [
            f"if {rv} is {decide}:",
            f"    {out} = {decide}",
            f"elif {lv} is {other} and {rv} is {other}:",
            f"    {out} = {other}",
            "else:",
            f"    _logic_fail({lv}, {rv})",
        ]
        lines += _indent(inner)
        return Code(lines, out)

    @staticmethod
    def _guarded(code: Code, var: str) -> list[str]:
        if not code.fallible and not code.stmts:
            return [f"{var} = {code.expr}"]
        body = [*code.stmts, f"{var} = {code.expr}"]
        return ["try:", *_indent(body), "except _Err as _e:", f"    {var} = _keep(_e)"]

    def _cond(self, node: A.Cond, scope: dict[str, str]) -> Code:
        cond = self.emit(node.cond, scope)
        then = self.emit(node.then, scope)
        other = self.emit(node.other, scope)
        simple = not (then.stmts or other.stmts)
        if simple and self.type_of(node.cond) == T.BOOL:
            fallible = cond.fallible or then.fallible or other.fallible
            expr = f"({then.expr} if {cond.expr} else {other.expr})"
            return Code(cond.stmts, expr, fallible)
        cv, out = self.tmp(), self.tmp()
        lines = [*cond.stmts, f"{cv} = {cond.expr}", f"if {cv} is True:"]
        lines += _indent([*then.stmts, f"{out} = {then.expr}"])
        lines += [f"elif {cv} is False:"]
        lines += _indent([*other.stmts, f"{out} = {other.expr}"])
        lines += ["else:", f"    _cond_fail({cv})"]
        return Code(lines, out)

    def _map(self, node: A.MapLit, scope: dict[str, str]) -> Code:
        codes: list[Code] = []
        for key, value, _ in node.entries:
            codes += [self.emit(key, scope), self.emit(value, scope)]
        stmts, exprs = self.seq(codes)
        out = self.tmp()
        stmts.append(f"{out} = {{}}")
        for i in range(0, len(exprs), 2):
            stmts.append(f"_put({out}, {exprs[i]}, {exprs[i + 1]})")
        return Code(stmts, out)

    # -- comprehensions ------------------------------------------------------------------------

    def _loop(self, node: A.Loop, scope: dict[str, str]) -> Code:
        if node.kind in ("optMap", "optFlatMap"):
            return self._opt_loop(node, scope)
        self.uses_cost = True
        rng = self.emit(node.range, scope)
        v1 = self.tmp("v")
        v2 = self.tmp("v") if node.var2 else None
        inner = {**scope, node.var: v1}
        if node.var2 and v2:
            inner[node.var2] = v2
        body = self.emit(node.body, inner)
        pred = self.emit(node.pred, inner) if node.pred is not None else None
        cost = 1 + static_cost(node.body) + (static_cost(node.pred) if node.pred else 0)
        rv, acc, p = self.tmp(), self.tmp(), self.tmp()
        head = f"for {v1}, {v2} in _pairs({rv}):" if v2 else f"for {v1} in _iter({rv}):"
        lines = [*rng.stmts, f"{rv} = {rng.expr}"]
        step = [f"_c += {cost}", "if _c > _COST_LIMIT:", "    _cost_exceeded()"]
        kind = node.kind
        if kind in ("all", "exists"):
            start, decide = ("True", "False") if kind == "all" else ("False", "True")
            lines.append(f"{acc} = {start}")
            step += self._guarded(body, p)
            step += [
                f"if {p} is {decide}:",
                f"    {acc} = {decide}",
                "    break",
                f"if {p} is not {start} and {acc} is {start}:",
                f"    {acc} = _not_bool({p})",
            ]
            tail = [f"if {acc} is not True and {acc} is not False:", f"    raise {acc}"]
        elif kind == "exists_one":
            lines.append(f"{acc} = 0")
            step += [*body.stmts, f"{p} = {body.expr}", f"if {p} is True:", f"    {acc} += 1"]
            step += [f"elif {p} is not False:", "    raise _nso()"]
            tail = [f"{acc} = {acc} == 1"]
        else:
            return self._collect(node, lines, head, step, body, pred, acc, v1, v2)
        lines += [head, *_indent(step), *tail]
        return Code(lines, acc)

    def _collect(
        self,
        node: A.Loop,
        lines: list[str],
        head: str,
        step: list[str],
        body: Code,
        pred: Code | None,
        acc: str,
        v1: str,
        v2: str | None,
    ) -> Code:
        kind = node.kind
        is_map = kind in ("transformMap", "transformMapEntry")
        lines.append(f"{acc} = {{}}" if is_map else f"{acc} = []")
        if kind == "filter":
            pred, body = body, Code([], v1, False)
        add = [*body.stmts]
        if kind == "transformMap":
            add.append(f"{acc}[{v1}] = {body.expr}")
        elif kind == "transformMapEntry":
            add.append(f"_put_entry({acc}, {body.expr})")
        else:
            add.append(f"{acc}.append({body.expr})")
        if pred is not None:
            pv = self.tmp()
            step += [*pred.stmts, f"{pv} = {pred.expr}", f"if {pv} is True:"]
            step += _indent(add)
            step += [f"elif {pv} is not False:", "    raise _nso()"]
        else:
            step += add
        lines += [head, *_indent(step)]
        if not is_map:
            lines.append(f"{acc} = tuple({acc})")
        return Code(lines, acc)

    def _opt_loop(self, node: A.Loop, scope: dict[str, str]) -> Code:
        rng = self.emit(node.range, scope)
        ov, out, var = self.tmp(), self.tmp(), self.tmp("v")
        body = self.emit(node.body, {**scope, node.var: var})
        lines = [*rng.stmts, f"{ov} = _as_opt({rng.expr})", f"if {ov}.has_value():"]
        result = body.expr if node.kind == "optFlatMap" else f"_Optional({body.expr})"
        if node.kind == "optFlatMap":
            result = f"_opt_body({body.expr})"
        lines += _indent([f"{var} = {ov}.value", *body.stmts, f"{out} = {result}"])
        lines += ["else:", f"    {out} = _NONE"]
        return Code(lines, out)


def static_cost(node: A.Node | None) -> int:
    """cel-go's runtime cost of one evaluation of `node`, not counting nested comprehensions."""
    if node is None or isinstance(node, A.Const):
        return 0
    if isinstance(node, A.Loop):
        return static_cost(node.range)
    own = {A.ListLit: 10, A.MapLit: 30}.get(type(node), 1)
    if isinstance(node, A.Logic | A.Cond | A.Bind):
        own = 0
    children: list[A.Node] = []
    for value in vars(node).values() if hasattr(node, "__dict__") else _slots(node):
        if isinstance(value, A.Node):
            children.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, A.Node):
                    children.append(item)
                elif isinstance(item, tuple):
                    children += [x for x in item if isinstance(x, A.Node)]
    return own + sum(static_cost(c) for c in children)


def _slots(node: A.Node) -> list[Any]:
    names: list[str] = []
    for cls in type(node).__mro__:
        names += getattr(cls, "__slots__", ())
    return [getattr(node, n) for n in names if n != "pos"]


_PY_TYPE: dict[T.Type, str] = {T.STRING: "str", T.INT: "int", T.BOOL: "bool"}


def _is_constant_list(node: A.Node) -> bool:
    """A list literal of scalar literals, which cel-go's optimizer turns into a hash set."""
    return isinstance(node, A.ListLit) and all(
        isinstance(item, A.Const) and item.kind in ("int", "uint", "double", "string", "bool")
        for item in node.items
    )


def _is_domain_map(node: A.Node, checked: Checked) -> bool:
    """`device.attributes` or `device.capacity`: a missing domain reads as an empty map."""
    return (
        isinstance(node, A.Select)
        and not node.optional
        and not node.test_only
        and node.field in ("attributes", "capacity")
        and checked.type_of(node.operand) == T.DEVICE
    )


def _trivial(expr: str) -> bool:
    return expr.isidentifier() or expr.lstrip("-").isdigit() or expr[:1] in ("'", '"')


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
