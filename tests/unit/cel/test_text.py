"""Compile errors render as cel-go's `Issues.String()`; literals unescape as CEL specifies."""

from __future__ import annotations

import pytest

from dra_operator.cel._text import CompileIssue, render_issue, unescape_bytes, unescape_string


@pytest.mark.parametrize(
    ("source", "pos", "expected"),
    [
        pytest.param("a.b", 1, "ERROR: <input>:1:2: m\n | a.b\n | .^", id="ascii"),
        pytest.param('"é" + x', 6, 'ERROR: <input>:1:7: m\n | "é" + x\n | .\uff0e....^', id="wide"),
        pytest.param("é", 0, "ERROR: <input>:1:1: m\n | é\n | \uff3e", id="wide-caret"),
        pytest.param("a\n\tb", 3, "ERROR: <input>:2:2: m\n |  b\n | .^", id="second-line-tab"),
    ],
)
def test_render_issue(source: str, pos: int, expected: str) -> None:
    assert render_issue(source, CompileIssue(pos, "m")) == expected


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        pytest.param(r'"a\tb"', "a\tb", id="tab"),
        pytest.param(r'"\x41\101\u00e9\U0001F600"', "AAé\U0001f600", id="numeric"),
        pytest.param(r"'\`\?'", "`?", id="backtick-question"),
        pytest.param(r'r"\n"', "\\n", id="raw"),
        pytest.param('"""a\nb"""', "a\nb", id="triple"),
    ],
)
def test_unescape_string(literal: str, expected: str) -> None:
    assert unescape_string(literal, 0) == expected


def test_unescape_bytes_keeps_octets() -> None:
    assert unescape_bytes(r'"\xff\001é"', 0) == b"\xff\x01\xc3\xa9"


def test_invalid_escape_is_a_compile_issue() -> None:
    with pytest.raises(CompileIssue, match="invalid escape"):
        unescape_string(r'"\q"', 0)
