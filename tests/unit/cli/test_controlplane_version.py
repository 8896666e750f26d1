"""`dra-operator controlplane up --version`: one of the pinned releases, 1.37 by default.

Covers: an unpinned release is refused before anything starts; the chosen release's build
cache is where `up` looks (a missing binary names that directory and exits 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dra_operator.cli import main
from dra_operator.controlplane import PINNED


@pytest.fixture
def empty_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("DRA_OPERATOR_K8S_BIN", "DRA_OPERATOR_K8S_VERSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DRA_OPERATOR_K8S_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_an_unpinned_release_is_refused(empty_cache: Path) -> None:
    result = CliRunner().invoke(
        main, ["controlplane", "up", "--state-dir", str(empty_cache), "--version", "1.26"]
    )
    assert result.exit_code == 2
    assert "'1.26' is not one of '1.27', '1.28', '1.29', '1.30', '1.31'" in result.output


@pytest.mark.parametrize(
    ("args", "version"),
    [pytest.param([], PINNED[37], id="default"), pytest.param(["--version", "1.36"], PINNED[36])],
)
def test_up_looks_in_the_cache_of_the_chosen_release(
    empty_cache: Path, args: list[str], version: str
) -> None:
    result = CliRunner().invoke(
        main, ["controlplane", "up", "--state-dir", str(empty_cache / "state"), *args]
    )
    assert result.exit_code == 1
    assert str(empty_cache / "cache" / version) in result.output.replace("\n", "")
