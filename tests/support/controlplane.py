"""pytest plugin: a real kube-apiserver + etcd for integration and e2e tests.

Fixtures:
  control_plane   session-scoped; started once through dra_operator.controlplane, with the
                  operator identity bound to deploy/base's ClusterRole (read from the file)
  node_control_plane  the same with REAL_NODES real nodes (kubelet + containerd each); needs
                  root and `make node-runtime node-packages`
  admin_api       raw-JSON client as `admin` (system:masters)
  operator_api    raw-JSON client as the `dra-operator` user: only deploy/'s RBAC
  namespace       a fresh namespace per test (namespaces never finish deleting without KCM,
                  so none is reused)
  make_node       async factory of fake Ready Nodes; deleted after the test
  cluster         async factory of cluster-scoped objects (classes, slices); deleted after
  operator_env    environment for a subprocess running under the operator kubeconfig
  spawn           start a command (e.g. `dra-operator run`) as a subprocess under that
                  environment; returns a `Spawned` (process + log); terminated after the test

Tests that use these carry the `controlplane` marker. Without the binaries they skip, except
under CI=true, where they fail: a broken build must not pass as skipped tests.

`--k8s-version 1.3x` (any pinned minor; or $DRA_OPERATOR_K8S_VERSION; default the primary
release) picks the pinned release every control plane of the session runs, so CI runs the
suites once per release.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.support.skipping import skip_or_fail

from dra_operator import controlplane
from dra_operator.errors import APINotFoundError, ControlPlaneError
from dra_operator.kube import NAMESPACES, NODES, Client

REPO = Path(__file__).resolve().parents[2]
RBAC_DIR = REPO / "deploy" / "base"

NodeFactory = Callable[..., Awaitable[dict[str, Any]]]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--k8s-version",
        default=None,
        choices=[f"1.{minor}" for minor in sorted(controlplane.PINNED)],
        help="Kubernetes release of the control planes [default: $DRA_OPERATOR_K8S_VERSION, "
        f"else {controlplane.K8S_VERSION}]",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Export the chosen release, so every `find_binaries()` and subprocess of the run uses it."""
    chosen = config.getoption("--k8s-version")
    if chosen:
        os.environ["DRA_OPERATOR_K8S_VERSION"] = chosen


def pytest_report_header() -> str:
    try:
        return f"kubernetes control plane: {controlplane.find_binaries().directory}"
    except ControlPlaneError as exc:
        return f"kubernetes control plane: {exc}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reaches the control plane, so `-m "not controlplane"` is exact."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "control_plane" in names or "node_control_plane" in names:
            item.add_marker(pytest.mark.controlplane)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Iterator[None] | Any:
    """Attach the apiserver's last log lines to a failed test that used the control plane."""
    report = yield
    state = getattr(item, "funcargs", {}).get("control_plane")
    if report.failed and isinstance(state, controlplane.ControlPlaneState):
        for component in state.components:
            if component.name == "kube-apiserver":
                lines = Path(component.log).read_text(errors="replace").splitlines()
                tail = "\n".join(lines[-40:])
                report.sections.append(("kube-apiserver log (last lines)", tail))
    return report


ON_DEMAND_BEFORE = 36
"""Releases older than this pin kube-scheduler and kube-controller-manager (1.34, 1.35) but
build them only when named."""


def require_binaries(binaries: controlplane.Binaries, *names: str) -> None:
    """Skip the test without these binaries (fail under CI=true), naming the command that
    builds them: kube-scheduler and kube-controller-manager of 1.34 and 1.35 are built only on
    demand (e2e/controlplane/build.sh), not by `make controlplane`."""
    missing = [name for name in names if not binaries.has(name)]
    if not missing:
        return
    how = "make controlplane"
    release = binaries.directory.name
    if release.startswith("v1.") and controlplane.minor_of(release) < ON_DEMAND_BEFORE:
        how = f"bash e2e/controlplane/build.sh {release} {' '.join(missing)}"
    skip_or_fail(f"{', '.join(missing)} not in {binaries.directory}: run `{how}`")


REAL_NODES = 2
"""How many real nodes (kubelet + containerd) `node_control_plane` starts: the e2e suite's."""


@contextlib.contextmanager
def running_control_plane(
    state_dir: Path,
    apiserver_args: Sequence[str] = (),
    *,
    nodes: int = 0,
    in_cluster: bool = False,
) -> Iterator[controlplane.ControlPlaneState]:
    """A control plane of its own in `state_dir` (with `nodes` real nodes, able to run the
    operator's Deployment with `in_cluster`), the operator identity bound to deploy/'s
    ClusterRole; taken down on exit. The chaos tests start private ones to restart."""
    binaries = controlplane.find_binaries()
    needed = (
        "etcd",
        "kube-apiserver",
        "kubectl",
        *(("kubelet", "kube-controller-manager") if nodes else ()),
        *(("kube-scheduler",) if in_cluster else ()),
    )
    for name in needed:
        if not binaries.has(name):
            skip_or_fail(f"{name} not in {binaries.directory}: run `make controlplane`")
    node_binaries = controlplane.find_node_binaries() if nodes else None
    if node_binaries is not None:
        missing = node_binaries.missing()
        if missing:
            skip_or_fail(f"real nodes need: {', '.join(missing)}")
        if os.geteuid() != 0:
            skip_or_fail("real nodes need root (bridges, cgroups, mounts)")
    try:
        state = controlplane.up(
            state_dir=state_dir,
            binaries=binaries,
            apiserver_args=apiserver_args,
            nodes=nodes,
            node_binaries=node_binaries,
            in_cluster=in_cluster,
            timeout=120.0 if nodes else 90.0,
        )
    except ControlPlaneError as exc:
        pytest.fail(f"{exc}\n{exc.log_tail}", pytrace=False)
    try:
        bind_operator_rbac(state, binaries)
        yield state
    finally:
        controlplane.down(state_dir)


