"""The checks of verify are pure: only `_read` may do I/O or use asyncio.

import-linter guards the package imports; it cannot see standard-library ones, so this does.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "operator" / "dra_operator" / "verify"
PURE = ("_check.py", "_consumers.py", "_devices.py", "_named.py", "_state.py")


@pytest.mark.parametrize("module", PURE)
def test_check_module_does_not_import_asyncio(module: str) -> None:
    tree = ast.parse((PACKAGE / module).read_text())
    roots = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
    }
    assert "asyncio" not in roots
