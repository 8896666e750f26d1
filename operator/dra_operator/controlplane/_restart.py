"""Stopping and starting one component of a running control plane again (the chaos tests).

A component is stopped by a signal of the caller's choice (SIGTERM for a graceful restart,
SIGKILL for a crash) and started again with the very command line it ran, read back from
/proc before the signal: same ports, same PKI, same etcd data directory. The restarted
process replaces the old one in state.json, so `down` still stops it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import ssl
from pathlib import Path

from dra_operator.controlplane._processes import (
    is_running,
    log_tail,
    probe_http,
    start_process,
    wait_until,
)
from dra_operator.controlplane._state import Component, ControlPlaneState
from dra_operator.errors import ControlPlaneError

__all__ = ["health_url", "resume_component", "stop_component"]


def _component(state: ControlPlaneState, name: str) -> Component:
    for component in state.components:
        if component.name == name:
            return component
    raise ControlPlaneError(f"no {name} in the control plane of {state.state_dir}")


def stop_component(
    state: ControlPlaneState, name: str, *, sig: signal.Signals = signal.SIGTERM
) -> list[str]:
    """Send `sig` to component `name`, wait until it is gone; the argv to start it again."""
    component = _component(state, name)
    argv = Path(f"/proc/{component.pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    with contextlib.suppress(ProcessLookupError):
        os.kill(component.pid, sig)
    if not wait_until(lambda: not is_running(component.pid), 120.0):
        raise ControlPlaneError(f"{name} (pid {component.pid}) did not exit after {sig.name}")
    return argv


def health_url(state: ControlPlaneState, name: str) -> str:
    """Where component `name` says it is ready (etcd's /health, the apiserver's /readyz)."""
    return f"{state.etcd_url}/health" if name == "etcd" else f"{state.server}/readyz"


def resume_component(
    state: ControlPlaneState, name: str, argv: list[str], *, timeout: float = 90.0
) -> ControlPlaneState:
    """Start `argv` as component `name` again and wait until it is healthy; the new state."""
    old = _component(state, name)
    pid = start_process(argv, Path(old.log))
    new = dataclasses.replace(old, pid=pid)
    state = dataclasses.replace(
        state, components=tuple(new if c is old else c for c in state.components)
    )
    state.save()
    context = None if name == "etcd" else ssl.create_default_context(cafile=str(state.ca_file))
    url = health_url(state, name)
    if not wait_until(lambda: probe_http(url, context) or not is_running(pid), timeout, 0.1):
        raise ControlPlaneError(
            f"{name} was not healthy {timeout:.0f}s after a restart",
            log_tail=log_tail(Path(old.log)),
        )
    if not is_running(pid):
        raise ControlPlaneError(f"{name} exited after a restart", log_tail=log_tail(Path(old.log)))
    return state
