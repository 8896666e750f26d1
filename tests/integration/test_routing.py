"""Every pod that needs a device is placed by dra-operator beside kube-scheduler (issue 27).

On a control plane of its own that runs kube-scheduler and kube-controller-manager
leader-elected, as kind does, with the routing of the default install (the admission policies
and the parameters ConfigMap of the layout of deploy/ for the release, e2e/kind/install.sh's
choice) and `dra-operator run` (default flags, deploy/'s RBAC) as a subprocess:

* the race (`_routing_race`): claim pods, explicit and implicit extended-resource pods and
  PodGroup pods, half naming kube-scheduler, for fewer devices than pods: no device in two
  claims, `verify` clean, every bound pod placed by dra-operator, every device used;
  `RACES` races (3; 20 with ROUTING_FULL=1, `make test-routing`);
* a pod that turns DRA-backed later (its DeviceClass gets `extendedResourceName` after the
  pod exists, on kube-scheduler) is reported: a Warning Event on the pod, the log line and the
  `device-pods-not-routed` gauge; a new pod asking the same is routed;
* the parameters ConfigMap, deleted, is written again by the operator;
* with ROUTING_RELEASES=1 (`make test-routing`), the race on each supported release with its
  install: 1.34 and 1.35 with the refusing policies alone (pods naming kube-scheduler are
  refused) and with MutatingAdmissionPolicy v1beta1 switched on (deploy/release-1.34), 1.36
  and 1.37 with deploy/.

With ROUTING_FIGURES naming a file, each race appends one JSON line there (release, layout,
the `Race`'s counts) for docs/coexistence.md's table.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.integration._routing_race import (
    CONFIG_MAPS,
    DEVICES,
    PARAMS_NAMESPACE,
    Race,
    published,
    race,
)
from tests.support.controlplane import bind_operator_rbac, require_binaries
from tests.support.manifests import DEPLOY, kustomize
from tests.support.operator import wait_for

from dra_operator import controlplane, names
from dra_operator.errors import APINotFoundError
from dra_operator.kube import (
    CORE_EVENTS,
    LEASES,
    NAMESPACES,
    PODS,
    Client,
    dra,
)

pytestmark = pytest.mark.controlplane

RACES = 20 if os.environ.get("ROUTING_FULL") == "1" else 3
KCM = "kube-controller-manager"
UNROUTED_SAMPLE = 'dra_operator_unsafe_configuration{reason="device-pods-not-routed"}'
ROUTED_KINDS = {"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"}
INSTALLED_KINDS = {
    "Namespace",
    "ConfigMap",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    *ROUTED_KINDS,
}
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


def install(state: controlplane.ControlPlaneState, layout: str) -> None:
    """The routing objects of the layout (not the Deployment: the operator runs here as a
    process under the same ClusterRole), applied as the docs apply them."""
    kubectl = controlplane.find_binaries().path("kubectl")
    wanted = [
        m
        for m in yaml.safe_load_all(kustomize(kubectl, DEPLOY / layout))
        if m and m["kind"] in INSTALLED_KINDS
    ]
    argv = [str(kubectl), f"--kubeconfig={state.admin_kubeconfig}", "apply", "--server-side"]
    done = subprocess.run(
        [*argv, "--force-conflicts", "-f", "-"],
        input=yaml.safe_dump_all(wanted),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


@contextlib.contextmanager
def routed_plane(
    directory: Path, release: str | None = None, apiserver_args: tuple[str, ...] = ()
) -> Iterator[Plane]:
    """kube-scheduler and KCM, the layout install.sh picks for the release, the operator."""
    binaries = controlplane.find_binaries(version=release)
    require_binaries(binaries, "etcd", "kube-apiserver", "kubectl", "kube-scheduler", KCM)
    state = controlplane.up(
        state_dir=directory / "plane",
        binaries=binaries,
        with_upstream=True,
        apiserver_args=apiserver_args,
    )
    beta = bool(apiserver_args)
    plane = Plane(state, layout_for(_minor(state), beta_policies=beta), directory, beta)
    try:
        bind_operator_rbac(state, binaries)
        install(state, plane.layout)
        plane.start_operator()
        yield plane
    finally:
        plane.stop()
        controlplane.down(directory / "plane")


def _minor(state: controlplane.ControlPlaneState) -> int:
    return int(state.version.removeprefix("v").split(".")[1])


@pytest.fixture(scope="module")
def default_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    with routed_plane(tmp_path_factory.mktemp("routing")) as plane:
        yield plane


@pytest.fixture
async def api(default_plane: Plane) -> AsyncIterator[Client]:
    async with Client.from_kubeconfig(default_plane.state.admin_kubeconfig) as client:
        await _leading(client, default_plane)
        yield client


async def _leading(api: Client, plane: Plane) -> None:
    async def holds() -> bool:
        assert plane.proc is not None and plane.proc.poll() is None, plane.log.read_text()
        with contextlib.suppress(APINotFoundError):
            lease = await api.get(LEASES, "dra-operator", namespace="kube-system")
            return bool((lease.get("spec") or {}).get("holderIdentity"))
        return False

    await wait_for(holds, timeout=120, what="the operator to lead")


async def _races(api: Client, plane: Plane, runs: int) -> list[Race]:
    results = []
    for run in range(runs):
        result = await race(api, run)
        _record(plane, result)
        results.append(result)
        assert result.safe, result
    return results


def _record(plane: Plane, result: Race) -> None:
    """With ROUTING_FIGURES, one JSON line per race: what docs/coexistence.md tabulates."""
    target = os.environ.get("ROUTING_FIGURES")
    if target:
        line = {
            "release": plane.state.version,
            "layout": plane.layout or "deploy",
            "beta_policies": plane.beta_policies,
            **dataclasses.asdict(result),
        }
        with Path(target).open("a") as out:
            out.write(json.dumps(line) + "\n")


@pytest.mark.timeout(1800)
async def test_every_pod_that_needs_a_device_is_routed_beside_kube_scheduler(
    default_plane: Plane, api: Client
) -> None:
    assert default_plane.layout == "", "the session release should take deploy/ itself"
    results = await _races(api, default_plane, RACES)

    assert all(r.used == DEVICES and r.refused == 0 for r in results), results
    kinds = set(results[0].kinds)
    assert {"claims", "explicit-extended-resource", "implicit-extended-resource"} <= kinds
    assert default_plane.events("allocation.foreign") == []
    assert default_plane.events("routing.unrouted_pod") == []


@pytest.mark.timeout(600)
async def test_a_pod_that_turns_dra_backed_later_is_reported(
    default_plane: Plane, api: Client
) -> None:
    suffix = uuid.uuid4().hex[:6]
    ns, name = f"late-{suffix}", f"late-{suffix}.example.com/gpu"
    await api.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    )
    early = await api.create(PODS, _asking("early", name), namespace=ns)
    assert early["spec"]["schedulerName"] == "default-scheduler"  # nothing maps it yet

    await api.create(dra("deviceclasses"), _class(f"late-{suffix}", name))
    assert await published(api, name)

    async def reported() -> list[dict[str, Any]]:
        found = await api.list(CORE_EVENTS, namespace=ns)
        return [e for e in found.get("items") or () if e["reason"] == "NotRoutedToDRAOperator"]

    (event, *_) = await wait_for(reported, what="the NotRoutedToDRAOperator Event")
    assert event["type"] == "Warning" and event["involvedObject"]["name"] == "early"
    assert name in event["message"]
    (line, *_) = default_plane.events("routing.unrouted_pod")
    assert line["pod"] == f"{ns}/early" and line["resources"] == [name]
    assert f"{UNROUTED_SAMPLE} 1.0" in default_plane.metrics()

    late = await api.create(PODS, _asking("late", name), namespace=ns)
    assert late["spec"]["schedulerName"] == names.DEFAULT_SCHEDULER_NAME

    await api.delete(PODS, "early", namespace=ns, grace_period_seconds=0)
    await wait_for(
        lambda: f"{UNROUTED_SAMPLE} 0.0" in default_plane.metrics(),
        what="the gauge to clear once the pod is gone",
    )


@pytest.mark.timeout(600)
async def test_the_parameters_are_written_again_when_deleted(api: Client) -> None:
    name = f"back-{uuid.uuid4().hex[:6]}.example.com/gpu"
    await api.create(dra("deviceclasses"), _class(name.split(".")[0], name))
    assert await published(api, name)

    await api.delete(CONFIG_MAPS, names.EXTENDED_RESOURCES_PARAMS, namespace=PARAMS_NAMESPACE)

    assert await published(api, name, timeout=60)


@pytest.mark.skipif(
    os.environ.get("ROUTING_RELEASES") != "1", reason="ROUTING_RELEASES=1: make test-routing"
)
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(
    ("release", "apiserver_args", "layout"),
    [
        pytest.param("1.34", (), "require-scheduler-only", id="1.34"),
        pytest.param("1.34", BETA_GATES, "release-1.34", id="1.34-mutating-policies-on"),
        pytest.param("1.35", (), "require-scheduler-only", id="1.35"),
        pytest.param("1.35", BETA_GATES, "release-1.34", id="1.35-mutating-policies-on"),
        pytest.param("1.36", (), "", id="1.36"),
        pytest.param("1.37", (), "", id="1.37"),
    ],
)
async def test_the_install_of_each_release_routes_or_refuses(
    tmp_path: Path, release: str, apiserver_args: tuple[str, ...], layout: str
) -> None:
    with routed_plane(tmp_path, release, apiserver_args) as plane:
        assert plane.layout == layout
        async with Client.from_kubeconfig(plane.state.admin_kubeconfig) as api:
            await _leading(api, plane)
            results = await _races(api, plane, RACES)

    routed = layout != "require-scheduler-only"
    for result in results:
        # Without MutatingAdmissionPolicy every pod naming kube-scheduler is refused.
        assert (result.refused == 0) is routed, result
    assert plane.events("allocation.foreign") == []


def _asking(name: str, resource: str) -> dict[str, Any]:
    amounts = {resource: "1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {"name": "c", "image": "x", "resources": {"requests": amounts, "limits": amounts}}
            ]
        },
    }


def _class(name: str, extended: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"extendedResourceName": extended},
    }
