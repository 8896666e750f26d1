"""Client and pytest fixture for the Go oracle in tests/oracle (upstream's DRA CEL + allocator).

Differential tests ask the oracle what upstream Kubernetes would answer and compare. One
`dra-oracle serve` process serves the whole session over JSON lines (protocol:
tests/oracle/README.md), so thousands of generated cases cost one process start.

Without Go the oracle cannot be built: tests that need it skip locally and fail under CI=true,
where a skipped differential test would hide a disagreement.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import pytest
from tests.support.skipping import skip_or_fail

BUILD_SCRIPT = Path(__file__).resolve().parents[1] / "oracle" / "build.sh"

JSON = dict[str, Any]


class OracleError(RuntimeError):
    """The oracle could not answer: a request it rejected, or the process died."""


class Oracle:
    """One running `dra-oracle serve`; a lock serialises requests, so threads may share it."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary
        self._lock = threading.Lock()
        self._closed = False
        self._start()

    def _start(self) -> None:
        # stderr goes to a file, not a pipe: a chatty crash must not block the process, and
        # its text is what makes an OracleError useful.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in _stop())
        self._process = subprocess.Popen(
            [str(self.binary), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )

    def _stop(self, *, kill: bool) -> None:
        stdin, stdout = self._process.stdin, self._process.stdout
        if kill:
            self._process.kill()
        if stdin is not None:
            # A dead process leaves unflushed bytes behind; closing must not raise for them.
            with contextlib.suppress(BrokenPipeError):
                stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if stdout is not None:
            stdout.close()
        self._stderr.close()

    def __enter__(self) -> Oracle:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """End the process by closing its input, as a finished session does."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._stop(kill=False)

    def request(self, request: Mapping[str, Any]) -> JSON:
        """Send one request and return its response; a protocol error raises OracleError."""
        line = json.dumps(request, separators=(",", ":")).encode() + b"\n"
        with self._lock:
            if self._closed:
                raise OracleError("oracle is not running: the client was closed")
            stdin, stdout = self._process.stdin, self._process.stdout
            assert stdin is not None and stdout is not None
            try:
                stdin.write(line)
                stdin.flush()
                answer = stdout.readline()
            except (BrokenPipeError, ValueError) as err:
                raise OracleError(f"oracle is not running: {self._crash_text()}") from err
            except BaseException:
                # Interrupted between question and answer (a test timeout, ^C): the next
                # request would read this answer, so continue with a fresh process instead.
                self._stop(kill=True)
                self._start()
                raise
            if not answer:
                raise OracleError(f"oracle exited: {self._crash_text()}")
        response: JSON = json.loads(answer)
        if "protocolError" in response:
            raise OracleError(f"oracle rejected the request: {response['protocolError']}")
        return response

    def version(self) -> JSON:
        """`{"kubernetes": release, "features": [every feature key]}`."""
        return self.request({"op": "version"})

    def cel(
        self,
        expression: str,
        device: Mapping[str, Any],
        driver: str,
        features: Mapping[str, bool] | None = None,
    ) -> JSON:
        """Upstream's verdict on one selector and one v1 Device: exactly one of
        `compileError`, `runtimeError`, `match` is not None."""
        return self.request(
            {
                "op": "cel",
                "expression": expression,
                "device": device,
                "driver": driver,
                "features": dict(features or {}),
            }
        )

    def allocate(
        self,
        *,
        node: Mapping[str, Any],
        classes: Sequence[Mapping[str, Any]],
        slices: Sequence[Mapping[str, Any]],
        claims: Sequence[Mapping[str, Any]],
        allocated: Sequence[Mapping[str, Any]] = (),
        features: Mapping[str, bool] | None = None,
        timeout_seconds: float | None = None,
    ) -> JSON:
        """Upstream's allocation of `claims` together on `node`: `error`, `allocated`,
        `results` (v1 AllocationResults in claim order), and `nodeError` when upstream
        ruled out only this node."""
        request: JSON = {
            "op": "allocate",
            "features": dict(features or {}),
            "node": node,
            "classes": list(classes),
            "slices": list(slices),
            "allocated": list(allocated),
            "claims": list(claims),
        }
        if timeout_seconds is not None:
            request["timeoutSeconds"] = timeout_seconds
        return self.request(request)

    def _crash_text(self) -> str:
        # Its stdout has ended, so the process is exiting: wait for its status and last words.
        try:
            status: int | None = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace").strip()
        return text[-4000:] or f"exit status {status}"


def build_oracle(release: str = "1.36") -> Path | None:
    """The oracle of one release (upstream's DRA library of 1.36 or 1.37), built or found in
    its cache by tests/oracle/build.sh; None without Go."""
    if shutil.which("go") is None:
        return None
    # build.sh prints progress on stderr (left visible) and the binary's path on stdout.
    done = subprocess.run(["bash", str(BUILD_SCRIPT), release], stdout=subprocess.PIPE, check=False)
    if done.returncode != 0:
        pytest.fail(f"building the Go oracle failed ({BUILD_SCRIPT}, exit {done.returncode})")
    return Path(done.stdout.decode().strip().splitlines()[-1])


def _running(release: str) -> Iterator[Oracle]:
    binary = build_oracle(release)
    if binary is None:
        skip_or_fail(
            "go is not installed, so the upstream DRA oracle (tests/oracle) cannot be built"
        )
    with Oracle(binary) as running:
        yield running


@pytest.fixture(scope="session")
def oracle() -> Iterator[Oracle]:
    """The session's 1.36 oracle process; skips without Go locally, fails under CI=true."""
    yield from _running("1.36")


@pytest.fixture(scope="session")
def oracle_137() -> Iterator[Oracle]:
    """The same for upstream's 1.37 allocator (dynamic-resource-allocation v0.37.2)."""
    yield from _running("1.37")
