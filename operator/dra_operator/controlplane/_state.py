"""What `up` started, persisted as state.json, and starting one more process into it.

The state file is rewritten after every process start, so a half-finished `up` can still be
taken down; real nodes add what `down` must give back to the host (bridges, cgroups, mounts).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dra_operator.controlplane._processes import (
    is_running,
    log_tail,
    probe_http,
    start_process,
    wait_until,
)
from dra_operator.errors import ControlPlaneError

__all__ = [
    "STATE_FILE",
    "Component",
    "ControlPlaneState",
    "NodeState",
    "read_state",
    "start_component",
    "wait_healthy",
    "wait_ready",
]

STATE_FILE = "state.json"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeState:
    """One real node: its kubelet's name and address, and what it holds on the host.

    `directory` (in the state dir) holds configs, credentials and containerd's data;
    `run_dir` (under /run/dra-operator) its sockets and the kubelet's root."""

    name: str
    directory: str
    run_dir: str
    address: str
    pod_subnet: str
    bridge: str
    cgroup_root: str

    @property
    def containerd_socket(self) -> Path:
        return Path(self.run_dir) / "containerd.sock"

    @property
    def cdi_dir(self) -> Path:
        """Where a DRA driver on this node writes its CDI specs (containerd reads them)."""
        return Path(self.directory) / "cdi"

    @property
    def kubelet_dir(self) -> Path:
        """The kubelet's --root-dir (plugins_registry/ and plugins/ live there): under the
        short `run_dir`, as unix socket paths are limited to ~100 bytes."""
        return Path(self.run_dir) / "kubelet"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Component:
    """One started process: what it is, its pid, where it logs, and how it was started
    (`argv`, so `restart` can start it again as it was)."""

    name: str
    pid: int
    binary: str
    log: str
    argv: tuple[str, ...] = ()

    def is_running(self) -> bool:
        return is_running(self.pid, self.binary)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ControlPlaneState:
    """What `up` started and where to reach it; persisted as state.json."""

    state_dir: Path
    version: str = ""
    server: str = ""
    etcd_url: str = ""
    components: tuple[Component, ...] = ()
    nodes: tuple[NodeState, ...] = ()

    @property
    def admin_kubeconfig(self) -> Path:
        return self.state_dir / "admin.kubeconfig"

    @property
    def operator_kubeconfig(self) -> Path:
        return self.state_dir / "operator.kubeconfig"

    @property
    def ca_file(self) -> Path:
        return self.state_dir / "pki" / "ca.crt"

    def with_component(self, component: Component) -> ControlPlaneState:
        return dataclasses.replace(self, components=(*self.components, component))

    def save(self) -> None:
        doc = {
            "version": self.version,
            "server": self.server,
            "etcdURL": self.etcd_url,
            "components": [dataclasses.asdict(c) for c in self.components],
            "nodes": [dataclasses.asdict(n) for n in self.nodes],
        }
        tmp = self.state_dir / f"{STATE_FILE}.tmp"
        tmp.write_text(json.dumps(doc, indent=2) + "\n")
        tmp.replace(self.state_dir / STATE_FILE)


def read_state(state_dir: Path) -> ControlPlaneState | None:
    """The state `up` left in `state_dir`, or None when nothing was started there."""
    try:
        doc: dict[str, Any] = json.loads((state_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return ControlPlaneState(
        state_dir=state_dir,
        version=doc.get("version", ""),
        server=doc.get("server", ""),
        etcd_url=doc.get("etcdURL", ""),
        components=tuple(
            Component(**{**c, "argv": tuple(c.get("argv", ()))}) for c in doc.get("components", [])
        ),
        nodes=tuple(NodeState(**n) for n in doc.get("nodes", [])),
    )


def start_component(state: ControlPlaneState, name: str, argv: list[str]) -> ControlPlaneState:
    """Start `argv` logging to logs/`name`.log, and record it before anything else can fail."""
    log = state.state_dir / "logs" / f"{name}.log"
    pid = start_process(argv, log)
    component = Component(name=name, pid=pid, binary=argv[0], log=str(log), argv=tuple(argv))
    state = state.with_component(component)
    state.save()
    return state


def wait_ready(
    state: ControlPlaneState, name: str, ready: Callable[[], bool], timeout: float
) -> None:
    """Until component `name` is `ready`; a ControlPlaneError with its last log lines if it
    exits or is not ready in time."""
    component = next(c for c in state.components if c.name == name)
    exited = False

    def done() -> bool:
        nonlocal exited
        exited = not component.is_running()
        return exited or ready()

    if wait_until(done, timeout, interval=0.25) and not exited:
        return
    why = "exited" if exited else f"was not ready after {timeout:.0f}s"
    raise ControlPlaneError(
        f"{name} {why} (log: {component.log})", log_tail=log_tail(Path(component.log))
    )


def wait_healthy(
    state: ControlPlaneState,
    name: str,
    url: str,
    context: ssl.SSLContext | None,
    timeout: float,
) -> None:
    """Until component `name` answers 200 at `url`."""
    wait_ready(state, name, functools.partial(probe_http, url, context), timeout)
