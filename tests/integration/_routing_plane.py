"""The control plane the routing tests race on (issue 27).

A control plane of its own that runs kube-scheduler and kube-controller-manager
leader-elected, as kind does, with the routing objects of a layout of deploy/ (e2e/kind/install.sh's
choice for the release, or none for an upgrade test to install its own) and `dra-operator run`
(default flags, deploy/'s RBAC) as a subprocess beside them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import json
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from tests.integration._routing_race import Race, race
from tests.support.controlplane import bind_operator_rbac, require_binaries
from tests.support.manifests import (
    CHART,
    DEPLOY,
    NAMESPACE,
    helm_env,
    helm_path,
    kustomize,
    parse,
    require_binary,
)
from tests.support.operator import wait_for

from dra_operator import controlplane
from dra_operator.errors import APINotFoundError
from dra_operator.kube import LEASES, Client

KCM = "kube-controller-manager"
INSTALLED_KINDS = {
    "Namespace",
    "ConfigMap",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
}
"""What the tests apply of a layout: the routing. The operator runs as a process under the
same ClusterRole, not as the Deployment."""
BETA_GATES = (
    "--feature-gates=MutatingAdmissionPolicy=true",
    "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
)


def layout_for(minor: int, beta_policies: bool) -> str:
    """The layout of deploy/ e2e/kind/install.sh installs on this release."""
    if minor >= 36:
        return ""
    if minor >= 34 and beta_policies:
        return "release-1.34"
    return "require-scheduler-only" if minor >= 30 else "bare-control-plane"


class Plane:
    """A control plane with kube-scheduler and KCM, the routing of one layout installed and
    the operator running beside them."""

    def __init__(
        self,
        state: controlplane.ControlPlaneState,
        layout: str,
        directory: Path,
        beta_policies: bool,
    ) -> None:
        self.state = state
        self.layout = layout
        self.beta_policies = beta_policies
        self.log = directory / "operator.log"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.metrics_port = probe.getsockname()[1]
        self.proc: subprocess.Popen[bytes] | None = None

    def start_operator(self) -> None:
        program = Path(sys.executable).with_name("dra-operator")
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    str(program),
                    "run",
                    f"--kubeconfig={self.state.operator_kubeconfig}",
                    "--workers=8",
                    "--log-format=json",
                    f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def events(self, name: str) -> list[dict[str, Any]]:
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("event") == name:
                    found.append(record)
        return found

    def metrics(self) -> str:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as answer:
            return str(answer.read().decode())

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def apply_routing(
    state: controlplane.ControlPlaneState,
    manifests: Iterable[dict[str, Any]],
    *,
    force_conflicts: bool = True,
) -> None:
    """The routing objects among `manifests`, applied as the docs apply them (server-side;
    docs/install.md's upgrade without `--force-conflicts`)."""
    kubectl = controlplane.find_binaries().path("kubectl")
    wanted = [m for m in manifests if m["kind"] in INSTALLED_KINDS]
    argv = [str(kubectl), f"--kubeconfig={state.admin_kubeconfig}", "apply", "--server-side"]
    done = subprocess.run(
        [*argv, *(["--force-conflicts"] if force_conflicts else []), "-f", "-"],
        input=yaml.safe_dump_all(wanted),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def layout_manifests(layout: str) -> list[dict[str, Any]]:
    """`kubectl kustomize deploy/<layout>`."""
    return parse(kustomize(controlplane.find_binaries().path("kubectl"), DEPLOY / layout))


def routing_of(manifests: Iterable[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(apiVersion, kind, name) of the admission policies and bindings among `manifests`."""
    return {
        (m["apiVersion"], m["kind"], m["metadata"]["name"])
        for m in manifests
        if m["kind"].endswith(("AdmissionPolicy", "AdmissionPolicyBinding"))
    }


def chart_routing(plane: Plane, home: Path) -> set[tuple[str, str, str]]:
    """What the chart's default `routing.mode: auto` renders for this server: `helm template
    --dry-run=server` reads the version and the served APIs from the cluster as `helm install`
    does (`--take-ownership`: the layout's objects are there already, not Helm's)."""
    helm = require_binary(helm_path(), "make helm")
    done = subprocess.run(
        [
            str(helm),
            "template",
            "dra-operator",
            str(CHART),
            "--namespace",
            NAMESPACE,
            "--dry-run=server",
            "--take-ownership",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "KUBECONFIG": str(plane.state.admin_kubeconfig), **helm_env(home)},
    )
    assert done.returncode == 0, done.stderr
    return routing_of(parse(done.stdout))


@contextlib.contextmanager
def routed_plane(
    directory: Path,
    release: str | None = None,
    apiserver_args: tuple[str, ...] = (),
    *,
    install: bool = True,
) -> Iterator[Plane]:
    """kube-scheduler and KCM, the layout install.sh picks for the release (unless `install`
    is false: the test installs), the operator."""
    binaries = controlplane.find_binaries(version=release)
    require_binaries(binaries, "etcd", "kube-apiserver", "kubectl", "kube-scheduler", KCM)
    state = controlplane.up(
        state_dir=directory / "plane",
        binaries=binaries,
        with_upstream=True,
        apiserver_args=apiserver_args,
    )
    beta = bool(apiserver_args)
    plane = Plane(state, layout_for(minor(state), beta_policies=beta), directory, beta)
    try:
        if install:
            bind_operator_rbac(state, binaries)
            apply_routing(state, layout_manifests(plane.layout))
        else:
            _bind_renamed_rbac(state, binaries)
        plane.start_operator()
        yield plane
    finally:
        plane.stop()
        controlplane.down(directory / "plane")


def _bind_renamed_rbac(
    state: controlplane.ControlPlaneState, binaries: controlplane.Binaries
) -> None:
    """deploy/base's ClusterRoles for the operator process under names of their own: the
    install under test owns `dra-operator` (with the previous release's rules until it is
    upgraded), while the process is this tree's operator and needs this tree's rules."""
    roles = controlplane.load_cluster_roles(DEPLOY / "base", binaries.path("kubectl"))
    for role in roles:
        role["metadata"]["name"] += "-process"

    async def bind() -> None:
        async with Client.from_kubeconfig(state.admin_kubeconfig) as admin:
            await controlplane.bind_cluster_roles(admin, roles, controlplane.OPERATOR_USER)

    # In a thread of its own, as tests/support does: asyncio.run here would detach the loop
    # pytest-asyncio set on this thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, bind()).result()


def minor(state: controlplane.ControlPlaneState) -> int:
    return int(state.version.removeprefix("v").split(".")[1])


async def leading(api: Client, plane: Plane) -> None:
    async def holds() -> bool:
        assert plane.proc is not None and plane.proc.poll() is None, plane.log.read_text()
        with contextlib.suppress(APINotFoundError):
            lease = await api.get(LEASES, "dra-operator", namespace="kube-system")
            return bool((lease.get("spec") or {}).get("holderIdentity"))
        return False

    await wait_for(holds, timeout=120, what="the operator to lead")


async def races(api: Client, plane: Plane, runs: int, **labels: str) -> list[Race]:
    """`runs` races, each recorded, each asserted safe as it ends."""
    results = []
    for run in range(runs):
        result = await race(api, run)
        record(plane, result, **labels)
        results.append(result)
        assert result.safe, result
    return results


def record(plane: Plane, result: Any, **labels: str) -> None:
    """With ROUTING_FIGURES, one JSON line per race: what docs/coexistence.md tabulates."""
    target = os.environ.get("ROUTING_FIGURES")
    if target:
        line = {
            "release": plane.state.version,
            "layout": plane.layout or "deploy",
            "beta_policies": plane.beta_policies,
            **labels,
            **dataclasses.asdict(result),
        }
        with Path(target).open("a") as out:
            out.write(json.dumps(line) + "\n")
