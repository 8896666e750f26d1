"""The oracle client turns a dead or closed oracle process into OracleError, never a hang."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import IO, Any

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


class _Interrupted(Exception):
    """Stands in for a test timeout arriving while the client waits for an answer."""


class _InterruptOnRead:
    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream

    def readline(self) -> bytes:
        raise _Interrupted

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def test_an_interrupted_request_does_not_shift_later_answers(
    oracle: Oracle, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Oracle(oracle.binary) as other:
        stdout = other._process.stdout
        assert stdout is not None
        monkeypatch.setattr(other._process, "stdout", _InterruptOnRead(stdout))
        with pytest.raises(_Interrupted):
            other.version()
        # The unread version answer must not come back as the answer to this request.
        answer = other.cel("true", {"name": "d"}, "gpu.example.com")
        assert answer == {"compileError": None, "match": True, "runtimeError": None}
