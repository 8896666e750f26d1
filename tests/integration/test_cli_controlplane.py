"""`dra-operator controlplane` and `dra-operator demo` as a user runs them.

Covers: up → status → env → the built kubectl lists every DRA resource → demo (a fresh
control plane with two real nodes, the operator placing the example workloads, the containers
reporting their devices) → down leaves no process behind;
a kube-apiserver that dies at start makes `up` exit non-zero with its last log lines and stop
the etcd it had started.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.skipping import skip_or_fail

from dra_operator import controlplane
from dra_operator.controlplane import Binaries

pytestmark = pytest.mark.controlplane

CLI = str(Path(sys.executable).with_name("dra-operator"))
REPO = Path(__file__).resolve().parents[2]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], capture_output=True, text=True, timeout=180, cwd=REPO, env=env, check=False
    )


@pytest.fixture
def binaries() -> Binaries:
    found = controlplane.find_binaries()
    for name in ("etcd", "kube-apiserver", "kubectl"):
        if not found.has(name):
            skip_or_fail(f"{name} missing in {found.directory}: run `make controlplane`")
    return found


def _need_real_nodes(binaries: Binaries) -> None:
    missing = [n for n in ("kubelet", "kube-controller-manager") if not binaries.has(n)]
    missing += controlplane.find_node_binaries().missing()
    if os.geteuid() != 0:
        missing.append("root")
    if missing:
        skip_or_fail(f"the demo's real nodes need: {', '.join(missing)}")


def test_up_status_env_demo_down(tmp_path: Path, binaries: Binaries) -> None:
    state_dir = str(tmp_path / "state")
    try:
        up = _run("controlplane", "up", "--state-dir", state_dir)
        assert up.returncode == 0, up.stderr
        assert "ready" in up.stderr
        status = _run("controlplane", "status", "--state-dir", state_dir)
        assert status.returncode == 0, status.stderr
        assert f"kubernetes {binaries.kubernetes_version()} at" in status.stderr
        env = _run("controlplane", "env", "--state-dir", state_dir)
        assert env.stdout.startswith("export KUBECONFIG=")
        kubeconfig = env.stdout.strip().split("=", 1)[1]
        resources = subprocess.run(
            [str(binaries.path("kubectl")), "api-resources", "-o", "name"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env={**os.environ, "KUBECONFIG": kubeconfig},
        ).stdout.split()
        for plural in (
            "deviceclasses",
            "resourceclaims",
            "resourceclaimtemplates",
            "resourceslices",
            "devicetaintrules",
        ):
            assert f"{plural}.resource.k8s.io" in resources
        # The demo restarts the control plane fresh with two real nodes, runs the operator on
        # the examples and exits 0 only once every pod runs and reports its devices or waits
        # with a reason, and the waiting trainer runs on the device freed by deleting another.
        _need_real_nodes(binaries)
        demo = _run("demo", "--state-dir", state_dir)
        assert demo.returncode == 0, demo.stdout + demo.stderr
        assert "real nodes node-1, node-2" in demo.stdout
        assert "after deleting trainer-" in demo.stdout
        assert "takes the device" in demo.stdout
        assert "dra-operator verify -n dra-demo" in demo.stdout
    finally:
        down = _run("controlplane", "down", "--state-dir", state_dir)
    state = controlplane.read_state(Path(state_dir))
    assert down.returncode == 0
    assert state is None
    assert _run("controlplane", "status", "--state-dir", state_dir).returncode == 1


def test_failed_start_prints_the_log_and_stops_etcd(tmp_path: Path, binaries: Binaries) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "etcd").symlink_to(binaries.path("etcd"))
    broken = bin_dir / "kube-apiserver"
    broken.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "Kubernetes v1.36.4"; exit 0;; esac\n'
        'echo "E0000 unrecognized feature gate: NoSuchGate" >&2\n'
        "exit 1\n"
    )
    broken.chmod(0o755)
    state_dir = tmp_path / "state"
    up = _run("controlplane", "up", "--state-dir", str(state_dir), "--bin-dir", str(bin_dir))
    assert up.returncode == 1
    assert "kube-apiserver exited" in up.stderr
    assert "unrecognized feature gate: NoSuchGate" in up.stderr
    assert controlplane.read_state(state_dir) is None
    etcd_log = state_dir / "logs" / "etcd.log"
    assert etcd_log.exists()
    running = subprocess.run(
        ["pgrep", "-f", f"--data-dir={state_dir}"], capture_output=True, text=True, check=False
    )
    assert running.stdout == ""
