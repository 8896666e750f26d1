"""Source-level helpers: compile issues rendered as cel-go does, and CEL literal escapes."""

from __future__ import annotations

import re


class CompileIssue(Exception):
    """One problem found while parsing or checking, at a source offset."""

    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


def render_issues(source: str, issues: list[CompileIssue]) -> str:
    return "\n".join(render_issue(source, issue) for issue in issues)


def render_issue(source: str, issue: CompileIssue) -> str:
    """cel-go's `Issues.String()`: `ERROR: <input>:L:C: msg` plus the line and a caret."""
    pos = max(0, min(issue.pos, len(source)))
    line_no = source.count("\n", 0, pos) + 1
    line_start = source.rfind("\n", 0, pos) + 1
    line_end = source.find("\n", pos)
    line = source[line_start : line_end if line_end >= 0 else len(source)].replace("\t", " ")
    col = pos - line_start
    # cel-go marks multi-byte characters with full-width dots so the caret stays aligned.
    dots = "".join("\uff0e" if len(ch.encode()) > 1 else "." for ch in line[:col])
    at = line[col : col + 1]
    caret = "\uff3e" if at and len(at.encode()) > 1 else "^"
    return f"ERROR: <input>:{line_no}:{col + 1}: {issue.message}\n | {line}\n | {dots}{caret}"


_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}
_ESCAPE = re.compile(
    r"\\(?:(?P<simple>[abfnrtv\\'\"`?])|x(?P<hex>[0-9a-fA-F]{2})|u(?P<u4>[0-9a-fA-F]{4})"
    r"|U(?P<u8>[0-9a-fA-F]{8})|(?P<oct>[0-3][0-7]{2})|(?P<bad>.?))",
    re.S,
)


def _strip_quotes(text: str) -> tuple[str, bool]:
    raw = text[:1] in "rR"
    if raw:
        text = text[1:]
    quote = 3 if text[:3] in ('"""', "'''") else 1
    return text[quote:-quote], raw


def unescape_string(text: str, pos: int) -> str:
    body, raw = _strip_quotes(text)
    if raw:
        return body

    def repl(match: re.Match[str]) -> str:
        if match["simple"]:
            return _SIMPLE[match["simple"]]
        if match["bad"] is not None:
            raise CompileIssue(pos, "Syntax error: invalid escape sequence")
        digits = match["hex"] or match["u4"] or match["u8"]
        code = int(digits, 16) if digits else int(match["oct"], 8)
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            raise CompileIssue(pos, "Syntax error: invalid unicode code point")
        return chr(code)

    return _ESCAPE.sub(repl, body)


def unescape_bytes(text: str, pos: int) -> bytes:
    body, raw = _strip_quotes(text)
    if raw:
        return body.encode()
    out = bytearray()
    index = 0
    for match in _ESCAPE.finditer(body):
        out += body[index : match.start()].encode()
        index = match.end()
        if match["simple"]:
            out += _SIMPLE[match["simple"]].encode()
        elif match["hex"] or match["oct"]:
            out.append(int(match["hex"], 16) if match["hex"] else int(match["oct"], 8))
        elif match["u4"] or match["u8"]:
            out += chr(int(match["u4"] or match["u8"], 16)).encode()
        else:
            raise CompileIssue(pos, "Syntax error: invalid escape sequence")
    out += body[index:].encode()
    return bytes(out)
