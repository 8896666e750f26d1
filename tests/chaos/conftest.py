"""Fixtures of the chaos suite: operator processes, and clients of the private control plane
(`plane`) that a module defines when it breaks the control plane itself."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from tests.chaos.harness import Burst, OperatorProcess
from tests.chaos.proxy import FaultProxy

from dra_operator import controlplane
from dra_operator.kube import Client

Operators = Callable[[Path, str], OperatorProcess]
Proxies = Callable[[str], Awaitable[FaultProxy]]


@pytest.fixture
def operators(tmp_path: Path) -> Iterator[Operators]:
    """A factory of `OperatorProcess`es; every process is stopped after the test."""
    made: list[OperatorProcess] = []

    def make(kubeconfig: Path, namespace: str) -> OperatorProcess:
        made.append(OperatorProcess(kubeconfig, namespace, tmp_path))
        return made[-1]

    yield make
    for group in made:
        group.stop_all()
        # Shown by pytest only when the test failed: what the operator said it decided.
        for log in group.logs:
            lines = log.read_text(errors="replace").splitlines()
            notable = [line for line in lines if '"level": "info"' not in line]
            print(f"--- {log.name}: {len(lines)} lines; warnings and errors, then the last 40")
            print("\n".join([*notable[-80:], "...", *lines[-40:]]))


@pytest.fixture(scope="module")
async def admin(plane: controlplane.ControlPlaneState) -> AsyncIterator[Client]:
    """`admin` of the module's own control plane (exempt from API priority and fairness)."""
    async with Client.from_kubeconfig(plane.admin_kubeconfig, timeout=10.0) as api:
        yield api


@pytest.fixture
async def shared_burst(admin_api: Client) -> AsyncIterator[Callable[..., Awaitable[Burst]]]:
    """`Burst.prepare` on the session's control plane; the burst's objects are deleted after."""
    made: list[Burst] = []

    async def prepare(*, nodes: int, devices_per_node: int) -> Burst:
        made.append(await Burst.prepare(admin_api, nodes=nodes, devices_per_node=devices_per_node))
        return made[-1]

    yield prepare
    for burst in made:
        await burst.cleanup()


@pytest.fixture
async def proxies() -> AsyncIterator[Proxies]:
    """`await proxies(server_url)`: a started `FaultProxy` to that API server; closed after."""
    made: list[FaultProxy] = []

    async def start(server: str) -> FaultProxy:
        host, port = server.removeprefix("https://").rsplit(":", 1)
        made.append(await FaultProxy((host, int(port))).start())
        return made[-1]

    yield start
    for proxy in made:
        await proxy.close()
