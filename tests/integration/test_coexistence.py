"""dra-operator beside kube-scheduler and kube-controller-manager (docs/coexistence.md).

On a control plane of its own that runs both upstream components leader-elected, as kind does,
with `dra-operator run` (default flags, deploy/'s RBAC) as a subprocess:

* the race: bursts of pods (5; 20 in `make test-full`) half naming kube-scheduler, half
  dra-operator, from a one-device template and one shared claim, for fewer devices than pods,
  with the routing policies of deploy/ installed: no device allocated twice, no pod claim
  with two generated claims, no stale reservation, `verify` clean, bound pods exactly those
  whose claims were allocated and reserved, every device used;
* the same with the operator started before kube-controller-manager (KCM starts during the
  first burst; the claims controller hands over) and KCM restarted during a later burst;
* without the routing policies the operator says the configuration is unsafe: a log line, the
  `dra_operator_unsafe_configuration` gauge, a Warning Event on kube-scheduler's Lease, and
  `dra-operator verify` names it; each claim kube-scheduler then allocates is logged and
  counted as a foreign allocation; installing the policies clears the gauge.
"""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.coexistence import Components, install_routing, race_once, remove_routing, summarize
from tests.support.controlplane import bind_operator_rbac, require_binaries
from tests.support.counts import scaled
from tests.support.operator import run_verify, wait_for

from dra_operator import controlplane
from dra_operator.errors import APINotFoundError
from dra_operator.kube import CORE_EVENTS, LEASES, NAMESPACES, PODS, Client, dra

pytestmark = pytest.mark.controlplane

RUNS = scaled(5, 20)
KCM = "kube-controller-manager"
UNSAFE_SAMPLE = 'dra_operator_unsafe_configuration{reason="kube-scheduler-without-routing"}'


