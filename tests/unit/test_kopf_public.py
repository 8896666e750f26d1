"""kopf is used through its public API only: nothing in the repository imports its private
modules or changes kopf's own modules at run time.

ruff's TID251 bans the imports (`kopf._cogs`, `kopf._core`, `kopf._kits`, pyproject.toml),
import-linter's `kopf-public` contract forbids any `kopf._*` import and its `kopf-confined` one
keeps `import kopf` to `app._kopf`; none sees an assignment into a kopf module
(`watching.continuous_watch = ...`), a `setattr` on one or a `monkeypatch`/`mock.patch` of a
kopf name, which is what a kopf upgrade breaks silently. This walks every Python file for them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("operator", "tests", "bench", "e2e", "conftest.py")
_PATCHERS = frozenset({"setattr", "delattr", "patch", "object"})


def _kopf_names(tree: ast.AST) -> set[str]:
    """The names a module binds to kopf or anything imported from it."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "kopf":
                    names.add(alias.asname or "kopf")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "kopf":
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _private_import(node: ast.AST) -> bool:
    modules: list[str] = []
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
        modules = [node.module]
    return any(m.startswith("kopf.") and m.split(".")[1].startswith("_") for m in modules)


def offences(source: str, filename: str = "<test>") -> list[int]:
    """Lines that import a private kopf module or change a kopf module, class or function."""
    tree = ast.parse(source, filename)
    kopf_names = _kopf_names(tree)

    def is_kopf(expr: ast.expr) -> bool:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value.split(".")[0] == "kopf"
        return _root(expr) in kopf_names

    found: list[int] = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Attribute) and is_kopf(t) for t in targets):
            found.append(node.lineno)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in _PATCHERS and is_kopf(node.args[0]):
                found.append(node.lineno)
        elif _private_import(node):
            found.append(node.lineno)
    return found


def _files() -> list[Path]:
    files: list[Path] = []
    for name in SOURCES:
        path = ROOT / name
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def test_nothing_imports_private_kopf_modules_or_patches_kopf() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for path in _files()
        if (lines := offences(path.read_text(), str(path)))
    }
    assert found == {}


@pytest.mark.parametrize(
    "source",
    [
        "from kopf._cogs.clients import watching\n",
        "import kopf._core.engines.peering as peering\n",
        "from kopf import OperatorSettings\nOperatorSettings.listed = None\n",
        "import kopf\nkopf.on.event = print\n",
        "import kopf as k\nsetattr(k.on, 'event', print)\n",
        "def test(monkeypatch):\n    monkeypatch.setattr('kopf.spawn_tasks', print)\n",
        "from unittest import mock\nmock.patch('kopf.on.event')\n",
        "import kopf\nfrom unittest import mock\nmock.patch.object(kopf.on, 'event')\n",
    ],
)
def test_each_kind_of_patch_is_found(source: str) -> None:
    assert offences(source) != []


def test_using_kopf_s_public_objects_is_not_patching() -> None:
    source = (
        "import kopf\n"
        "settings = kopf.OperatorSettings()\n"
        "settings.posting.enabled = False\n"
        "registry = kopf.OperatorRegistry()\n"
        "kopf.on.login(registry=registry)(print)\n"
    )
    assert offences(source) == []