@pytest.fixture(scope="session")
def control_plane(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[controlplane.ControlPlaneState]:
    with running_control_plane(tmp_path_factory.mktemp("controlplane")) as state:
        yield state


@pytest.fixture(scope="session")
def node_control_plane(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[controlplane.ControlPlaneState]:
    """Another control plane, with REAL_NODES real nodes: the kubelets run what is bound."""
    with running_control_plane(tmp_path_factory.mktemp("controlplane"), nodes=REAL_NODES) as state:
        yield state


def bind_operator_rbac(
    state: controlplane.ControlPlaneState, binaries: controlplane.Binaries
) -> None:
    """Bind the operator identity to deploy/base's ClusterRole(s), from a sync fixture."""
    roles = controlplane.load_cluster_roles(RBAC_DIR, binaries.path("kubectl"))
    # In a thread of its own: asyncio.run here would detach the session loop that
    # pytest-asyncio set on this thread, leaving it unclosed.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _bind(state, roles)).result()


async def _bind(state: controlplane.ControlPlaneState, roles: list[dict[str, Any]]) -> None:
    async with Client.from_kubeconfig(state.admin_kubeconfig) as admin:
        await controlplane.bind_cluster_roles(admin, roles, controlplane.OPERATOR_USER)


@pytest.fixture(scope="session")
async def admin_api(control_plane: controlplane.ControlPlaneState) -> AsyncIterator[Client]:
    async with Client.from_kubeconfig(control_plane.admin_kubeconfig) as api:
        yield api


@pytest.fixture(scope="session")
async def operator_api(control_plane: controlplane.ControlPlaneState) -> AsyncIterator[Client]:
    async with Client.from_kubeconfig(control_plane.operator_kubeconfig) as api:
        yield api


@pytest.fixture
async def namespace(admin_api: Client) -> AsyncIterator[str]:
    name = f"t-{uuid.uuid4().hex[:10]}"
    await admin_api.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    yield name
    await admin_api.delete(NAMESPACES, name)


@pytest.fixture
async def make_node(admin_api: Client) -> AsyncIterator[NodeFactory]:
    """Create Nodes that look Ready: capacity, a Ready condition, and no not-ready taint."""
    created: list[str] = []

    async def make(
        name: str | None = None,
        *,
        labels: Mapping[str, str] | None = None,
        capacity: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        node_name = name or f"node-{uuid.uuid4().hex[:8]}"
        created.append(node_name)
        return await controlplane.create_ready_node(
            admin_api, node_name, labels=labels, capacity=capacity
        )

    yield make
    for node_name in created:
        with contextlib.suppress(APINotFoundError):
            await admin_api.delete(NODES, node_name)


@pytest.fixture
async def cluster(admin_api: Client) -> AsyncIterator[Callable[..., Any]]:
    """Creates cluster-scoped objects (classes, slices) and deletes them after the test."""
    created: list[tuple[Any, str]] = []

    async def create(resource: Any, body: dict[str, Any]) -> dict[str, Any]:
        answer = await admin_api.create(resource, body)
        created.append((resource, answer["metadata"]["name"]))
        return answer

    yield create
    for resource, name in reversed(created):
        with contextlib.suppress(APINotFoundError):
            await admin_api.delete(resource, name)


@pytest.fixture
def operator_env(control_plane: controlplane.ControlPlaneState) -> dict[str, str]:
    """os.environ with KUBECONFIG pointing at the operator identity."""
    return {**os.environ, "KUBECONFIG": str(control_plane.operator_kubeconfig)}


@dataclasses.dataclass
class Spawned:
    """A command started by `spawn`: its process and the file its output goes to."""

    proc: subprocess.Popen[bytes]
    log: Path

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout=timeout)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def events(self, event: str) -> list[dict[str, Any]]:
        """The JSON log lines (as the operator writes them off a terminal) of this `event`."""
        found = []
        for line in self.output().splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                if entry.get("event") == event:
                    found.append(entry)
        return found


@pytest.fixture
def spawn(operator_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Spawned]]:
    """Start commands under the operator identity; they are stopped after the test.

    `spawn("dra-operator", "run", ...)` resolves a console script next to this Python first,
    so the subprocess runs the code under test. stdout and stderr go to `Spawned.log`.
    """
    started: list[Spawned] = []

    def start(*argv: str, env: Mapping[str, str] | None = None) -> Spawned:
        program = argv[0]
        if os.sep not in program and Path(sys.executable).with_name(program).exists():
            program = str(Path(sys.executable).with_name(program))
        command = [program, *argv[1:]]
        log = tmp_path / f"{Path(argv[0]).name}-{len(started)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                command,
                env={**operator_env, **(env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        started.append(Spawned(proc, log))
        return started[-1]

    yield start
    for spawned in started:
        if spawned.proc.poll() is None:
            spawned.proc.terminate()
            try:
                spawned.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                spawned.proc.kill()
                spawned.proc.wait(timeout=10)