@pytest.fixture(scope="module")
def upstream_plane(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[controlplane.ControlPlaneState]:
    binaries = controlplane.find_binaries()
    require_binaries(binaries, "etcd", "kube-apiserver", "kubectl", "kube-scheduler", KCM)
    state_dir = tmp_path_factory.mktemp("coexistence")
    state = controlplane.up(state_dir=state_dir, binaries=binaries, with_upstream=True)
    try:
        bind_operator_rbac(state, binaries)
        yield state
    finally:
        controlplane.down(state_dir)


@pytest.fixture
async def admin(upstream_plane: controlplane.ControlPlaneState) -> AsyncIterator[Client]:
    async with Client.from_kubeconfig(upstream_plane.admin_kubeconfig) as api:
        yield api


class Operator:
    """`dra-operator run` with default flags under the operator identity, and its log."""

    def __init__(self, state: controlplane.ControlPlaneState, log: Path) -> None:
        self.log = log
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.metrics_port = probe.getsockname()[1]
        program = Path(sys.executable).with_name("dra-operator")
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    str(program),
                    "run",
                    f"--kubeconfig={state.operator_kubeconfig}",
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
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def start_operator(
    upstream_plane: controlplane.ControlPlaneState, tmp_path: Path
) -> Iterator[Callable[[], Operator]]:
    started: list[Operator] = []

    def start() -> Operator:
        operator = Operator(upstream_plane, tmp_path / f"operator-{len(started)}.log")
        started.append(operator)
        return operator

    yield start
    for operator in started:
        operator.stop()


async def _leading(admin: Client, operator: Operator) -> None:
    async def holds() -> bool:
        assert operator.proc.poll() is None, operator.log.read_text()
        with contextlib.suppress(APINotFoundError):
            lease = await admin.get(LEASES, "dra-operator", namespace="kube-system")
            return bool((lease.get("spec") or {}).get("holderIdentity"))
        return False

    await wait_for(holds, timeout=120, what="the operator to lead")


async def _races(admin: Client, components: Components, restart_at: set[int]) -> None:
    results = []
    for run in range(RUNS):
        during = functools.partial(components.restart, KCM) if run in restart_at else None
        result = await race_once(admin, run, during=during)
        results.append(result)
        assert result.safe, result
    totals = summarize(results)
    assert totals["unsafe_runs"] == totals["overallocated_devices"] == 0, totals
    assert totals["duplicate_claims"] == totals["stale_reservations"] == 0, totals


@pytest.mark.timeout(1200)
async def test_races_beside_kube_scheduler_and_kcm_with_routing(
    admin: Client,
    upstream_plane: controlplane.ControlPlaneState,
    start_operator: Callable[[], Operator],
) -> None:
    await install_routing(admin)
    operator = start_operator()
    await _leading(admin, operator)
    await _races(admin, Components(upstream_plane), restart_at=set())
    assert not any(r.get("controller") == "claims" for r in operator.events("controller.started"))
    assert operator.events("allocation.foreign") == []  # kube-scheduler allocated nothing


@pytest.mark.timeout(1200)
async def test_races_with_the_operator_before_kcm_and_kcm_restarted(
    admin: Client,
    upstream_plane: controlplane.ControlPlaneState,
    start_operator: Callable[[], Operator],
) -> None:
    await install_routing(admin)
    components = Components(upstream_plane)
    await components.restart(KCM, start=False)  # as if it had not started yet
    with contextlib.suppress(APINotFoundError):
        await admin.delete(LEASES, KCM, namespace="kube-system")
    operator = start_operator()
    await _leading(admin, operator)

    def claims_started() -> list[dict[str, Any]]:
        return [r for r in operator.events("controller.started") if r["controller"] == "claims"]

    await wait_for(claims_started, what="our claims controller to run without KCM")

    await _races(admin, components, restart_at={0, RUNS // 2})  # KCM starts, then restarts

    stopped = [r for r in operator.events("controller.stopped") if r["controller"] == "claims"]
    assert stopped, "the claims controller never handed over to kube-controller-manager"


@pytest.mark.timeout(600)
async def test_an_unsafe_configuration_is_reported(
    admin: Client,
    upstream_plane: controlplane.ControlPlaneState,
    start_operator: Callable[[], Operator],
) -> None:
    await remove_routing(admin)
    try:
        operator = start_operator()
        await _leading(admin, operator)
        await wait_for(lambda: operator.events("coexistence.unsafe"), what="the unsafe log line")
        assert f"{UNSAFE_SAMPLE} 1.0" in operator.metrics()

        async def event() -> list[dict[str, Any]]:
            found = await admin.list(CORE_EVENTS, namespace="kube-system")
            return [
                e
                for e in found.get("items") or ()
                if e["reason"] == "UnsafeConfiguration"
                and e["involvedObject"].get("kind") == "Lease"
                and e["involvedObject"].get("name") == "kube-scheduler"
            ]

        (warning, *_) = await wait_for(event, what="the UnsafeConfiguration Event")
        assert warning["type"] == "Warning" and "route-claims" in warning["message"]

        ns = "unsafe"
        with contextlib.suppress(Exception):
            await admin.create(
                NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            )
        await admin.create(dra("resourceclaims"), _claim(ns), namespace=ns)
        await admin.create(PODS, _our_pod(ns), namespace=ns)
        code, out = await run_verify(upstream_plane, ns)
        assert code == 1 and "unsafe-configuration" in out, out

        # Unrouted, kube-scheduler allocates the default-scheduler pods' claims: said too.
        await race_once(admin, 99, settle_timeout=30)
        (foreign, *_) = await wait_for(
            lambda: operator.events("allocation.foreign"), what="the foreign allocation log"
        )
        assert foreign["manager"] == "kube-scheduler" and foreign["pools"], foreign
        assert 'dra_operator_foreign_allocations_total{manager="kube-scheduler"}' in (
            operator.metrics()
        )

        await install_routing(admin)
        await wait_for(
            lambda: f"{UNSAFE_SAMPLE} 0.0" in operator.metrics(),
            timeout=60,
            what="the gauge to clear once the routing policies are installed",
        )
        code, out = await run_verify(upstream_plane, ns)
        assert "unsafe-configuration" not in out, out
    finally:
        await install_routing(admin)


def _claim(ns: str) -> dict[str, Any]:
    spec = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "none"}}]}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "wanted", "namespace": ns},
        "spec": spec,
    }


def _our_pod(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "ours", "namespace": ns},
        "spec": {
            "schedulerName": "dra-operator",
            "containers": [{"name": "c", "image": "x"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "wanted"}],
        },
    }
