"""A real local control plane: etcd + kube-apiserver (+ kube-scheduler, kube-controller-manager).

`up` generates fresh credentials, starts the processes on 127.0.0.1 with free ports and waits
until each one answers its health endpoint; `down` stops them by pid. Everything lives in one
state directory: PKI, etcd data, logs, the `admin` and `operator` kubeconfigs and `state.json`,
which is rewritten after every process start so a half-finished `up` can still be taken down.
A failed `up` stops whatever it started before raising.

The apiserver runs with RBAC, every resource.k8s.io version and every DRA gate of its release
on (`_features`), and the flags the upstream integration framework uses for a controller-less
apiserver (test-infra.md §3.3): no ServiceAccount admission, no endpoint reconciler, and no
`--advertise-address` (loopback advertise addresses are rejected).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import shutil
import ssl
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from dra_operator.controlplane._binaries import Binaries, minor_of
from dra_operator.controlplane._features import release_flags
from dra_operator.controlplane._pki import (
    CertifiedKey,
    issue_client_cert,
    issue_serving_cert,
    new_ca,
    new_sa_key,
)
from dra_operator.controlplane._processes import (
    free_port,
    is_running,
    log_tail,
    probe_http,
    start_process,
    stop_process,
    wait_until,
)
from dra_operator.errors import ControlPlaneError

__all__ = [
    "ADMIN_USER",
    "OPERATOR_USER",
    "Component",
    "ControlPlaneState",
    "default_state_dir",
    "down",
    "read_state",
    "restart",
    "up",
]

ADMIN_USER = "admin"
OPERATOR_USER = "dra-operator"
# The identities kubeadm gives kube-scheduler and kube-controller-manager: the apiserver's
# bootstrap RBAC binds them to system:kube-scheduler / system:kube-controller-manager.
UPSTREAM_USERS = {
    "kube-scheduler": "system:kube-scheduler",
    "kube-controller-manager": "system:kube-controller-manager",
}
_ETCD_TIMEOUT = 30.0
_STATE_FILE = "state.json"

Progress = Callable[[str], None]


def default_state_dir() -> Path:
    """$XDG_STATE_HOME/dra-operator/controlplane, defaulting to ~/.local/state/..."""
    root = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(root) / "dra-operator" / "controlplane"


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
        }
        tmp = self.state_dir / f"{_STATE_FILE}.tmp"
        tmp.write_text(json.dumps(doc, indent=2) + "\n")
        tmp.replace(self.state_dir / _STATE_FILE)


def read_state(state_dir: Path) -> ControlPlaneState | None:
    """The state `up` left in `state_dir`, or None when nothing was started there."""
    try:
        doc: dict[str, Any] = json.loads((state_dir / _STATE_FILE).read_text())
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
    )


def restart(state: ControlPlaneState, name: str, *, start: bool = True) -> ControlPlaneState:
    """Stop one component (SIGTERM, as a node shutdown would) and start it again as it was.

    `start=False` only stops it; a later `restart` starts it again. Tests use this to take
    kube-controller-manager away and bring it back under a running operator.
    """
    component = next(c for c in state.components if c.name == name)
    stop_process(component.pid, component.binary)
    others = tuple(c for c in state.components if c.name != name)
    state = dataclasses.replace(state, components=others)
    if start:
        state = _start(state, name, list(component.argv))
    else:
        state = state.with_component(dataclasses.replace(component, pid=0))
    state.save()
    return state


def down(state_dir: Path, progress: Progress = lambda _: None) -> list[str]:
    """Stop every process `up` started in `state_dir`, newest first; the names stopped."""
    state = read_state(state_dir)
    if state is None:
        return []
    stopped = []
    for component in reversed(state.components):
        progress(f"stopping {component.name} (pid {component.pid})")
        if stop_process(component.pid, component.binary):
            stopped.append(component.name)
    (state_dir / _STATE_FILE).unlink(missing_ok=True)
    shutil.rmtree(state_dir / "etcd-data", ignore_errors=True)
    return stopped


def up(
    *,
    state_dir: Path,
    binaries: Binaries,
    with_upstream: bool = False,
    apiserver_args: Sequence[str] = (),
    upstream_args: Mapping[str, Sequence[str]] | None = None,
    timeout: float = 90.0,
    progress: Progress = lambda _: None,
) -> ControlPlaneState:
    """Start the control plane in `state_dir` and wait until it is ready.

    `apiserver_args` are appended to kube-apiserver's flags, `upstream_args[name]` to those of
    kube-scheduler and kube-controller-manager (the benchmarks add an audit log and QPS).

    Raises ControlPlaneError (with the failing process's last log lines) after stopping
    whatever it had started.
    """
    previous = read_state(state_dir)
    if previous is not None and any(c.is_running() for c in previous.components):
        raise ControlPlaneError(
            f"a control plane is already running in {state_dir}: "
            "run `dra-operator controlplane down` first"
        )
    apiserver = binaries.require("kube-apiserver")
    etcd = binaries.require("etcd")
    upstream = (
        (binaries.require("kube-scheduler"), binaries.require("kube-controller-manager"))
        if with_upstream
        else None
    )
    version = binaries.kubernetes_version()
    release = release_flags(minor_of(version))
    _reset(state_dir)
    state = ControlPlaneState(state_dir=state_dir, version=version)
    state.save()
    try:
        progress("generating certificates")
        pki = _write_pki(state_dir / "pki")
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        state = dataclasses.replace(
            state,
            server=f"https://127.0.0.1:{api_port}",
            etcd_url=f"http://127.0.0.1:{etcd_port}",
        )
        progress(f"starting etcd on 127.0.0.1:{etcd_port}")
        state = _start(state, "etcd", _etcd_args(etcd, state_dir, etcd_port, peer_port))
        _wait_healthy(state, "etcd", f"{state.etcd_url}/health", None, _ETCD_TIMEOUT)
        progress(f"starting kube-apiserver {version} on {state.server}")
        args = _apiserver_args(apiserver, state_dir, etcd_port, api_port)
        args += [
            f"--feature-gates={release.feature_gates_flag()}",
            f"--runtime-config={release.runtime_config_flag()}",
            *apiserver_args,
        ]
        state = _start(state, "kube-apiserver", args)
        ca_context = ssl.create_default_context(cafile=str(state.ca_file))
        _wait_healthy(state, "kube-apiserver", f"{state.server}/readyz", ca_context, timeout)
        _write_kubeconfig(state.admin_kubeconfig, state.server, pki["ca"], pki["admin"], ADMIN_USER)
        _write_kubeconfig(
            state.operator_kubeconfig, state.server, pki["ca"], pki["operator"], OPERATOR_USER
        )
        for name, user in UPSTREAM_USERS.items():
            path = state_dir / f"{name}.kubeconfig"
            _write_kubeconfig(path, state.server, pki["ca"], pki[name], user)
        if upstream is not None:
            state = _start_upstream(
                state,
                upstream,
                release.feature_gates_flag(),
                upstream_args or {},
                timeout,
                progress,
            )
    except BaseException:
        down(state_dir)
        raise
    return state


def _reset(state_dir: Path) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    for name in ("pki", "etcd-data", "logs", "upstream-certs"):
        shutil.rmtree(state_dir / name, ignore_errors=True)
    kubeconfigs = [f"{name}.kubeconfig" for name in ("admin", "operator", *UPSTREAM_USERS)]
    for name in (*kubeconfigs, _STATE_FILE):
        (state_dir / name).unlink(missing_ok=True)


def _write_pki(pki: Path) -> dict[str, CertifiedKey]:
    pki.mkdir(parents=True, mode=0o700)
    ca = new_ca()
    pairs = {
        "ca": ca,
        "serving": issue_serving_cert(ca),
        "admin": issue_client_cert(ca, ADMIN_USER, ["system:masters"]),
        "operator": issue_client_cert(ca, OPERATOR_USER),
        **{name: issue_client_cert(ca, user) for name, user in UPSTREAM_USERS.items()},
    }
    for name, pair in pairs.items():
        (pki / f"{name}.crt").write_bytes(pair.cert_pem)
        _write_private(pki / f"{name}.key", pair.key_pem)
    sa_private, sa_public = new_sa_key()
    _write_private(pki / "sa.key", sa_private)
    (pki / "sa.pub").write_bytes(sa_public)
    return pairs


def _write_private(path: Path, data: bytes) -> None:
    path.touch(mode=0o600)
    path.write_bytes(data)


def _etcd_args(etcd: Path, state_dir: Path, port: int, peer_port: int) -> list[str]:
    peer = f"http://127.0.0.1:{peer_port}"
    client = f"http://127.0.0.1:{port}"
    return [
        str(etcd),
        "--name=default",
        f"--data-dir={state_dir / 'etcd-data'}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=default={peer}",
        "--unsafe-no-fsync=true",
        "--log-level=warn",
    ]


def _apiserver_args(apiserver: Path, state_dir: Path, etcd_port: int, port: int) -> list[str]:
    pki = state_dir / "pki"
    return [
        str(apiserver),
        f"--etcd-servers=http://127.0.0.1:{etcd_port}",
        f"--secure-port={port}",
        "--bind-address=127.0.0.1",
        f"--cert-dir={pki}",
        f"--tls-cert-file={pki / 'serving.crt'}",
        f"--tls-private-key-file={pki / 'serving.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        "--authorization-mode=RBAC",
        f"--service-account-issuer=https://127.0.0.1:{port}",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        "--service-cluster-ip-range=10.0.0.0/24",
        "--allow-privileged=true",
        "--disable-admission-plugins=ServiceAccount",
        "--endpoint-reconciler-type=none",
    ]


def _start(state: ControlPlaneState, name: str, argv: list[str]) -> ControlPlaneState:
    log = state.state_dir / "logs" / f"{name}.log"
    pid = start_process(argv, log)
    component = Component(name=name, pid=pid, binary=argv[0], log=str(log), argv=tuple(argv))
    state = state.with_component(component)
    state.save()
    return state


def _wait_healthy(
    state: ControlPlaneState,
    name: str,
    url: str,
    context: ssl.SSLContext | None,
    timeout: float,
) -> None:
    component = next(c for c in state.components if c.name == name)
    exited = False

    def ready() -> bool:
        nonlocal exited
        exited = not component.is_running()
        return exited or probe_http(url, context)

    if wait_until(ready, timeout, interval=0.25) and not exited:
        return
    why = "exited" if exited else f"was not ready after {timeout:.0f}s"
    raise ControlPlaneError(
        f"{name} {why} (log: {component.log})", log_tail=log_tail(Path(component.log))
    )


def _write_kubeconfig(
    path: Path, server: str, ca: CertifiedKey, client: CertifiedKey, user: str
) -> None:
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "dra-operator-local",
                "cluster": {"server": server, "certificate-authority-data": b64(ca.cert_pem)},
            }
        ],
        "users": [
            {
                "name": user,
                "user": {
                    "client-certificate-data": b64(client.cert_pem),
                    "client-key-data": b64(client.key_pem),
                },
            }
        ],
        "contexts": [{"name": user, "context": {"cluster": "dra-operator-local", "user": user}}],
        "current-context": user,
    }
    path.touch(mode=0o600)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _start_upstream(
    state: ControlPlaneState,
    binaries: tuple[Path, Path],
    feature_gates: str,
    extra_args: Mapping[str, Sequence[str]],
    timeout: float,
    progress: Progress,
) -> ControlPlaneState:
    """kube-scheduler and kube-controller-manager (its DRA controllers among all the others).

    As kind's kubeadm runs them: leader election on (their Leases in kube-system, which is
    how the operator sees them), each under its own identity, and the controller-manager's
    controllers under per-controller service accounts (`--use-service-account-credentials`),
    so every one of them holds only its bootstrap role.
    """
    scheduler, kcm = binaries
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE  # their serving certs are self-signed in memory
    pki = state.state_dir / "pki"
    for name, binary, extra in (
        ("kube-scheduler", scheduler, []),
        (
            "kube-controller-manager",
            kcm,
            [
                "--controllers=*",
                "--use-service-account-credentials=true",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}",
            ],
        ),
    ):
        kubeconfig = str(state.state_dir / f"{name}.kubeconfig")
        port = free_port()
        progress(f"starting {name} on 127.0.0.1:{port}")
        argv = [
            str(binary),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            # Trust our CA directly instead of looking up the requestheader CA in
            # kube-system (which this apiserver does not publish: endless error logs).
            "--authentication-skip-lookup=true",
            f"--client-ca-file={pki / 'ca.crt'}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={state.state_dir / 'upstream-certs' / name}",
            "--leader-elect=true",
            f"--feature-gates={feature_gates}",
            *extra,
            *extra_args.get(name, ()),
        ]
        state = _start(state, name, argv)
        _wait_healthy(state, name, f"https://127.0.0.1:{port}/healthz", insecure, timeout)
    return state
