"""`dra-operator controlplane up --nodes 1`: a real kubelet runs a pod, and `down` leaves nothing.

The pod is bound by hand (no scheduler runs here; the e2e suite has dra-operator schedule) and
runs an image built here and loaded with `controlplane load-image`.
`kubectl logs` and `exec` go through kube-apiserver to the kubelet's own address with the
apiserver's client certificate. After `down`: no process mentions the state dir, nothing is
mounted under it, no cgroup of the node is left in any hierarchy, no runtime-shim socket is
left, and the host has exactly the network interfaces it had before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.skipping import skip_or_fail

from dra_operator import controlplane
from dra_operator.controlplane._host import SHIM_SOCKETS, cgroup_mounts, mounts_under
from dra_operator.controlplane._processes import wait_until
from dra_operator.controlplane._realnodes import plan_nodes

pytestmark = pytest.mark.controlplane

CLI = str(Path(sys.executable).with_name("dra-operator"))
REPO = Path(__file__).resolve().parents[2]


def _need(condition: bool, why: str) -> None:
    if condition:
        return
    skip_or_fail(why)


def _interfaces() -> set[str]:
    return set(os.listdir("/sys/class/net"))


def _bridge_and_ports(bridge: str) -> set[str]:
    """The node's bridge and the pods' veth ends on it: other clusters on the host keep theirs."""
    return {bridge, *os.listdir(f"/sys/class/net/{bridge}/brif")}


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if text in cmdline:
                found.append(f"{entry.name}: {cmdline.replace(chr(0), ' ')}")
    return found


def test_a_pod_runs_on_a_real_node_and_down_leaves_nothing(tmp_path: Path) -> None:
    binaries = controlplane.find_binaries()
    for name in ("etcd", "kube-apiserver", "kubectl", "kubelet", "kube-controller-manager"):
        _need(binaries.has(name), f"{name} missing in {binaries.directory}: make controlplane")
    missing = controlplane.find_node_binaries().missing()
    _need(not missing, f"real nodes need: {', '.join(missing)}")
    _need(os.geteuid() == 0, "real nodes need root")
    shims_before = _shim_sockets()  # a run killed earlier on this host may have left some
    state_dir = tmp_path / "state"
    up = subprocess.run(
        [CLI, "controlplane", "up", "--nodes", "1", "--state-dir", str(state_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        check=False,
    )
    state = controlplane.read_state(state_dir)
    try:
        assert up.returncode == 0, up.stderr
        assert state is not None
        (node,) = state.nodes
        env = {**os.environ, "KUBECONFIG": str(state.admin_kubeconfig)}

        def kubectl(*args: str, stdin: str | None = None) -> str:
            done = subprocess.run(
                [str(binaries.path("kubectl")), *args],
                input=stdin,
                capture_output=True,
                text=True,
                timeout=60,
                env=env,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            return done.stdout

        # A user's own image, loaded into every node (no registry): it says hello by itself.
        hello = controlplane.Image(
            "localhost/dra-operator/hello:test",
            ("/bin/sh", "-c", "echo hello from $(hostname); sleep 3600"),
        )
        archive = controlplane.build_image(hello, tmp_path / "hello.tar")
        load = subprocess.run(
            [CLI, "controlplane", "load-image", "--state-dir", str(state_dir), str(archive)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert load.returncode == 0, load.stderr
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "hello", "namespace": "default"},
            "spec": {
                "nodeName": node.name,
                "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "c", "image": hello.reference}],
            },
        }
        kubectl("create", "-f", "-", stdin=json.dumps(pod))

        def running() -> bool:
            phase = kubectl("get", "pod", "hello", "-o", "jsonpath={.status.phase}")
            return phase == "Running"

        assert wait_until(running, 120, interval=1), kubectl("describe", "pod", "hello")
        assert wait_until(lambda: "hello from hello" in kubectl("logs", "hello"), 30)
        assert kubectl("exec", "hello", "--", "cat", "/etc/hostname").strip() == "hello"
        assert mounts_under(state_dir)  # the pod's rootfs and netns are mounted there
        ours = _bridge_and_ports(node.bridge)
        assert len(ours) > 1  # the bridge and the hello pod's veth
    finally:
        down = subprocess.run(
            [CLI, "controlplane", "down", "--state-dir", str(state_dir)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert down.returncode == 0, down.stderr
    assert _processes_mentioning(str(state_dir)) == []
    assert mounts_under(state_dir) == []
    assert not ours & _interfaces()
    assert _shim_sockets() <= shims_before
    assert state is not None
    for node in state.nodes:
        left = [m / node.cgroup_root.lstrip("/") for m in cgroup_mounts()]
        assert not any(p.exists() for p in left), left


def _shim_sockets() -> set[Path]:
    """The runtime shims' sockets on this host (containerd keeps them in one host directory)."""
    return set(SHIM_SOCKETS.glob("*")) if SHIM_SOCKETS.is_dir() else set()


