"""Fixtures of the e2e suite (the scenarios' world; see e2e/__init__.py for the two modes).

target         session: the chosen cluster (KUBECONFIG, else the local control plane, which
               fails rather than skips under CI=true without binaries)
e2e_api        session: a client as the admin of that cluster
fake_driver    session: the suite's driver, published on the nodes it uses (locally two fake
               Ready nodes it creates); withdrawn at the end
leader         session: the deployed operator's leader, once it renews its Lease (None when
               the suite starts its own operators)
scene          per test: a fresh namespace, an operator serving it (started as a subprocess
               unless deployed), and the test's pods, claims and taints removed afterwards so
               every device is free for the next test
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Generator
from pathlib import Path

import pytest
from tests.support.controlplane import Spawned
from tests.support.operator import operator_args

from dra_operator import controlplane
from dra_operator.errors import APINotFoundError
from dra_operator.kube import NAMESPACES, NODES, Client, load_kubeconfig
from e2e._driver import FakeDriver, new_driver, schedulable
from e2e._scene import Scene
from e2e._target import DEPLOYED_LEASE, Target, choose, wait_for_leader

LOCAL_NODES = 2
_OPERATOR_LOG = pytest.StashKey[Path]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the log of the operator the test started, when the test fails."""
    report = yield
    log = item.stash.get(_OPERATOR_LOG, None)
    if report.failed and log is not None and log.exists():
        lines = log.read_text(errors="replace").splitlines()
        report.sections.append(("dra-operator run (last lines)", "\n".join(lines[-60:])))
    return report


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Target:
    try:
        choice = choose(os.environ)
    except ValueError as exc:
        pytest.fail(str(exc), pytrace=False)
    if choice.kubeconfig is None:
        state = request.getfixturevalue("control_plane")
        assert isinstance(state, controlplane.ControlPlaneState)
        return Target(
            kubeconfig=state.admin_kubeconfig,
            operator_kubeconfig=state.operator_kubeconfig,
            local=True,
            deployed=False,
        )
    if not choice.kubeconfig.is_file():
        pytest.fail(f"KUBECONFIG={choice.kubeconfig}: no such file", pytrace=False)
    return Target(
        kubeconfig=choice.kubeconfig,
        operator_kubeconfig=choice.kubeconfig,
        local=False,
        deployed=choice.deployed,
    )


@pytest.fixture(scope="session")
async def e2e_api(target: Target) -> AsyncIterator[Client]:
    async with Client(load_kubeconfig(target.kubeconfig)) as api:
        yield api


@pytest.fixture(scope="session")
async def fake_driver(target: Target, e2e_api: Client) -> AsyncIterator[FakeDriver]:
    own: list[str] = []
    if target.local:
        session = uuid.uuid4().hex[:6]
        for index in range(LOCAL_NODES):
            name = f"e2e-{session}-{index}"
            await controlplane.create_ready_node(e2e_api, name)
            own.append(name)
        nodes = own
    else:
        listed = (await e2e_api.list(NODES)).get("items") or []
        nodes = sorted(n["metadata"]["name"] for n in listed if schedulable(n))
        if not nodes:
            pytest.fail("no Ready, schedulable, untainted node in the cluster", pytrace=False)
    driver = new_driver(nodes)
    await driver.publish(e2e_api)
    yield driver
    await driver.withdraw(e2e_api)
    for name in own:
        with contextlib.suppress(APINotFoundError):
            await e2e_api.delete(NODES, name)


@pytest.fixture(scope="session")
async def leader(target: Target, e2e_api: Client) -> str | None:
    if not target.deployed:
        return None
    return await wait_for_leader(e2e_api, *DEPLOYED_LEASE, timeout=120.0)


def _start_operator(target: Target, namespace: str, identity: str, log: Path) -> Spawned:
    """`dra-operator run` for `namespace` only (its Lease there too), all controllers that
    the cluster does not already run (it detects kube-controller-manager itself)."""
    program = Path(sys.executable).with_name("dra-operator")
    argv = operator_args(str(target.operator_kubeconfig), namespace, identity)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(program), *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Spawned(proc, log)


def _stop_operator(spawned: Spawned) -> None:
    if spawned.proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(spawned.proc.pid, signal.SIGTERM)
    try:
        spawned.wait(timeout=20)
    except subprocess.TimeoutExpired:
        spawned.proc.kill()
        spawned.wait(timeout=10)


@pytest.fixture
async def scene(
    request: pytest.FixtureRequest,
    target: Target,
    e2e_api: Client,
    fake_driver: FakeDriver,
    leader: str | None,
    tmp_path: Path,
) -> AsyncIterator[Scene]:
    namespace = f"e2e-{uuid.uuid4().hex[:10]}"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    await e2e_api.create(NAMESPACES, body)
    spawned: Spawned | None = None
    try:
        if leader is None:
            log = tmp_path / "dra-operator.log"
            request.node.stash[_OPERATOR_LOG] = log
            identity = f"e2e-{namespace}"
            started = spawned = _start_operator(target, namespace, identity, log)

            def running() -> None:
                if started.proc.poll() is not None:
                    pytest.fail(f"dra-operator run exited:\n{started.output()}", pytrace=False)

            await wait_for_leader(
                e2e_api, namespace, "dra-operator", identity=identity, check=running
            )
        world = Scene(e2e_api, namespace, fake_driver, target.kubeconfig)
        try:
            yield world
        finally:
            await world.clean_up()
    finally:
        if spawned is not None:
            _stop_operator(spawned)
        with contextlib.suppress(APINotFoundError):
            await e2e_api.delete(NAMESPACES, namespace)
