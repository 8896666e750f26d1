"""`dra-operator controlplane up|down|status|env`: the local control plane from the terminal.

A thin shell over `dra_operator.controlplane`: parse options, show progress with rich, turn a
ControlPlaneError into its message, the failing process's last log lines and exit status 1.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console

from dra_operator import controlplane
from dra_operator.errors import ControlPlaneError, DRAOperatorError
from dra_operator.kube import Client

__all__ = ["command", "find_rbac_dir", "start"]

_console = Console(stderr=True, soft_wrap=True)

_state_dir_option = click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="DRA_OPERATOR_STATE_DIR",
    default=None,
    help="Where PKI, data, logs and kubeconfigs live "
    "[default: $XDG_STATE_HOME/dra-operator/controlplane].",
)


def _state_dir(value: Path | None) -> Path:
    return value or controlplane.default_state_dir()


def find_rbac_dir(start: Path | None = None) -> Path | None:
    """deploy/base of the source tree containing `start` (the current directory), if any."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "deploy" / "base"
        if (candidate / "kustomization.yaml").is_file():
            return candidate
    return None


@click.group("controlplane")
def command() -> None:
    """A local etcd + kube-apiserver with every DRA API and feature gate on."""


@command.command("up")
@_state_dir_option
@click.option(
    "--bin-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory of the upstream binaries [default: $DRA_OPERATOR_K8S_BIN, "
    "else the build cache of --version].",
)
@click.option(
    "--version",
    "version",
    type=click.Choice([f"1.{minor}" for minor in sorted(controlplane.PINNED)]),
    envvar="DRA_OPERATOR_K8S_VERSION",
    default=f"1.{controlplane.minor_of(controlplane.K8S_VERSION)}",
    show_default=True,
    help="Kubernetes release to run (its pinned patch, built by `make controlplane`).",
)
@click.option(
    "--rbac",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="ClusterRole manifest or kustomize dir bound to the operator identity "
    "[default: deploy/base of the enclosing source tree].",
)
@click.option(
    "--with-upstream",
    is_flag=True,
    help="Also start kube-scheduler and kube-controller-manager (with their DRA controllers).",
)
@click.option(
    "--nodes",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Real nodes to start: each a kubelet with its own containerd (needs root, "
    "`make node-runtime node-packages`).",
)
@click.option(
    "--in-cluster",
    is_flag=True,
    help="Make the nodes able to run the operator's Deployment (docs/install.md): "
    "kube-scheduler, service-account tokens, Deployments, and the `kubernetes` Service "
    "reachable from pods; needs --nodes.",
)
@click.option(
    "--devices",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Run the simulated DRA driver (`dra-operator driver`) on every node with this "
    "device inventory (docs/driver.md); needs --nodes.",
)
@click.option(
    "--timeout",
    type=float,
    default=90.0,
    show_default=True,
    help="Seconds to wait for /readyz (and for each node).",
)
def up_command(
    state_dir: Path | None,
    bin_dir: Path | None,
    version: str,
    rbac: Path | None,
    with_upstream: bool,
    nodes: int,
    in_cluster: bool,
    devices: Path | None,
    timeout: float,
) -> None:
    """Start the control plane and wait until it is ready."""
    if devices is not None and not nodes:
        raise click.UsageError("--devices needs real nodes: pass --nodes N")
    if in_cluster and not nodes:
        raise click.UsageError("--in-cluster needs real nodes: pass --nodes N")
    start(
        state_dir=_state_dir(state_dir),
        bin_dir=bin_dir,
        version=version,
        rbac=rbac or find_rbac_dir(),
        with_upstream=with_upstream,
        nodes=nodes,
        in_cluster=in_cluster,
        devices=devices,
        timeout=timeout,
    )


def start(
    *,
    state_dir: Path,
    bin_dir: Path | None = None,
    version: str | None = None,
    rbac: Path | None = None,
    with_upstream: bool = False,
    nodes: int = 0,
    in_cluster: bool = False,
    devices: Path | None = None,
    timeout: float = 90.0,
) -> controlplane.ControlPlaneState:
    """Start, bind the operator identity to `rbac`, start the simulated driver on every node
    with inventory `devices`, print a summary; exit 1 on failure."""
    try:
        binaries = controlplane.find_binaries(bin_dir, version)
    except ControlPlaneError as exc:
        _fail(exc)
    started = time.monotonic()
    try:
        with _console.status("starting the control plane") as status:
            state = controlplane.up(
                state_dir=state_dir,
                binaries=binaries,
                with_upstream=with_upstream,
                nodes=nodes,
                node_binaries=controlplane.find_node_binaries() if nodes else None,
                in_cluster=in_cluster,
                timeout=timeout,
                progress=lambda message: status.update(message),
            )
            ready = time.monotonic() - started
            if rbac is not None:
                status.update(f"binding {controlplane.OPERATOR_USER} to the ClusterRole in {rbac}")
                roles = controlplane.load_cluster_roles(rbac, binaries.path("kubectl"))
                asyncio.run(_bind(state.admin_kubeconfig, roles))
            if devices is not None:
                state = controlplane.start_drivers(
                    state_dir,
                    devices,
                    timeout=timeout,
                    progress=lambda message: status.update(message),
                )
    except ControlPlaneError as exc:
        controlplane.down(state_dir)
        _fail(exc)
    except DRAOperatorError as exc:
        controlplane.down(state_dir)
        _fail(exc)
    _console.print(
        f"[green]control plane {state.version} ready[/] in {ready:.1f}s at {state.server}"
    )
    for component in state.components:
        _console.print(f"  {component.name:<24} pid {component.pid}")
    for node in state.nodes:
        _console.print(f"  node {node.name:<19} {node.address}, pods in {node.pod_subnet}")
    if rbac is None:
        _console.print(
            f"[yellow]no deploy/base found: {controlplane.OPERATOR_USER} has no RBAC bound[/]"
        )
    _console.print(f"admin:    export KUBECONFIG={shlex.quote(str(state.admin_kubeconfig))}")
    _console.print(f"operator: export KUBECONFIG={shlex.quote(str(state.operator_kubeconfig))}")
    return state


async def _bind(admin_kubeconfig: Path, roles: list[dict[str, object]]) -> None:
    async with Client.from_kubeconfig(admin_kubeconfig) as admin:
        await controlplane.bind_cluster_roles(admin, roles, controlplane.OPERATOR_USER)


def _fail(exc: DRAOperatorError) -> NoReturn:
    _console.print(f"[red]error:[/] {exc}")
    tail = getattr(exc, "log_tail", "")
    if tail:
        _console.print("[bold]last log lines:[/]")
        _console.print(tail, markup=False, highlight=False)
    raise SystemExit(1)


@command.command("down")
@_state_dir_option
def down_command(state_dir: Path | None) -> None:
    """Stop every process `up` started, by process id."""
    stopped = controlplane.down(_state_dir(state_dir), progress=_console.print)
    _console.print(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running")


@command.command("status")
@_state_dir_option
def status_command(state_dir: Path | None) -> None:
    """Show what runs; exit status 1 unless every component runs."""
    state = controlplane.read_state(_state_dir(state_dir))
    if state is None or not state.components:
        _console.print("not running")
        raise SystemExit(1)
    _console.print(f"kubernetes {state.version} at {state.server} (etcd {state.etcd_url})")
    healthy = True
    for component in state.components:
        alive = component.is_running()
        healthy &= alive
        mark = "[green]running[/]" if alive else "[red]stopped[/]"
        _console.print(f"  {component.name:<24} pid {component.pid:<8} {mark}  {component.log}")
    if not healthy:
        raise SystemExit(1)


@command.command("load-image")
@_state_dir_option
@click.argument(
    "archives",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
def load_image_command(state_dir: Path | None, archives: tuple[Path, ...]) -> None:
    """Import image tarballs (docker-archive or OCI, e.g. `docker save` output) into every
    real node's containerd: the nodes reach no registry."""
    state = controlplane.read_state(_state_dir(state_dir))
    if state is None or not state.nodes:
        _console.print("no real nodes: run `dra-operator controlplane up --nodes N` first")
        raise SystemExit(1)
    node_binaries = controlplane.find_node_binaries()
    try:
        for node in state.nodes:
            for archive in archives:
                controlplane.import_image(node, node_binaries, archive)
                _console.print(f"{node.name}: imported {archive}")
    except ControlPlaneError as exc:
        _fail(exc)


@command.command("env")
@_state_dir_option
@click.option("--operator", "as_operator", is_flag=True, help="The RBAC-limited operator identity.")
def env_command(state_dir: Path | None, as_operator: bool) -> None:
    """Print `export KUBECONFIG=...` for `eval $(dra-operator controlplane env)`."""
    state = controlplane.read_state(_state_dir(state_dir))
    if state is None:
        _console.print("not running: run `dra-operator controlplane up` first")
        raise SystemExit(1)
    path = state.operator_kubeconfig if as_operator else state.admin_kubeconfig
    click.echo(f"export KUBECONFIG={shlex.quote(str(path))}")
