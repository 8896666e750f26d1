"""Every package operator/ imports is declared in pyproject.toml's dependencies (a package
that arrives only as another's dependency can vanish with that one's next release: lark, which
cel/_parser.py uses directly, came only through cel-python)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imported() -> set[str]:
    roots: set[str] = set()
    for path in (ROOT / "operator" / "dra_operator").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                roots.add(node.module.split(".")[0])
    return roots - set(sys.stdlib_module_names) - {"dra_operator", "__future__"}


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = re.compile(r"[A-Za-z0-9._-]+")
    return {
        _normal(match.group())
        for spec in project["dependencies"]
        if (match := names.match(spec)) is not None
    }


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_package_is_declared() -> None:
    distributions = metadata.packages_distributions()
    undeclared = {
        module: dists
        for module in sorted(_imported())
        if not (dists := {_normal(d) for d in distributions.get(module, [module])}) & _declared()
    }
    assert undeclared == {}
