"""Starting, probing and stopping the control-plane processes, by process id.

Each process runs in its own session (so it outlives `dra-operator controlplane up` and a
Ctrl-C in the terminal does not reach it) with stdout and stderr in one log file. Stopping is
by pid only, never by name: SIGTERM, a grace period, then SIGKILL. Before signalling a pid read
back from a state file, its command line is checked, so a recycled pid is left alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = [
    "free_port",
    "is_running",
    "log_tail",
    "probe_http",
    "start_process",
    "stop_process",
    "wait_until",
]


# Popen objects of the processes this interpreter started: kept so they are not collected
# (and reported as leaked) while the process runs, and so exits are reaped through them.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_process(argv: Sequence[str], log_path: Path) -> int:
    """Start `argv` detached in its own session, logging to `log_path`; its pid."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    _CHILDREN[proc.pid] = proc
    return proc.pid


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return raw.decode(errors="replace").split("\0")


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] == "Z"


def is_running(pid: int, binary: str | None = None) -> bool:
    """Whether `pid` is alive (and, when `binary` is given, still runs that binary).

    A child of this interpreter is asked directly (which also reaps it). Any other pid must
    exist, not be a zombie, and have `binary` as its program or, for scripts, as the
    interpreter's first argument.
    """
    child = _CHILDREN.get(pid)
    if child is not None:
        if child.poll() is None:
            return True
        del _CHILDREN[pid]
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if _is_zombie(pid):
        return False
    return binary is None or binary in _cmdline(pid)[:2]


def stop_process(pid: int, binary: str | None = None, *, grace: float = 10.0) -> bool:
    """SIGTERM `pid`, SIGKILL it after `grace` seconds; False if it was not running."""
    if not is_running(pid, binary):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if not wait_until(lambda: not is_running(pid), grace):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not is_running(pid), grace)
    return True


def wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    """Poll `condition` until it holds or `timeout` seconds pass; whether it held."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def probe_http(url: str, context: ssl.SSLContext | None = None, timeout: float = 2.0) -> bool:
    """Whether GET `url` answers 200 (for /readyz and etcd's /health)."""
    try:
        with urllib.request.urlopen(url, context=context, timeout=timeout) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def log_tail(log_path: Path, lines: int = 30) -> str:
    """The last `lines` lines of a log file ("" if there is none)."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
