"""The docs stand alone: what README.md and docs/ cite is in the repository.

Fails on a relative path (a Markdown link, or a backticked path under one of the repository's
folders or the package's subpackages) that does not exist, on a path of a development machine
(`/work/...`, `/home/...`, `/tmp/...`), on a reference to notes outside the repository
(`../shared/...`) and on words that only meant something to whoever was writing ("this
branch", "the lead", an issue number without a tracker). The last three hold for the comments
and docstrings of the Python sources too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "operator" / "dra_operator"

_OUTSIDE = re.compile(r"\.\./shared|\bshared/(reference|design)/")
_MACHINE = re.compile(r"(?<![\w.~-])/(work|home|Users|root|tmp)/")
_SESSION = re.compile(r"\bthis branch\b|\bthe lead\b|\bissue #?\d+|\(#\d+\)", re.IGNORECASE)
_CITED = re.compile(r"`([^`\s]+)`|\]\(([^)\s#]+)(?:#[^)]*)?\)")
_PLACEHOLDER = re.compile(r"[{}*<>$=|]|\.X\b")


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _folders() -> frozenset[str]:
    tops = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
    return frozenset(tops | {p.name for p in PACKAGE.iterdir() if p.is_dir()} | {".ci"})


def _exists(path: str, bases: list[Path]) -> bool:
    path = path.split("::")[0].split(":")[0]
    candidates = [path]
    stem, dot, _ = path.rpartition(".")
    if dot and "/" in stem:
        candidates.append(stem + ".py")  # `tests/support/dra_objects.in_version`: an attribute
    return any((base / candidate).exists() for base in bases for candidate in candidates)


def missing_paths(page: Path, text: str) -> list[str]:
    """The relative paths `text` (the page `page`) cites that the repository does not hold."""
    folders = _folders()
    missing = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in _CITED.finditer(line):
            link = match.group(2) is not None
            path = (match.group(2) or match.group(1)).rstrip(".,;")
            if path.startswith(("http:", "https:", "mailto:", "/", "~")):
                continue
            if not link and "/" not in path:
                continue
            if _PLACEHOLDER.search(path) or (not link and path.split("/")[0] not in folders):
                continue
            bases = [page.parent] if link else [ROOT, PACKAGE, ROOT / "operator"]
            if not _exists(path, bases):
                missing.append(f"{number}: {path}")
    return missing


def _matches(pattern: re.Pattern[str], text: str) -> list[str]:
    return [
        f"{number}: {line.strip()[:100]}"
        for number, line in enumerate(text.splitlines(), 1)
        if pattern.search(line)
    ]


@pytest.mark.parametrize("page", _pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_a_page_cites_only_what_the_repository_holds(page: Path) -> None:
    text = page.read_text()
    assert missing_paths(page, text) == []
    assert _matches(_OUTSIDE, text) == []
    assert _matches(_MACHINE, text) == []
    assert _matches(_SESSION, text) == []


def _python_sources() -> list[Path]:
    return [
        path
        for folder in ("operator", "tests", "bench", "e2e")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != Path(__file__).resolve()
    ]


def test_sources_point_nowhere_outside_the_repository() -> None:
    found = {
        str(path.relative_to(ROOT)): hits
        for path in _python_sources()
        if (hits := _matches(_OUTSIDE, path.read_text()) + _matches(_MACHINE, path.read_text()))
    }
    assert found == {}


def test_the_checks_catch_what_they_are_for() -> None:
    page = ROOT / "docs" / "example.md"
    text = "See [run](run.md), [gone](gone.md), `app/_nothing.py` and `tests/unit/test_layers.py`."
    assert missing_paths(page, text) == ["1: gone.md", "1: app/_nothing.py"]
    assert _matches(_OUTSIDE, "see ../shared/reference/upstream-dra.md") != []
    assert _matches(_MACHINE, "run /work/main/.venv/bin/dra-operator") != []
    assert _matches(_MACHINE, "the kubelet's /var/lib/kubelet/plugins") == []
    assert _matches(_SESSION, "measured on this branch (issue #15)") != []
