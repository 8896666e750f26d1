"""Real nodes: a kubelet and a containerd of its own per node, on this host.

Each node gets a directory (containerd root/state/socket, kubelet root, CNI config and IPAM
state, CDI specs, pod logs), a bridge carrying its address and its pods' subnet, a cgroup root,
and credentials from the control plane's CA: a client certificate `system:node:<name>` in
`system:nodes` (the Node authorizer and NodeRestriction apply to it as in a cluster) and a
serving certificate for its address, which kube-apiserver verifies when it proxies `logs` and
`exec`; the kubelet accepts only clients with a certificate of that CA.

containerd 2.x (CDI always on) reads CDI specs from the node's `cdi/` directory, so a DRA
driver on the node writes there (`_drivers`). The configuration files are `_nodeconfig`'s;
images come from `_images` (no registry is reachable); the sandbox image is pinned to the local
pause image.

`node.kubernetes.io/not-ready` is lifted the way a cluster lifts it: `up` runs
kube-controller-manager with only its node-lifecycle controller, which removes the taint once a
kubelet reports Ready (and puts it back, with `unreachable`, when a kubelet stops reporting).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from dra_operator.controlplane._apiservice import expose_apiserver, withdraw_apiserver
from dra_operator.controlplane._binaries import Binaries, NodeBinaries
from dra_operator.controlplane._host import (
    add_bridge,
    delete_link,
    forget_cni_results,
    forget_shim_sockets,
    kill_cgroup_tree,
    kill_processes_mentioning,
    make_cgroup,
    unmount_under,
)
from dra_operator.controlplane._images import build_image, local_images
from dra_operator.controlplane._nodeconfig import (
    KUBELET_HEALTHZ_PORT,
    cni_config,
    containerd_config,
    kubelet_config,
)
from dra_operator.controlplane._pki import (
    CertifiedKey,
    issue_client_cert,
    issue_serving_cert,
    write_kubeconfig,
)
from dra_operator.controlplane._processes import wait_until
from dra_operator.controlplane._state import (
    ControlPlaneState,
    NodeState,
    start_component,
    wait_ready,
)
from dra_operator.errors import ControlPlaneError

__all__ = [
    "NOT_READY_TAINT",
    "build_local_images",
    "import_image",
    "node_names",
    "plan_nodes",
    "start_node",
    "teardown_node",
    "wait_nodes_ready",
]

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
RUN_ROOT = Path("/run/dra-operator")

Progress = Callable[[str], None]


def node_names(count: int) -> list[str]:
    return [f"node-{index}" for index in range(1, count + 1)]


def plan_nodes(state_dir: Path, count: int, taken: Iterable[str] = ()) -> list[NodeState]:
    """Names, addresses, bridges and cgroup roots for `count` nodes of this state dir.

    Two bytes of the state dir's hash go into every host-wide name, so two control planes in
    different state dirs do not collide; their addresses come from the first 10.x/16 (x in
    200-249, starting at the hash) that no address in `taken` (the host's) is in.
    """
    digest = hashlib.sha256(str(state_dir.resolve()).encode()).digest()
    tag = digest[:2].hex()
    used = {a.split(".")[1] for a in taken if a.startswith("10.")}
    octet = next(
        (x for i in range(50) if str(x := 200 + (digest[0] + i) % 50) not in used),
        200 + digest[0] % 50,
    )
    return [
        NodeState(
            name=name,
            directory=str(state_dir / "nodes" / name),
            run_dir=str(RUN_ROOT / f"{tag}-{name}"),
            address=f"10.{octet}.{index}.1",
            pod_subnet=f"10.{octet}.{index}.0/24",
            bridge=f"dra{tag}br{index}",
            cgroup_root=f"/dra-operator-{tag}-{name}",
        )
        for index, name in enumerate(node_names(count), start=1)
    ]


def _write_node_files(
    node: NodeState, ca: CertifiedKey, server: str, ca_file: Path, feature_gates: str
) -> None:
    directory = Path(node.directory)
    for fresh in (directory, Path(node.run_dir)):
        shutil.rmtree(fresh, ignore_errors=True)
    for sub in ("pki", "cni", "cdi", "pod-logs", "containerd"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    node.kubelet_dir.mkdir(parents=True)
    pki = directory / "pki"
    client = issue_client_cert(ca, f"system:node:{node.name}", ["system:nodes"])
    serving = issue_serving_cert(ca, dns_names=(node.name,), ip_addresses=(node.address,))
    (pki / "kubelet-serving.crt").write_bytes(serving.cert_pem)
    (pki / "kubelet-serving.key").touch(mode=0o600)
    (pki / "kubelet-serving.key").write_bytes(serving.key_pem)
    write_kubeconfig(
        directory / "kubelet.kubeconfig", server, ca, client, f"system:node:{node.name}"
    )
    (directory / "cni" / "10-dra-operator.conflist").write_text(json.dumps(cni_config(node)))
    config = kubelet_config(node, ca_file, feature_gates)
    (directory / "kubelet.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def import_image(node: NodeState, binaries: NodeBinaries, tarball: Path) -> None:
    """`ctr images import` `tarball` into the node's containerd (namespace k8s.io, CRI's)."""
    done = subprocess.run(
        [
            str(binaries.ctr),
            f"--address={node.containerd_socket}",
            "--namespace=k8s.io",
            "images",
            "import",
            str(tarball),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if done.returncode != 0:
        raise ControlPlaneError(f"importing {tarball} into {node.name}: {done.stderr.strip()}")


def _containerd_answers(node: NodeState, binaries: NodeBinaries) -> bool:
    if not node.containerd_socket.exists():
        return False
    done = subprocess.run(
        [str(binaries.ctr), f"--address={node.containerd_socket}", "version"],
        capture_output=True,
        check=False,
        timeout=30,
    )
    return done.returncode == 0


def _kubelet_healthy(node: NodeState) -> bool:
    url = f"http://{node.address}:{KUBELET_HEALTHZ_PORT}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def start_node(
    state: ControlPlaneState,
    node: NodeState,
    *,
    binaries: Binaries,
    node_binaries: NodeBinaries,
    ca: CertifiedKey,
    feature_gates: str,
    images: Iterable[Path],
    timeout: float,
    progress: Progress,
    apiserver_port: int | None = None,
) -> ControlPlaneState:
    """Start `node`'s containerd, load the images, start its kubelet; the state with both.

    With `apiserver_port`, the node's pods reach the apiserver at the `kubernetes` Service
    address (`_apiservice`). The node is recorded in the state before anything is created on
    the host, so a failure part-way is still undone by `down`.
    """
    state = dataclasses.replace(state, nodes=(*state.nodes, node))
    state.save()
    progress(f"{node.name}: bridge {node.bridge} ({node.address}), cgroup {node.cgroup_root}")
    _write_node_files(node, ca, state.server, state.ca_file, feature_gates)
    add_bridge(node.bridge, f"{node.address}/24")
    if apiserver_port is not None:
        expose_apiserver(node.bridge, apiserver_port)
    make_cgroup(node.cgroup_root)
    config = Path(node.directory) / "containerd" / "config.toml"
    config.write_text(containerd_config(node, node_binaries))
    progress(f"{node.name}: starting containerd")
    name = f"containerd-{node.name}"
    state = start_component(
        state, name, [str(node_binaries.containerd), f"--config={config}", "--log-level=warn"]
    )
    wait_ready(state, name, lambda: _containerd_answers(node, node_binaries), timeout)
    for tarball in images:
        import_image(node, node_binaries, tarball)
    progress(f"{node.name}: starting kubelet")
    name = f"kubelet-{node.name}"
    argv = [
        str(binaries.require("kubelet")),
        f"--config={Path(node.directory) / 'kubelet.yaml'}",
        f"--kubeconfig={Path(node.directory) / 'kubelet.kubeconfig'}",
        f"--root-dir={node.kubelet_dir}",
        f"--hostname-override={node.name}",
        f"--node-ip={node.address}",
        "--v=1",
    ]
    state = start_component(state, name, argv)
    wait_ready(state, name, lambda: _kubelet_healthy(node), timeout)
    return state


def build_local_images(directory: Path) -> list[Path]:
    """The test and pause image tarballs, written into `directory`."""
    return [
        build_image(image, directory / f"{image.reference.split('/')[-1].split(':')[0]}.tar")
        for image in local_images()
    ]


def _node_is_ready(doc: dict[str, Any]) -> bool:
    conditions = (doc.get("status") or {}).get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    taints = (doc.get("spec") or {}).get("taints") or []
    return ready and not any(t.get("key") == NOT_READY_TAINT for t in taints)


def wait_nodes_ready(state: ControlPlaneState, timeout: float) -> None:
    """Until every node reports Ready and node-lifecycle has lifted its not-ready taint."""
    context = ssl.create_default_context(cafile=str(state.ca_file))
    pki = state.state_dir / "pki"
    context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    last: dict[str, Any] = {}

    def ready(node: NodeState) -> bool:
        url = f"{state.server}/api/v1/nodes/{node.name}"
        try:
            with urllib.request.urlopen(url, context=context, timeout=5) as resp:
                last[node.name] = json.load(resp)
        except (urllib.error.URLError, OSError, ValueError):
            return False
        return _node_is_ready(last[node.name])

    for node in state.nodes:
        if not wait_until(functools.partial(ready, node), timeout, interval=0.5):
            seen = json.dumps((last.get(node.name) or {}).get("spec", {}))
            raise ControlPlaneError(f"node {node.name} was not Ready after {timeout:.0f}s: {seen}")


def teardown_node(node: NodeState) -> None:
    """Give back what `start_node` took from the host (its processes are already stopped):
    leftover containers, runtime shims and their sockets, mounts, cgroups, the bridge,
    libcni's cache and the directories."""
    kill_cgroup_tree(node.cgroup_root)
    shims = kill_processes_mentioning(str(node.containerd_socket))
    forget_shim_sockets(shims.values())
    for directory in (Path(node.run_dir), Path(node.directory)):
        if directory.exists():
            unmount_under(directory)
    withdraw_apiserver(node.bridge)
    delete_link(node.bridge)
    forget_cni_results(node.bridge)
    for directory in (Path(node.run_dir), Path(node.directory)):
        shutil.rmtree(directory, ignore_errors=True)
    with contextlib.suppress(OSError):
        RUN_ROOT.rmdir()  # only when no other control plane's node is left there
