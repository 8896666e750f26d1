"""The pure core (model, cel, allocator) never touches asyncio.

import-linter cannot see standard-library imports, so this checks the source directly.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "operator" / "dra_operator"
PURE = ("model", "cel", "allocator")


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("layer", PURE)
def test_pure_layer_does_not_import_asyncio(layer: str) -> None:
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        if "asyncio" in _imported_roots(path)
    ]
    assert offenders == []
