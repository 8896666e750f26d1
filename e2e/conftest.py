"""Fixtures of the e2e suite (the scenarios' world; see e2e/__init__.py for the two modes).

target         session: the chosen cluster (KUBECONFIG, else the local control plane with
               its real nodes, which fails rather than skips under CI=true without binaries;
               with DRA_OPERATOR_E2E_OPERATOR=deployed, one running in_cluster with the image
               of `make image` loaded and deploy/ applied)
installer      session: kubectl and helm against the suite's own deployment (test_deployed)
e2e_api        session: a client as the admin of that cluster
served         session: what it serves (resource.k8s.io version per kind, release features)
fake_driver    session: the suite's driver on the nodes it uses: locally on 1.36+ the simulated
               driver (`dra-operator driver`) on every real node; locally on an older release
               two fake Ready nodes it creates with published slices; on a given cluster
               published slices only; its class (and slices, nodes) withdrawn at the end
namespaces     session: one fresh namespace for each test that uses `scene`, created up front
               so that one operator can be told all of them; deleted at the end
operator       session: the operator serving them: the deployed one once its leader renews
               its Lease, or `dra-operator run --namespace=...` started as a subprocess (as
               the RBAC-limited identity locally), stopped at the end
scene          per test: the next namespace, and the test's taints, pods and claims removed
               afterwards (the operator still running) so every device is free for the next

One operator for the whole session, as in a cluster where it is deployed: it also sees each
test's leftovers being cleaned up while the next test starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Generator
from pathlib import Path

import pytest
import yaml
from tests.support.controlplane import REAL_NODES, Spawned, running_control_plane
from tests.support.manifests import helm_path, kubectl_path, require_binary
from tests.support.operator import operator_args
from tests.support.skipping import skip_or_fail

from dra_operator import controlplane
from dra_operator.app import CLASSIC_VERSION, ServerInfo, discover
from dra_operator.errors import APINotFoundError
from dra_operator.kube import NAMESPACES, NODES, Client, load_kubeconfig
from e2e._driver import FakeDriver, inventory, new_driver, schedulable
from e2e._install import HELM, UPGRADE_TAG, Installer, image_archive, install_with, load_image
from e2e._scene import Scene
from e2e._target import DEPLOYED_LEASE, Target, choose, wait_for_leader

LEASE = "dra-operator"
LOCAL_NODES = 2  # fake Ready nodes on a local release without real ones
OLDEST_REAL_NODES = 36  # the oldest release whose kubelet e2e/controlplane builds
ROLLOUT_TIMEOUT = 300.0


def _real_nodes_locally() -> bool:
    """Locally, 1.36 and 1.37 run real nodes; older API servers get fake Ready nodes (their
    modules pin only kube-apiserver, and a newer kubelet may not talk to an older server)."""
    version = controlplane.find_binaries().directory.name
    return controlplane.minor_of(version) >= OLDEST_REAL_NODES


_OPERATOR_LOG = pytest.StashKey[Path]()
_INSTALLER = pytest.StashKey[Installer]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the log of the operator the suite started (or installed), when a test of a
    scene fails."""
    report = yield
    log = item.config.stash.get(_OPERATOR_LOG, None)
    uses_scene = "scene" in getattr(item, "fixturenames", ())
    if report.failed and uses_scene and log is not None and log.exists():
        lines = log.read_text(errors="replace").splitlines()
        report.sections.append(("dra-operator run (last lines)", "\n".join(lines[-60:])))
    installer = item.config.stash.get(_INSTALLER, None)
    if report.failed and uses_scene and installer is not None:
        report.sections.append(("the deployed operator's pods (kubectl logs)", installer.logs()))
    return report


_LAST = (".test_deployed", ".test_upgrade")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """test_deployed, then test_upgrade, last: they replace the install the other scenarios
    run against (test_upgrade with the previous release's, then upgrades it)."""

    def rank(item: pytest.Item) -> int:
        module = item.module.__name__ if item.module is not None else ""
        return next((i + 1 for i, end in enumerate(_LAST) if module.endswith(end)), 0)

    items.sort(key=rank)


