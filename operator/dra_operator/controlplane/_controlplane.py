"""A real local control plane: etcd + kube-apiserver (+ kube-scheduler, kube-controller-manager).

`up` generates fresh credentials, starts the processes on 127.0.0.1 with free ports and waits
until each one answers its health endpoint; `down` stops them by pid. Everything lives in one
state directory: PKI, etcd data, logs, the `admin` and `operator` kubeconfigs and `state.json`,
which is rewritten after every process start so a half-finished `up` can still be taken down.
A failed `up` stops whatever it started before raising.

With `nodes`, real kubelets join (`_realnodes`): the apiserver authorizes them with the Node
authorizer and NodeRestriction, and reaches them with a client certificate of its own.

The apiserver runs with RBAC, every resource.k8s.io version and every DRA gate of its release
on (`_features`), and the flags the upstream integration framework uses for a controller-less
apiserver (test-infra.md §3.3): no ServiceAccount admission, no endpoint reconciler, and no
`--advertise-address` (loopback advertise addresses are rejected).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import ssl
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dra_operator.controlplane._apiservice import SERVICE_CIDR, SERVICE_IP, SERVICE_NAMES
from dra_operator.controlplane._binaries import Binaries, NodeBinaries, minor_of
from dra_operator.controlplane._features import release_flags
from dra_operator.controlplane._host import host_addresses
from dra_operator.controlplane._pki import (
    CertifiedKey,
    issue_client_cert,
    issue_serving_cert,
    new_ca,
    new_sa_key,
    write_kubeconfig,
)
from dra_operator.controlplane._processes import free_port, stop_process
from dra_operator.controlplane._realnodes import (
    build_local_images,
    plan_nodes,
    start_node,
    teardown_node,
    wait_nodes_ready,
)
from dra_operator.controlplane._state import (
    STATE_FILE,
    ControlPlaneState,
    read_state,
    start_component,
    wait_healthy,
)
from dra_operator.errors import ControlPlaneError

__all__ = [
    "ADMIN_USER",
    "OPERATOR_USER",
    "default_state_dir",
    "down",
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

# Real nodes without --with-upstream: KCM's node-lifecycle controller, to lift the not-ready
# taint as a cluster does, and its PV controller (persistentvolume-binder), which moves a new
# PV to Available and completes a binding's phases (the kubelet mounts only a Bound claim): the
# operator's VolumeBinding, as kube-scheduler's, writes only the binding itself. Not
# leader-elected, so its Lease never tells the operator that a whole KCM (and its claims
# controller) runs.
_NODE_LIFECYCLE = ["--controllers=nodelifecycle,persistentvolume-binder", "--leader-elect=false"]
# `in_cluster`: also what a Deployment's pods need (docs/install.md): a ServiceAccount in
# every namespace, the kube-root-ca.crt ConfigMap their token volume projects, Deployments and
# ReplicaSets made into pods, and their removal once the owner is deleted. Still no claims
# controller and no Lease, so the operator runs its own claims controller as without.
_IN_CLUSTER = [
    "--controllers=nodelifecycle,persistentvolume-binder,serviceaccount,root-ca-cert-publisher,"
    "deployment,replicaset,garbagecollector",
    "--leader-elect=false",
]

Progress = Callable[[str], None]
_Upstream = Mapping[str, tuple[Path, Sequence[str]]]


def default_state_dir() -> Path:
    """$XDG_STATE_HOME/dra-operator/controlplane, defaulting to ~/.local/state/..."""
    root = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(root) / "dra-operator" / "controlplane"


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
        state = start_component(state, name, list(component.argv))
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
    for node in state.nodes:
        progress(f"cleaning up {node.name}: containers, mounts, cgroups, {node.bridge}")
        teardown_node(node)
    (state_dir / STATE_FILE).unlink(missing_ok=True)
    shutil.rmtree(state_dir / "etcd-data", ignore_errors=True)
    return stopped


def up(
    *,
    state_dir: Path,
    binaries: Binaries,
    with_upstream: bool = False,
    nodes: int = 0,
    node_binaries: NodeBinaries | None = None,
    in_cluster: bool = False,
    apiserver_args: Sequence[str] = (),
    upstream_args: Mapping[str, Sequence[str]] | None = None,
    timeout: float = 90.0,
    progress: Progress = lambda _: None,
) -> ControlPlaneState:
    """Start the control plane in `state_dir` and wait until it is ready.

    `apiserver_args` are appended to kube-apiserver's flags, `upstream_args[name]` to those of
    kube-scheduler and kube-controller-manager (the benchmarks add an audit log and QPS).
    `nodes` real nodes (`_realnodes`) need `node_binaries` and kube-controller-manager, run
    with only its node-lifecycle controller unless `with_upstream` runs all of them.
    `in_cluster` (with `nodes`) makes the cluster one where the operator can be deployed:
    kube-scheduler (leader-elected, as in a cluster) places pods that name no other scheduler,
    kube-controller-manager runs `_IN_CLUSTER`'s controllers, the ServiceAccount admission
    plugin gives pods their token, and pods reach the apiserver through the `kubernetes`
    Service (`_apiservice`).

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
    if in_cluster and not nodes:
        raise ControlPlaneError("in_cluster needs real nodes (nodes > 0)")
    if nodes:
        binaries.require("kubelet")
        kcm = binaries.require("kube-controller-manager")
        if node_binaries is None:
            raise ControlPlaneError("real nodes need node_binaries (containerd, runc, CNI)")
        node_binaries.require()
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
        state = start_component(state, "etcd", _etcd_args(etcd, state_dir, etcd_port, peer_port))
        wait_healthy(state, "etcd", f"{state.etcd_url}/health", None, _ETCD_TIMEOUT)
        progress(f"starting kube-apiserver {version} on {state.server}")
        args = _apiserver_args(apiserver, state_dir, etcd_port, api_port, in_cluster=in_cluster)
        args += [
            f"--feature-gates={release.feature_gates_flag()}",
            f"--runtime-config={release.runtime_config_flag()}",
            *apiserver_args,
        ]
        state = start_component(state, "kube-apiserver", args)
        ca_context = ssl.create_default_context(cafile=str(state.ca_file))
        wait_healthy(state, "kube-apiserver", f"{state.server}/readyz", ca_context, timeout)
        write_kubeconfig(state.admin_kubeconfig, state.server, pki["ca"], pki["admin"], ADMIN_USER)
        write_kubeconfig(
            state.operator_kubeconfig, state.server, pki["ca"], pki["operator"], OPERATOR_USER
        )
        for name, user in UPSTREAM_USERS.items():
            path = state_dir / f"{name}.kubeconfig"
            write_kubeconfig(path, state.server, pki["ca"], pki[name], user)
        if upstream is not None:
            state = _start_upstream(
                state,
                _all_upstream(state, *upstream),
                release.feature_gates_flag(),
                upstream_args or {},
                timeout,
                progress,
            )
        elif nodes:
            lifecycle = _IN_CLUSTER if in_cluster else _NODE_LIFECYCLE
            components: dict[str, tuple[Path, Sequence[str]]] = {
                "node-lifecycle": (kcm, lifecycle + _kcm_credentials(state))
            }
            if in_cluster:
                components["kube-scheduler"] = (binaries.require("kube-scheduler"), [])
            state = _start_upstream(
                state,
                components,
                release.feature_gates_flag(),
                {},
                timeout,
                progress,
            )
        if nodes:
            assert node_binaries is not None
            progress("building the local images")
            images = build_local_images(state_dir / "images")
            for node in plan_nodes(state_dir, nodes, host_addresses()):
                state = start_node(
                    state,
                    node,
                    binaries=binaries,
                    node_binaries=node_binaries,
                    ca=pki["ca"],
                    feature_gates=release.feature_gates_flag(),
                    images=images,
                    timeout=timeout,
                    progress=progress,
                    apiserver_port=api_port if in_cluster else None,
                )
            progress("waiting for the nodes to be Ready")
            wait_nodes_ready(state, timeout)
    except BaseException:
        down(state_dir)
        raise
    return state


