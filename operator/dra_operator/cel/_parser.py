"""Parse CEL with cel-python's lark grammar, extended with optional syntax, into `_ast` nodes.

cel-python's grammar lacks `.?` and `[?`; they are added with lark's `%extend` rather than by
editing a copy of the grammar. Macros (`has`, `all`, `exists`, `exists_one`, `map`, `filter`,
the two-variable forms, `cel.bind`, `optMap`, `optFlatMap`) are expanded here, as cel-go's
parser does, so the checker and code generator see only plain nodes.
"""

from __future__ import annotations

import functools
import importlib.resources
import re

import lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from dra_operator.cel import _ast as A
from dra_operator.cel._text import CompileIssue, unescape_bytes, unescape_string

_EXTENSION = r"""
%extend member : member_dot_opt | member_index_opt
member_dot_opt : member "." "?" IDENT
member_index_opt : member "[" "?" expr "]"
"""

_RESERVED = frozenset(
    {
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
        "in",
    }
)
# Namespaces whose functions are called as `ns.f(...)`.
_NAMESPACES = frozenset({"sets", "lists", "strings", "optional", "math", "base64"})
_INT_MAX = 2**63 - 1
_UINT_MAX = 2**64 - 1


def _literal_keywords(token: lark.Token) -> lark.Token:
    if token.value in ("true", "false"):
        return lark.Token.new_borrow_pos("BOOL_LIT", token.value, token)
    if token.value == "null":
        return lark.Token.new_borrow_pos("NULL_LIT", token.value, token)
    return token


@functools.cache
def _parser() -> lark.Lark:
    grammar = importlib.resources.files("celpy").joinpath("cel.lark").read_text(encoding="utf-8")
    return lark.Lark(
        grammar + _EXTENSION,
        parser="lalr",
        start="expr",
        g_regex_flags=re.M,
        lexer_callbacks={"IDENT": _literal_keywords},
        propagate_positions=True,
        maybe_placeholders=False,
        priority="invert",
    )


def warm_up() -> None:
    """Build the parser now (about a second of CPU): at start-up, not in the first decision."""
    _parser()


def parse(text: str) -> A.Node:
    """Parse and macro-expand `text`; raises CompileIssue with cel-go-like positions."""
    try:
        tree = _parser().parse(text)
    except UnexpectedEOF as exc:
        raise CompileIssue(len(text), "Syntax error: mismatched input '<EOF>'") from exc
    except UnexpectedToken as exc:
        tok = exc.token
        if tok.type == "QMARK" and text[: tok.start_pos or 0].rstrip()[-1:] in ("[", "{", ","):
            raise CompileIssue(
                tok.start_pos or 0,
                "unsupported feature: optional entries in list and map literals ([?x], {?k: v})",
            ) from exc
        shown = "<EOF>" if tok.type == "$END" else tok.value
        pos = len(text) if tok.type == "$END" else (tok.start_pos or 0)
        raise CompileIssue(pos, f"Syntax error: mismatched input '{shown}'") from exc
    except UnexpectedCharacters as exc:
        raise CompileIssue(exc.pos_in_stream or 0, "Syntax error: token recognition error") from exc
    except UnexpectedInput as exc:
        raise CompileIssue(0, "Syntax error: unexpected input") from exc
    return _Builder(text).build(tree)