def _installer(state: controlplane.ControlPlaneState, home: Path) -> Installer:
    helm = require_binary(helm_path(), "make helm")
    return Installer(kubectl_path(), helm, state.admin_kubeconfig, home)


@pytest.fixture(scope="session")
def deployed_control_plane(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Generator[controlplane.ControlPlaneState, None, None]:
    """The local control plane in_cluster, the image loaded into its nodes and deploy/
    applied with kubectl, as docs/install.md shows it; the Deployment rolled out."""
    if not _real_nodes_locally():
        pytest.fail("the deployed operator needs real nodes: Kubernetes 1.36+", pytrace=False)
    archive = image_archive()
    if not archive.is_file():
        skip_or_fail(f"no image at {archive}: run `make image`")
    directory = tmp_path_factory.mktemp("controlplane")
    with running_control_plane(directory, nodes=REAL_NODES, in_cluster=True) as state:
        installer = _installer(state, tmp_path_factory.mktemp("install"))
        request.config.stash[_INSTALLER] = installer
        load_image(state, archive, UPGRADE_TAG)
        if install_with(os.environ) == HELM:
            installer.helm_install({}, take_ownership=True)
        else:
            installer.apply_kustomize()
        try:
            installer.rollout_status(ROLLOUT_TIMEOUT)
        except AssertionError as exc:
            pytest.fail(f"{exc}\n{installer.logs()}", pytrace=False)
        yield state


@pytest.fixture(scope="session")
def installer(target: Target, tmp_path_factory: pytest.TempPathFactory) -> Installer:
    if not (target.deployed and target.local and target.control_plane is not None):
        pytest.skip(
            "needs the suite's own deployment: DRA_OPERATOR_E2E_OPERATOR=deployed, no KUBECONFIG"
        )
    return _installer(target.control_plane, tmp_path_factory.mktemp("helm"))


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Target:
    try:
        choice = choose(os.environ)
    except ValueError as exc:
        raise pytest.fail.Exception(str(exc), pytrace=False) from None
    if choice.kubeconfig is None and choice.deployed:
        state = request.getfixturevalue("deployed_control_plane")
        assert isinstance(state, controlplane.ControlPlaneState)
        return Target(
            kubeconfig=state.admin_kubeconfig,
            operator_kubeconfig=state.operator_kubeconfig,
            local=True,
            deployed=True,
            control_plane=state,
        )
    if choice.kubeconfig is None:
        real = _real_nodes_locally()
        state = request.getfixturevalue("node_control_plane" if real else "control_plane")
        assert isinstance(state, controlplane.ControlPlaneState)
        return Target(
            kubeconfig=state.admin_kubeconfig,
            operator_kubeconfig=state.operator_kubeconfig,
            local=True,
            deployed=False,
            control_plane=state if real else None,
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
async def served(e2e_api: Client) -> ServerInfo:
    """What the server serves, as the operator's discovery sees it."""
    return await discover(e2e_api)


def classic_only(served: ServerInfo) -> bool:
    """A v1alpha2 server (1.27-1.30): classic DRA only, no DeviceClasses or slices of ours."""
    return served.versions.get("resourceclaims") == CLASSIC_VERSION


@pytest.fixture(scope="session")
async def fake_driver(
    target: Target,
    e2e_api: Client,
    served: ServerInfo,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[FakeDriver]:
    own: list[str] = []
    real = target.real_nodes
    if classic_only(served):  # nodes only: classic drivers publish nothing (e2e/test_classic.py)
        session = uuid.uuid4().hex[:6]
        for index in range(LOCAL_NODES if target.local else 0):
            name = f"e2e-{session}-{index}"
            await controlplane.create_ready_node(e2e_api, name)
            own.append(name)
        yield new_driver(own)
        for name in own:
            with contextlib.suppress(APINotFoundError):
                await e2e_api.delete(NODES, name)
        return
    if real and target.control_plane is not None:
        driver = new_driver([n.name for n in real])
        devices = tmp_path_factory.mktemp("driver") / "inventory.yaml"
        devices.write_text(yaml.safe_dump(inventory(driver.name, driver.devices_per_node)))
        # The drivers run until the control plane goes down, like a DaemonSet's pods.
        await asyncio.to_thread(
            controlplane.start_drivers, target.control_plane.state_dir, devices, driver=driver.name
        )
        await driver.publish(e2e_api, served, slices=False)
    elif target.local:
        session = uuid.uuid4().hex[:6]
        for index in range(LOCAL_NODES):
            name = f"e2e-{session}-{index}"
            await controlplane.create_ready_node(e2e_api, name)
            own.append(name)
        driver = new_driver(own)
        await driver.publish(e2e_api, served)
    else:
        listed = (await e2e_api.list(NODES)).get("items") or []
        nodes = sorted(n["metadata"]["name"] for n in listed if schedulable(n))
        if not nodes:
            pytest.fail("no Ready, schedulable, untainted node in the cluster", pytrace=False)
        driver = new_driver(nodes)
        await driver.publish(e2e_api, served)
    yield driver
    await driver.withdraw(e2e_api, served)
    for name in own:
        with contextlib.suppress(APINotFoundError):
            await e2e_api.delete(NODES, name)


class Namespaces:
    """The session's test namespaces, handed out one per test."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self._next = 0

    def take(self) -> str:
        if self._next == len(self.names):
            pytest.fail("every e2e namespace is used: more scenes than collected", pytrace=False)
        self._next += 1
        return self.names[self._next - 1]


@pytest.fixture(scope="session")
async def namespaces(request: pytest.FixtureRequest, e2e_api: Client) -> AsyncIterator[Namespaces]:
    count = sum("scene" in getattr(i, "fixturenames", ()) for i in request.session.items)
    names = [f"e2e-{uuid.uuid4().hex[:10]}" for _ in range(max(count, 1))]
    for name in names:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        await e2e_api.create(NAMESPACES, body)
    yield Namespaces(names)
    for name in names:
        with contextlib.suppress(APINotFoundError):
            await e2e_api.delete(NAMESPACES, name)


def _start_operator(target: Target, names: list[str], identity: str, log: Path) -> Spawned:
    """`dra-operator run` for `names` only, its Lease in the first: the controllers the
    cluster does not already run (it detects kube-controller-manager itself)."""
    program = Path(sys.executable).with_name("dra-operator")
    argv = operator_args(str(target.operator_kubeconfig), names[0], identity)
    argv += [f"--namespace={name}" for name in names[1:]]
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


@pytest.fixture(scope="session")
async def operator(
    request: pytest.FixtureRequest,
    target: Target,
    e2e_api: Client,
    namespaces: Namespaces,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[str]:
    """The leader's identity, once it leads."""
    if target.deployed:
        yield await wait_for_leader(e2e_api, *DEPLOYED_LEASE, timeout=120.0)
        return
    log = tmp_path_factory.mktemp("operator") / "dra-operator.log"
    request.config.stash[_OPERATOR_LOG] = log
    identity = f"e2e-{namespaces.names[0]}"
    spawned = _start_operator(target, namespaces.names, identity, log)

    def running() -> None:
        if spawned.proc.poll() is not None:
            pytest.fail(f"dra-operator run exited:\n{spawned.output()}", pytrace=False)

    try:
        lease_namespace = namespaces.names[0]
        yield await wait_for_leader(
            e2e_api, lease_namespace, LEASE, identity=identity, check=running
        )
    finally:
        _stop_operator(spawned)


@pytest.fixture
async def scene(
    request: pytest.FixtureRequest,
    target: Target,
    e2e_api: Client,
    served: ServerInfo,
    fake_driver: FakeDriver,
    namespaces: Namespaces,
    operator: str,
) -> AsyncIterator[Scene]:
    if classic_only(served) and request.node.get_closest_marker("classic") is None:
        pytest.skip(f"{served.git_version} serves resource.k8s.io/v1alpha2 only: classic DRA")
    world = Scene(
        e2e_api,
        namespaces.take(),
        fake_driver,
        target.kubeconfig,
        served,
        real_nodes=target.real_nodes,
    )
    try:
        yield world
    finally:
        await world.clean_up()