def _reset(state_dir: Path) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    for name in ("pki", "etcd-data", "logs", "upstream-certs", "images", "nodes"):
        shutil.rmtree(state_dir / name, ignore_errors=True)
    kubeconfigs = [f"{name}.kubeconfig" for name in ("admin", "operator", *UPSTREAM_USERS)]
    for name in (*kubeconfigs, STATE_FILE):
        (state_dir / name).unlink(missing_ok=True)


def _write_pki(pki: Path) -> dict[str, CertifiedKey]:
    pki.mkdir(parents=True, mode=0o700)
    ca = new_ca()
    pairs = {
        "ca": ca,
        # Also the `kubernetes` Service's names and address, as in-cluster clients verify them.
        "serving": issue_serving_cert(
            ca, dns_names=("localhost", *SERVICE_NAMES), ip_addresses=("127.0.0.1", SERVICE_IP)
        ),
        "admin": issue_client_cert(ca, ADMIN_USER, ["system:masters"]),
        "operator": issue_client_cert(ca, OPERATOR_USER),
        **{name: issue_client_cert(ca, user) for name, user in UPSTREAM_USERS.items()},
        "kubelet-client": issue_client_cert(ca, "kube-apiserver-kubelet-client"),
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


def _apiserver_args(
    apiserver: Path, state_dir: Path, etcd_port: int, port: int, *, in_cluster: bool = False
) -> list[str]:
    pki = state_dir / "pki"
    # Pods get service-account tokens only in_cluster: without kube-controller-manager's
    # serviceaccount controller no namespace has the `default` ServiceAccount to admit.
    service_accounts = [] if in_cluster else ["--disable-admission-plugins=ServiceAccount"]
    return [
        str(apiserver),
        f"--etcd-servers=http://127.0.0.1:{etcd_port}",
        f"--secure-port={port}",
        "--bind-address=127.0.0.1",
        f"--cert-dir={pki}",
        f"--tls-cert-file={pki / 'serving.crt'}",
        f"--tls-private-key-file={pki / 'serving.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        # Node + NodeRestriction: a kubelet sees only its own pods, claims and slices.
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        f"--kubelet-client-certificate={pki / 'kubelet-client.crt'}",
        f"--kubelet-client-key={pki / 'kubelet-client.key'}",
        f"--kubelet-certificate-authority={pki / 'ca.crt'}",
        "--kubelet-preferred-address-types=InternalIP",
        f"--service-account-issuer=https://127.0.0.1:{port}",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--allow-privileged=true",
        *service_accounts,
        "--endpoint-reconciler-type=none",
    ]


def _all_upstream(state: ControlPlaneState, scheduler: Path, kcm: Path) -> _Upstream:
    """kube-scheduler and kube-controller-manager (its DRA controllers among all the others).

    As kind's kubeadm runs them: leader election on (their Leases in kube-system, which is
    how the operator sees them), each under its own identity, and the controller-manager's
    controllers under per-controller service accounts (`--use-service-account-credentials`),
    so every one of them holds only its bootstrap role.
    """
    return {
        "kube-scheduler": (scheduler, []),
        "kube-controller-manager": (kcm, ["--controllers=*", *_kcm_credentials(state)]),
    }


def _kcm_credentials(state: ControlPlaneState) -> list[str]:
    pki = state.state_dir / "pki"
    return [
        "--use-service-account-credentials=true",
        f"--service-account-private-key-file={pki / 'sa.key'}",
        f"--root-ca-file={pki / 'ca.crt'}",
    ]


def _start_upstream(
    state: ControlPlaneState,
    components: _Upstream,
    feature_gates: str,
    extra_args: Mapping[str, Sequence[str]],
    timeout: float,
    progress: Progress,
) -> ControlPlaneState:
    """Start each upstream component (name: its binary and own flags) under the identity
    of its binary (<binary>.kubeconfig) and wait for /healthz."""
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE  # their serving certs are self-signed in memory
    pki = state.state_dir / "pki"
    for name, (binary, extra) in components.items():
        kubeconfig = str(state.state_dir / f"{binary.name}.kubeconfig")
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
        state = start_component(state, name, argv)
        wait_healthy(state, name, f"https://127.0.0.1:{port}/healthz", insecure, timeout)
    return state
