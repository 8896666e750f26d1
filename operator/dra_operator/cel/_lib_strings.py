"""cel-go's strings extension at version 2 (charAt … join, strings.quote) and `format`.

Indexes count code points, as cel-go's do (it converts to runes); whitespace for `trim` is Go's
`unicode.IsSpace`, which is narrower than Python's `str.isspace`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from dra_operator.cel import _runtime as R
from dra_operator.cel import _types as T
from dra_operator.cel._functions import declare
from dra_operator.cel._lib_core import to_string
from dra_operator.cel._values import CelType, Optional, UInt
from dra_operator.errors import CELRuntimeError

_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
_GO_SPACE += "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _out_of_range(index: int) -> CELRuntimeError:
    return CELRuntimeError(f"index out of range: {index}")


def _char_at(text: str, index: int) -> str:
    if index < 0 or index > len(text):
        raise _out_of_range(index)
    return text[index] if index < len(text) else ""


def _index_of(text: str, sub: str, offset: int = 0) -> int:
    if sub == "":
        return offset
    if offset < 0:
        raise _out_of_range(offset)
    if offset >= len(text):
        return -1
    return text.find(sub, offset)


def _last_index_of(text: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        if sub == "":
            return len(text)
        if len(text.encode()) < len(sub.encode()):
            return -1
        offset = len(text) - 1
    if sub == "":
        return offset
    if offset < 0:
        raise _out_of_range(offset)
    if offset >= len(text):
        return -1
    return text.rfind(sub, 0, offset + len(sub))


def _ascii_case(text: str, upper: bool) -> str:
    table = str.maketrans(
        *(
            ("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            if upper
            else ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
        )
    )
    return text.translate(table)


def _replace(text: str, old: str, new: str, n: int = -1) -> str:
    return text.replace(old, new, n if n >= 0 else -1)


def _split(text: str, sep: str, n: int = -1) -> tuple[str, ...]:
    if n == 0:
        return ()
    if sep == "":
        chars = list(text)
        if 0 < n < len(chars):
            chars = [*chars[: n - 1], "".join(chars[n - 1 :])]
        return tuple(chars)
    return tuple(text.split(sep, n - 1 if n > 0 else -1))


def _substring(text: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(text):
            raise _out_of_range(start)
        return text[start:]
    if start > end:
        raise CELRuntimeError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(text):
        raise _out_of_range(start)
    if end < 0 or end > len(text):
        raise _out_of_range(end)
    return text[start:end]


def _join(items: Any, sep: str = "") -> str:
    for item in items:
        if type(item) is not str:
            raise CELRuntimeError(f"join: invalid input: {item}")
    return sep.join(items)


def quote(text: str) -> str:
    """`strings.quote`: a double-quoted CEL string literal with escapes."""
    out = ['"']
    for ch in text:
        out.append(_QUOTE_ESCAPES.get(ch, ch))
    out.append('"')
    return "".join(out)


_QUOTE_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


# -- format --------------------------------------------------------------------------------------

_CLAUSE = re.compile(r"%(?:\.(\d+))?([a-zA-Z%])?")


def _format_value(value: Any) -> str:
    """`%s` of one value, as cel-go renders lists, maps and scalars."""
    t = type(value)
    if t is str:
        return str(value)
    if t in (tuple, list):
        return "[" + ", ".join(_format_nested(v) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted(((_format_nested(k), _format_nested(v)) for k, v in value.items()))
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if value is None:
        return "null"
    if t is CelType:
        return str(value)
    if t is bytes:
        return bytes(value).decode("utf-8", errors="replace")
    if t is Optional:
        raise CELRuntimeError("no formatting function for optional_type")
    try:
        return to_string(value)
    except CELRuntimeError:
        raise CELRuntimeError(f"no formatting function for {R.type_name(value)}") from None


def _format_nested(value: Any) -> str:
    return quote(value) if type(value) is str else _format_value(value)


def _as_number(value: Any, verb: str) -> float:
    t = type(value)
    if t in (int, UInt, float):
        return float(value)
    if t is str and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    raise CELRuntimeError(
        f"error during formatting: only ints, uints, and doubles allowed in {verb}"
    )


def _fixed(value: Any, precision: int) -> str:
    number = _as_number(value, "fixed-point clause")
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return f"{number:.{precision}f}"


def _scientific(value: Any, precision: int) -> str:
    number = _as_number(value, "scientific clause")
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return f"{number:.{precision}e}"


def _integer(value: Any, base: int, upper: bool = False) -> str:
    t = type(value)
    if t is bool and base == 2:
        return "1" if value else "0"
    if t in (str, bytes) and base == 16:
        raw: bytes = value.encode() if t is str else value
        text = raw.hex()
        return text.upper() if upper else text
    if t not in (int, UInt):
        kind = {2: "binary", 8: "octal", 10: "decimal", 16: "hexadecimal"}[base]
        if base == 10 and t is float:
            if math.isnan(value):
                return "NaN"
            if math.isinf(value):
                return "Infinity" if value > 0 else "-Infinity"
        extra = ", byte buffers, and strings" if base == 16 else ""
        raise CELRuntimeError(
            f"error during formatting: only integers{extra} can be formatted as {kind}"
        )
    digits = format(abs(int(value)), {2: "b", 8: "o", 10: "d", 16: "X" if upper else "x"}[base])
    return ("-" if value < 0 else "") + digits


def format_string(template: str, args: Any) -> str:
    out: list[str] = []
    index = 0
    arg = 0
    while index < len(template):
        pct = template.find("%", index)
        if pct < 0:
            out.append(template[index:])
            break
        out.append(template[index:pct])
        match = _CLAUSE.match(template, pct)
        assert match is not None
        precision, verb = match[1], match[2]
        if verb is None:
            raise CELRuntimeError("error during formatting: unexpected end of string")
        index = match.end()
        if verb == "%":
            out.append("%")
            continue
        if arg >= len(args):
            raise CELRuntimeError(f"error during formatting: index {arg} out of range")
        value = args[arg]
        arg += 1
        out.append(_format_clause(verb, precision, value))
    return "".join(out)


def _format_clause(verb: str, precision: str | None, value: Any) -> str:
    if verb == "s":
        return _format_value(value)
    if verb == "d":
        return _integer(value, 10)
    if verb == "f":
        return _fixed(value, int(precision) if precision else 6)
    if verb == "e":
        return _scientific(value, int(precision) if precision else 6)
    if verb == "b":
        return _integer(value, 2)
    if verb == "o":
        return _integer(value, 8)
    if verb in "xX":
        return _integer(value, 16, upper=verb == "X")
    raise CELRuntimeError(f'error during formatting: unrecognized formatting clause "{verb}"')


def install() -> None:
    S, N = T.STRING, T.INT
    LS = T.list_of(S)
    declare("charAt", "string_char_at_int", (S, N), S, _char_at, member=True)
    declare("indexOf", "string_index_of_string", (S, S), N, _index_of, member=True)
    declare("indexOf", "string_index_of_string_int", (S, S, N), N, _index_of, member=True)
    declare("lastIndexOf", "string_last_index_of_string", (S, S), N, _last_index_of, member=True)
    declare(
        "lastIndexOf", "string_last_index_of_string_int", (S, S, N), N, _last_index_of, member=True
    )
    declare(
        "lowerAscii", "string_lower_ascii", (S,), S, lambda s: _ascii_case(s, False), member=True
    )
    declare(
        "upperAscii", "string_upper_ascii", (S,), S, lambda s: _ascii_case(s, True), member=True
    )
    declare("replace", "string_replace_string_string", (S, S, S), S, _replace, member=True)
    declare("replace", "string_replace_string_string_int", (S, S, S, N), S, _replace, member=True)
    declare("split", "string_split_string", (S, S), LS, _split, member=True)
    declare("split", "string_split_string_int", (S, S, N), LS, _split, member=True)
    declare("substring", "string_substring_int", (S, N), S, _substring, member=True)
    declare("substring", "string_substring_int_int", (S, N, N), S, _substring, member=True)
    declare("trim", "string_trim", (S,), S, lambda s: s.strip(_GO_SPACE), member=True)
    declare("join", "list_join", (LS,), S, _join, member=True)
    declare("join", "list_join_string", (LS, S), S, _join, member=True)
    declare("strings.quote", "strings_quote", (S,), S, quote)
    declare("format", "string_format", (S, T.list_of(T.DYN)), S, format_string, member=True)
