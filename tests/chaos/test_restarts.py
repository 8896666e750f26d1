"""Scenario 1: kube-apiserver (SIGTERM, SIGKILL) and etcd (SIGKILL) restart mid-burst.

On a control plane of the module's own: the operator schedules a burst, the component goes
down while pods are pending, comes back with the same flags, ports and data; the rest of the
burst is created and every pod must end bound, once, with `verify` clean. Reported: how long
after the component was healthy again the operator's first write showed (a pod bound or a
claim generated beyond what existed at the restart).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Iterator

import pytest
from tests.chaos.conftest import Operators
from tests.chaos.harness import Burst, record, scale
from tests.support.controlplane import running_control_plane

from dra_operator import controlplane
from dra_operator.kube import Client

pytestmark = pytest.mark.controlplane


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[controlplane.ControlPlaneState]:
    # Without a watch grace period a SIGTERMed apiserver holds open watches for 60 s (Go's
    # server shutdown timeout) before it exits: real, but a minute of CI per restart.
    args = ["--shutdown-watch-termination-grace-period=5s"]
    with running_control_plane(tmp_path_factory.mktemp("restarts"), args) as state:
        yield state


@pytest.mark.parametrize(
    ("component", "sig"),
    [
        ("kube-apiserver", signal.SIGTERM),
        ("kube-apiserver", signal.SIGKILL),
        ("etcd", signal.SIGKILL),
    ],
    ids=["apiserver-sigterm", "apiserver-sigkill", "etcd-sigkill"],
)
async def test_component_restart_mid_burst(
    component: str,
    sig: signal.Signals,
    plane: controlplane.ControlPlaneState,
    admin: Client,
    operators: Operators,
    record_property: Callable[[str, object], None],
) -> None:
    pods = scale(40, 200)
    burst = await Burst.prepare(admin, nodes=4, devices_per_node=pods // 4)
    operator = operators(plane.operator_kubeconfig, burst.namespace)
    operator.start("chaos")
    await burst.create(0, pods // 2)
    await burst.wait_bound(1)

    state = controlplane.read_state(plane.state_dir)
    assert state is not None
    argv = await asyncio.to_thread(controlplane.stop_component, state, component, sig=sig)
    await asyncio.to_thread(controlplane.resume_component, state, component, argv)
    back = time.monotonic()
    before = await burst.progress()
    await burst.create(pods // 2, pods - pods // 2)
    await burst.wait_progress(before)
    first_write = time.monotonic() - back
    figures = await burst.check(plane)
    record(
        record_property,
        f"restart-{component}-{sig.name}",
        runs=1,
        faults=1,
        first_write_after_return_s=round(first_write, 2),
        **figures,
    )
