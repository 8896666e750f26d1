"""Kubeconfigs whose user is an `exec` credential plugin (tests/data/exec_credential.py).

The plugin runs once at load time; its token is kept until its expiry (minus a small skew) or
until the server rejects it, then fetched again by running the plugin once more.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.kubeconfigs import exec_kubeconfig

from dra_operator.kube import load_kubeconfig


def _runs(calls: Path) -> int:
    return len(calls.read_text().splitlines())


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text("first")
    return path


async def test_token_is_kept_until_rejected_then_fetched_again(
    tmp_path: Path, token_file: Path
) -> None:
    calls = tmp_path / "calls"
    path = exec_kubeconfig(tmp_path / "kc", "https://h:1", token_file, calls, ttl=None)
    config = load_kubeconfig(path)
    assert _runs(calls) == 1
    assert [await config.authorization() for _ in range(3)] == ["Bearer first"] * 3
    assert _runs(calls) == 1
    token_file.write_text("second")
    config.rejected()
    assert await config.authorization() == "Bearer second"
    assert _runs(calls) == 2


async def test_token_is_fetched_again_when_it_expires(tmp_path: Path, token_file: Path) -> None:
    calls = tmp_path / "calls"
    long = load_kubeconfig(
        exec_kubeconfig(tmp_path / "long", "https://h:1", token_file, calls, ttl=3600)
    )
    await long.authorization()
    await long.authorization()
    assert _runs(calls) == 1
    # Within the refresh skew of its expiry already: every use runs the plugin again.
    short = load_kubeconfig(
        exec_kubeconfig(tmp_path / "short", "https://h:1", token_file, calls, ttl=1)
    )
    token_file.write_text("rotated")
    assert await short.authorization() == "Bearer rotated"
    assert _runs(calls) == 3