class _Builder:
    def __init__(self, text: str) -> None:
        self.text = text

    # -- positions -----------------------------------------------------------------------------

    def _after(self, pos: int, char: str) -> int:
        """Offset of the first `char` at or after `pos` (the operator after an operand)."""
        found = self.text.find(char, pos)
        return found if found >= 0 else pos

    def _before(self, pos: int, char: str) -> int:
        found = self.text.rfind(char, 0, pos)
        return found if found >= 0 else pos

    @staticmethod
    def _start(tree: lark.Tree[lark.Token] | lark.Token) -> int:
        if isinstance(tree, lark.Token):
            return tree.start_pos or 0
        return tree.meta.start_pos if not tree.meta.empty else 0

    @staticmethod
    def _end(tree: lark.Tree[lark.Token] | lark.Token) -> int:
        if isinstance(tree, lark.Token):
            return tree.end_pos or 0
        return tree.meta.end_pos if not tree.meta.empty else 0

    # -- rules ---------------------------------------------------------------------------------

    def build(self, tree: lark.Tree[lark.Token] | lark.Token) -> A.Node:
        if isinstance(tree, lark.Token):
            raise CompileIssue(tree.start_pos or 0, f"Syntax error: unexpected '{tree.value}'")
        kids = tree.children
        rule = tree.data
        if rule in ("expr",):
            if len(kids) == 1:
                return self.build(kids[0])
            pos = self._after(self._end(kids[0]), "?")
            return A.Cond(pos, self.build(kids[0]), self.build(kids[1]), self.build(kids[2]))
        if rule in ("conditionalor", "conditionaland"):
            if len(kids) == 1:
                return self.build(kids[0])
            op = "or" if rule == "conditionalor" else "and"
            pos = self._after(self._end(kids[0]), "|" if op == "or" else "&")
            return A.Logic(pos, op, self.build(kids[0]), self.build(kids[1]))
        if rule in ("relation", "addition", "multiplication"):
            if len(kids) == 1:
                return self.build(kids[0])
            head = kids[0]
            assert isinstance(head, lark.Tree)
            left_tree = head.children[0]
            name, op_char = _BINARY[str(head.data)]
            pos = self._after(self._end(left_tree), op_char)
            return A.Call(pos, name, [self.build(left_tree), self.build(kids[1])])
        if rule == "unary":
            if len(kids) == 1:
                return self.build(kids[0])
            op_tree = kids[0]
            assert isinstance(op_tree, lark.Tree)
            operand = self.build(kids[1])
            pos = self._start(tree)
            if op_tree.data == "unary_neg":
                if isinstance(operand, A.Const) and operand.kind in ("int", "double"):
                    return self._negated_literal(pos, operand)
                return A.Call(pos, "-_", [operand])
            return A.Call(pos, "!_", [operand])
        if rule in ("member", "primary"):
            return self.build(kids[0])
        if rule == "member_dot":
            return self._select(kids, optional=False)
        if rule == "member_dot_opt":
            return self._select(kids, optional=True)
        if rule == "member_dot_arg":
            return self._member_call(kids)
        if rule in ("member_index", "member_index_opt"):
            pos = self._after(self._end(kids[0]), "[")
            return A.Index(
                pos, self.build(kids[0]), self.build(kids[1]), rule == "member_index_opt"
            )
        if rule == "member_object":
            return self._struct(kids)
        if rule == "ident":
            return self._ident(kids[0])
        if rule == "dot_ident":
            token = kids[0]
            assert isinstance(token, lark.Token)
            return A.Ident(self._before(token.start_pos or 0, "."), "." + str(token))
        if rule in ("ident_arg", "dot_ident_arg"):
            token = kids[0]
            assert isinstance(token, lark.Token)
            name = ("." if rule == "dot_ident_arg" else "") + str(token)
            args = self._exprlist(kids[1:])
            pos = self._after(token.end_pos or 0, "(")
            return self._global_call(pos, name, args)
        if rule == "paren_expr":
            return self.build(kids[0])
        if rule == "list_lit":
            return A.ListLit(self._start(tree), self._exprlist(kids))
        if rule == "map_lit":
            entries: list[tuple[A.Node, A.Node, bool]] = []
            if kids:
                inits = kids[0]
                assert isinstance(inits, lark.Tree)
                parts = [self.build(k) for k in inits.children]
                entries = [(parts[i], parts[i + 1], False) for i in range(0, len(parts), 2)]
            return A.MapLit(self._start(tree), entries)
        if rule == "literal":
            token = kids[0]
            assert isinstance(token, lark.Token)
            return self._literal(token)
        raise CompileIssue(self._start(tree), f"Syntax error: unsupported syntax {rule}")

    def _exprlist(self, kids: list[lark.Tree[lark.Token] | lark.Token]) -> list[A.Node]:
        if not kids:
            return []
        lst = kids[0]
        assert isinstance(lst, lark.Tree)
        return [self.build(k) for k in lst.children]

    def _ident(self, token: lark.Tree[lark.Token] | lark.Token) -> A.Node:
        assert isinstance(token, lark.Token)
        if token.value in _RESERVED:
            raise CompileIssue(token.start_pos or 0, f"reserved identifier: {token.value}")
        return A.Ident(token.start_pos or 0, str(token))

    def _select(self, kids: list[lark.Tree[lark.Token] | lark.Token], *, optional: bool) -> A.Node:
        token = kids[1]
        assert isinstance(token, lark.Token)
        pos = self._before(token.start_pos or 0, "?" if optional else ".")
        if optional:
            pos = self._before(pos, ".")
        return A.Select(pos, self.build(kids[0]), str(token), optional=optional)

    def _struct(self, kids: list[lark.Tree[lark.Token] | lark.Token]) -> A.Node:
        target = self.build(kids[0])
        pos = self._after(self._end(kids[0]), "{")
        fields: list[tuple[str, A.Node]] = []
        if len(kids) > 1:
            inits = kids[1]
            assert isinstance(inits, lark.Tree)
            items = inits.children
            fields = [(str(items[i]), self.build(items[i + 1])) for i in range(0, len(items), 2)]
        return A.StructLit(pos, _dotted(target) or "?", fields)

    def _member_call(self, kids: list[lark.Tree[lark.Token] | lark.Token]) -> A.Node:
        token = kids[1]
        assert isinstance(token, lark.Token)
        name = str(token)
        pos = self._after(token.end_pos or 0, "(")
        args = self._exprlist(kids[2:])
        target_tree = kids[0]
        namespace = _dotted_tree(target_tree)
        if (
            namespace in _NAMESPACES
            or namespace == "cel"
            or (namespace, name) == ("ip", "isCanonical")
        ):
            return self._global_call(pos, f"{namespace}.{name}", args)
        target = self.build(target_tree)
        return _expand_member_macro(pos, name, target, args)

    def _global_call(self, pos: int, name: str, args: list[A.Node]) -> A.Node:
        if name == "has" and len(args) == 1:
            arg = args[0]
            if not isinstance(arg, A.Select) or arg.optional:
                raise CompileIssue(pos, "invalid argument to has() macro")
            return A.Select(arg.pos, arg.operand, arg.field, test_only=True)
        if name == "cel.bind" and len(args) == 3:
            return A.Bind(pos, _var_name(args[0], "cel.bind"), args[1], args[2])
        return A.Call(pos, name, args)

    def _literal(self, token: lark.Token) -> A.Node:
        kind = token.type
        text = str(token)
        pos = token.start_pos or 0
        if kind == "INT_LIT":
            value = _parse_int(text)
            if not -(2**63) <= value <= _INT_MAX:
                raise CompileIssue(pos, f"invalid int literal: {text}")
            return A.Const(pos, "int", value)
        if kind == "UINT_LIT":
            digits = text[:-1]
            if digits.startswith("-"):
                raise CompileIssue(pos, f"invalid uint literal: {text}")
            value = _parse_int(digits)
            if value > _UINT_MAX:
                raise CompileIssue(pos, f"invalid uint literal: {text}")
            return A.Const(pos, "uint", value)
        if kind == "FLOAT_LIT":
            return A.Const(pos, "double", float(text))
        if kind in ("STRING_LIT", "MLSTRING_LIT"):
            return A.Const(pos, "string", unescape_string(text, pos))
        if kind == "BYTES_LIT":
            return A.Const(pos, "bytes", unescape_bytes(text[1:], pos))
        if kind == "BOOL_LIT":
            return A.Const(pos, "bool", text == "true")
        return A.Const(pos, "null", None)

    @staticmethod
    def _negated_literal(pos: int, operand: A.Const) -> A.Node:
        assert isinstance(operand.value, int | float)
        value = -operand.value
        if operand.kind == "int" and not -(2**63) <= value <= _INT_MAX:
            raise CompileIssue(pos, f"invalid int literal: -{operand.value}")
        return A.Const(pos, operand.kind, value)


