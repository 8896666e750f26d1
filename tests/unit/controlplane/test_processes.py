"""Starting and stopping processes by pid, and the state file that records them.

Covers: a started process runs detached; stop_process ends it and reports whether it ran;
a foreign pid (read back from state.json) whose command line is not the recorded binary is
left alone (a recycled pid), and an exited one is not "running" even as a zombie; the log tail;
state.json round-trips, and `down` on an empty directory stops nothing; `restart` stops one
component and starts it again from its recorded argv (or only stops it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dra_operator.controlplane import Component, ControlPlaneState, down, read_state, restart
from dra_operator.controlplane._processes import (
    free_port,
    is_running,
    log_tail,
    probe_http,
    start_process,
    stop_process,
)
from dra_operator.controlplane._state import start_component

SLEEP = sys.executable
SLEEPER = [SLEEP, "-c", "import time; time.sleep(300)  # dra-operator process test"]


def test_start_and_stop_a_child_by_pid(tmp_path: Path) -> None:
    pid = start_process(SLEEPER, tmp_path / "logs" / "sleep.log")
    assert is_running(pid, SLEEP)
    assert stop_process(pid, SLEEP, grace=10)
    assert not is_running(pid)
    assert not stop_process(pid, SLEEP)


def test_a_foreign_pid_is_checked_by_command_line() -> None:
    # As after a restart of the CLI: the pid comes from state.json, not from our children.
    # The child says when it runs: until its exec, /proc shows this interpreter's command line.
    announcing = [SLEEP, "-c", "print('up', flush=True); import time; time.sleep(300)"]
    with subprocess.Popen(announcing, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline() == "up\n"
            assert is_running(proc.pid, SLEEP)
            assert not is_running(proc.pid, "/usr/bin/not-sleep")
            assert not stop_process(proc.pid, "/usr/bin/not-sleep")
            assert proc.poll() is None
            assert stop_process(proc.pid, SLEEP, grace=10)
            assert not is_running(proc.pid, SLEEP)
        finally:
            proc.kill()


def test_log_tail(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(f"line {i}\n" for i in range(50)))
    assert log_tail(log, 2) == "line 48\nline 49"
    assert log_tail(tmp_path / "missing.log") == ""


def test_probe_of_a_closed_port_fails() -> None:
    assert not probe_http(f"http://127.0.0.1:{free_port()}/readyz", timeout=1)


def test_state_round_trip_and_down(tmp_path: Path) -> None:
    pid = start_process(SLEEPER, tmp_path / "logs" / "sleep.log")
    component = Component(name="sleeper", pid=pid, binary=SLEEP, log=str(tmp_path / "x.log"))
    state = ControlPlaneState(
        state_dir=tmp_path, version="v1.36.4", server="https://127.0.0.1:1", components=(component,)
    )
    state.save()
    assert read_state(tmp_path) == state
    assert down(tmp_path) == ["sleeper"]
    assert read_state(tmp_path) is None
    assert not is_running(pid)
    assert down(tmp_path) == []


def test_restart_starts_a_component_again_as_it_was(tmp_path: Path) -> None:
    state = start_component(ControlPlaneState(state_dir=tmp_path), "sleeper", SLEEPER)
    (first,) = state.components
    assert read_state(tmp_path) == state  # argv included

    state = restart(state, "sleeper")
    (second,) = state.components
    assert second.pid != first.pid and second.argv == first.argv == tuple(SLEEPER)
    assert not is_running(first.pid) and second.is_running()
    assert read_state(tmp_path) == state

    state = restart(state, "sleeper", start=False)
    assert not second.is_running() and not state.components[0].is_running()
    state = restart(state, "sleeper")
    assert state.components[0].is_running()
    assert down(tmp_path) == ["sleeper"]
