"""The oracle client turns a dead or closed oracle process into OracleError, never a hang."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.support.oracle import Oracle, OracleError


def test_a_process_that_exits_raises_with_its_status() -> None:
    false = shutil.which("false")
    assert false is not None
    expected = r"^oracle (exited|is not running): exit status 1$"
    with Oracle(Path(false)) as dead, pytest.raises(OracleError, match=expected):
        dead.version()


def test_requests_after_close_raise(oracle: Oracle) -> None:
    with Oracle(oracle.binary) as other:
        assert other.version()["kubernetes"] == oracle.version()["kubernetes"]
    with pytest.raises(OracleError, match="the client was closed"):
        other.version()