_BINARY: dict[str, tuple[str, str]] = {
    "relation_lt": ("_<_", "<"),
    "relation_le": ("_<=_", "<"),
    "relation_gt": ("_>_", ">"),
    "relation_ge": ("_>=_", ">"),
    "relation_eq": ("_==_", "="),
    "relation_ne": ("_!=_", "!"),
    "relation_in": ("@in", "i"),
    "addition_add": ("_+_", "+"),
    "addition_sub": ("_-_", "-"),
    "multiplication_mul": ("_*_", "*"),
    "multiplication_div": ("_/_", "/"),
    "multiplication_mod": ("_%_", "%"),
}


def _parse_int(text: str) -> int:
    negative = text.startswith("-")
    body = text[1:] if negative else text
    value = int(body, 16) if body[:2].lower() == "0x" else int(body, 10)
    return -value if negative else value


def _dotted(node: A.Node) -> str | None:
    if isinstance(node, A.Ident):
        return node.name
    if isinstance(node, A.Select) and not node.optional and not node.test_only:
        head = _dotted(node.operand)
        return f"{head}.{node.field}" if head else None
    return None


def _dotted_tree(tree: lark.Tree[lark.Token] | lark.Token) -> str | None:
    """The identifier a call target spells, when it is a bare identifier (a namespace)."""
    while isinstance(tree, lark.Tree) and tree.data in ("member", "primary") and tree.children:
        tree = tree.children[0]
    if isinstance(tree, lark.Tree) and tree.data == "ident":
        token = tree.children[0]
        return str(token)
    return None