def _nat_rules_for(state_dir: Path) -> list[str]:
    """The host's NAT rules for the bridges of the nodes planned in `state_dir`."""
    listed = subprocess.run(
        ["iptables", "-w", "-t", "nat", "-S"], capture_output=True, text=True, check=True
    ).stdout
    bridges = {node.bridge for node in plan_nodes(state_dir, 1)}
    return [line for line in listed.splitlines() if any(b in line for b in bridges)]


def test_in_cluster_a_scheduled_pod_reaches_the_apiserver_at_the_service(tmp_path: Path) -> None:
    """`--in-cluster`: kube-scheduler places a pod that names no scheduler, it gets the
    service-account token and the kubelet's KUBERNETES_SERVICE_HOST, and connects to the
    apiserver at `kubernetes`' ClusterIP (docs/nodes.md); `down` removes the NAT rule that
    makes the Service reachable."""
    binaries = controlplane.find_binaries()
    for name in ("etcd", "kube-apiserver", "kubectl", "kubelet", "kube-controller-manager"):
        _need(binaries.has(name), f"{name} missing in {binaries.directory}: make controlplane")
    _need(binaries.has("kube-scheduler"), "kube-scheduler missing: make controlplane")
    missing = controlplane.find_node_binaries().missing()
    _need(not missing, f"real nodes need: {', '.join(missing)}")
    _need(os.geteuid() == 0, "real nodes need root")
    state_dir = tmp_path / "state"
    argv = [CLI, "controlplane", "up", "--nodes", "1", "--in-cluster", "--state-dir"]
    up = subprocess.run(
        [*argv, str(state_dir)], capture_output=True, text=True, timeout=300, cwd=REPO, check=False
    )
    try:
        assert up.returncode == 0, up.stderr
        state = controlplane.read_state(state_dir)
        assert state is not None
        assert len(_nat_rules_for(state_dir)) == 1
        env = {**os.environ, "KUBECONFIG": str(state.admin_kubeconfig)}

        def kubectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [str(binaries.path("kubectl")), *args],
                input=stdin,
                capture_output=True,
                text=True,
                timeout=60,
                env=env,
                check=False,
            )

        # A TCP connection to the Service address: busybox's TLS cannot talk to the apiserver
        # (handshake failure), so TLS and the CA are checked by the deployed e2e scenarios,
        # where the operator itself connects this way.
        script = (
            "ls /var/run/secrets/kubernetes.io/serviceaccount/token && "
            'nc -w 5 "$KUBERNETES_SERVICE_HOST" "$KUBERNETES_SERVICE_PORT" </dev/null && '
            'echo "reached $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"; sleep 3600'
        )
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "incluster", "namespace": "default"},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {
                        "name": "c",
                        "image": controlplane.TEST_IMAGE,
                        "command": ["/bin/sh", "-c", script],
                    }
                ],
            },
        }

        def created() -> bool:  # the `default` ServiceAccount appears a moment after `up`
            return kubectl("create", "-f", "-", stdin=json.dumps(pod)).returncode == 0

        assert wait_until(created, 60, interval=1)

        def answered() -> bool:  # kubectl logs fails until the container started
            return "reached 10.0.0.1:443" in kubectl("logs", "incluster").stdout

        assert wait_until(answered, 120, interval=1), kubectl("describe", "pod", "incluster").stdout
        assert (
            "KUBERNETES_SERVICE_HOST=10.0.0.1" in kubectl("exec", "incluster", "--", "env").stdout
        )
    finally:
        down = subprocess.run(
            [CLI, "controlplane", "down", "--state-dir", str(state_dir)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert down.returncode == 0, down.stderr
    assert _nat_rules_for(state_dir) == []
