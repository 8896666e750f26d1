"""pytest plugin: run `dra-operator run` against the session control plane.

Fixtures:
  run_operator      async factory: the operator in-process, as a task of the test's loop,
                    under the operator kubeconfig; returns an `InProcessOperator` once it leads
                    (or once it runs, for followers); stopped cleanly after the test
  operator_process  factory: `dra-operator run --kubeconfig <operator.kubeconfig> ...` as a
                    subprocess (SIGTERM after the test, SIGKILL if it hangs)

Helpers: `wait_for(probe)` polls a condition with a timeout (never a bare sleep),
`verify_clean(control_plane, namespace)` runs `dra-operator verify` on the namespace
(`run_verify` returns its exit status and output instead), and
`failed_scheduling(api, namespace, pod)` reads what the scheduler told the pod's user.

Both fixtures scope the operator to the test's namespace (`--namespace`) and put its Lease there, so
operators of earlier tests, still draining, never see this test's objects.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest
from tests.support.cli import run_command
from tests.support.controlplane import Spawned

from dra_operator import app, controlplane, kube

T = TypeVar("T")

_START_TIMEOUT = 60.0


async def wait_for(
    probe: Callable[[], Awaitable[T | None] | T | None],
    *,
    timeout: float = 60.0,
    what: str = "condition",
) -> T:
    """Poll `probe` (sync or async) until it returns something truthy, and return that;
    fail after `timeout`."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        answer = probe()
        result = await answer if inspect.isawaitable(answer) else answer
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}", pytrace=False)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.5)


async def verify_clean(control_plane: controlplane.ControlPlaneState, namespace: str) -> None:
    """`dra-operator verify -n <namespace>` as the admin: exit 0, no violation."""
    code, out = await run_verify(control_plane, namespace)
    assert code == 0, out


async def run_verify(
    control_plane: controlplane.ControlPlaneState, namespace: str
) -> tuple[int, str]:
    """`dra-operator verify -n <namespace>` as the admin: its exit status and output."""
    return await run_command(
        "dra-operator", control_plane.admin_kubeconfig, "verify", f"--namespace={namespace}"
    )


async def failed_scheduling(api: kube.Client, namespace: str, pod: str) -> list[str]:
    """The messages of the pod's FailedScheduling events, as `kubectl describe` shows them:
    the scheduler's explanation of why the pod is not bound (empty while none was written)."""
    events = await api.list(kube.CORE_EVENTS, namespace=namespace)
    return [
        e["message"]
        for e in events.get("items") or ()
        if e["involvedObject"].get("name") == pod and e["reason"] == "FailedScheduling"
    ]


class InProcessOperator:
    """An operator running as a task; `operator` is the live assembly (caches, plugins)."""

    def __init__(self, settings: app.Settings, config: kube.ClusterConfig) -> None:
        self.settings = settings
        self.operator: app.Operator | None = None
        self._stop = asyncio.Event()
        self._config = config
        self._task: asyncio.Task[None] | None = None

    def _started(self, operator: app.Operator) -> None:
        self.operator = operator

    async def start(self, *, wait_leading: bool = True) -> InProcessOperator:
        self._task = asyncio.create_task(
            app.serve(self.settings, self._config, stop=self._stop, started=self._started),
            name=f"operator-{self.settings.identity}",
        )

        async def ready() -> bool:
            if self._task is not None and self._task.done():
                self._task.result()  # start-up failed: raise it here
            if self.operator is None:
                return False
            return self.operator.leading.is_set() or not wait_leading

        await wait_for(ready, timeout=_START_TIMEOUT, what="the operator to start")
        return self

    async def stop(self) -> None:
        if self._task is None:
            return
        self._stop.set()
        try:
            await asyncio.wait_for(self._task, 30)
        finally:
            self._task = None


def operator_settings(namespace: str, identity: str, **changes: Any) -> app.Settings:
    election = app.LeaderElection(
        namespace=namespace,
        name="dra-operator",
        lease_duration=4.0,
        renew_deadline=3.0,
        retry_period=0.5,
    )
    base = app.Settings(
        namespaces=(namespace,), identity=identity, workers=8, leader_election=election
    )
    return dataclasses.replace(base, **changes)


@pytest.fixture
async def run_operator(
    control_plane: controlplane.ControlPlaneState, namespace: str
) -> AsyncIterator[Callable[..., Awaitable[InProcessOperator]]]:
    config = kube.load_kubeconfig(control_plane.operator_kubeconfig)
    running: list[InProcessOperator] = []

    async def start(
        identity: str = "in-process", *, wait_leading: bool = True, **changes: Any
    ) -> InProcessOperator:
        handle = InProcessOperator(operator_settings(namespace, identity, **changes), config)
        running.append(handle)
        return await handle.start(wait_leading=wait_leading)

    yield start
    for handle in running:
        await handle.stop()


def operator_args(kubeconfig: str, namespace: str, identity: str) -> list[str]:
    """`dra-operator run` flags for a test: its namespace, its Lease, quick failover."""
    return [
        "run",
        f"--kubeconfig={kubeconfig}",
        f"--namespace={namespace}",
        f"--leader-election-namespace={namespace}",
        f"--identity={identity}",
        "--leader-elect-lease-duration=4",
        "--leader-elect-renew-deadline=3",
        "--leader-elect-retry-period=0.5",
        "--workers=8",
    ]


@pytest.fixture
def operator_process(
    spawn: Callable[..., Spawned], control_plane: controlplane.ControlPlaneState, namespace: str
) -> Iterator[Callable[..., Spawned]]:
    """Start `dra-operator run` subprocesses; SIGTERM (then SIGKILL) after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def start(identity: str, *extra: str) -> Spawned:
        args = operator_args(str(control_plane.operator_kubeconfig), namespace, identity)
        spawned = spawn("dra-operator", *args, *extra)
        started.append(spawned.proc)
        return spawned

    yield start
    for proc in started:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