def _var_name(node: A.Node, macro: str) -> str:
    if not isinstance(node, A.Ident) or node.name.startswith("."):
        raise CompileIssue(node.pos, f"{macro}() variable name must be a simple identifier")
    return node.name


_ONE_VAR = {"all": 2, "exists": 2, "exists_one": 2, "existsOne": 2, "filter": 2}
_TWO_VAR = {"all", "exists", "exists_one", "existsOne"}
_TRANSFORMS = {"transformList", "transformMap", "transformMapEntry"}


def _expand_member_macro(pos: int, name: str, target: A.Node, args: list[A.Node]) -> A.Node:
    """cel-go's receiver-style macros; anything else is an ordinary member call."""
    n = len(args)
    if name in _ONE_VAR and n == 2:
        kind = "exists_one" if name == "existsOne" else name
        return A.Loop(pos, kind, _var_name(args[0], name), None, target, args[1])
    if name in _TWO_VAR and n == 3:
        kind = "exists_one" if name == "existsOne" else name
        v1, v2 = _var_name(args[0], name), _var_name(args[1], name)
        _check_distinct(pos, name, v1, v2)
        return A.Loop(pos, kind, v1, v2, target, args[2])
    if name == "map" and n in (2, 3):
        var = _var_name(args[0], name)
        if n == 2:
            return A.Loop(pos, "map", var, None, target, args[1])
        return A.Loop(pos, "map", var, None, target, args[2], pred=args[1])
    if name in _TRANSFORMS and n in (3, 4):
        v1, v2 = _var_name(args[0], name), _var_name(args[1], name)
        _check_distinct(pos, name, v1, v2)
        body, pred = (args[2], None) if n == 3 else (args[3], args[2])
        return A.Loop(pos, name, v1, v2, target, body, pred=pred)
    if name in ("optMap", "optFlatMap") and n == 2:
        return A.Loop(pos, name, _var_name(args[0], name), None, target, args[1])
    return A.Call(pos, name, args, target)


def _check_distinct(pos: int, macro: str, v1: str, v2: str) -> None:
    if v1 == v2:
        raise CompileIssue(pos, f"{macro}() variable names must be different")
