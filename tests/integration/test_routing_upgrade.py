"""Upgrading to the routing of every device pod opens no window for two allocators (issue 27).

On the control plane of `_routing_plane` (kube-scheduler and KCM leader-elected, the operator
of this tree running beside them), the previous install first, as its docs had users run it
beside kube-scheduler, then the upgrade docs/install.md prescribes while claim pods keep
arriving (each bound pod deleted, so devices are allocated again and again), then the race of
every kind of pod:

* the chart: tests/data/dra-operator-0.1.0.tgz (the chart before the routing of extended
  resources) installed with `routing.mutate=true,routing.enforce=true`, then
  `helm upgrade` to deploy/helm/dra-operator with its defaults;
* kustomize: tests/data/beside-kube-scheduler-0.1.0.yaml (`kubectl kustomize` of the former
  deploy/beside-kube-scheduler), then `kubectl apply --server-side -k deploy/`.

Checked: every pod that arrived naming kube-scheduler came back renamed to dra-operator (no
moment without the policy), no device in two claims at any reading, no pod placed by
kube-scheduler, `verify` clean; then `RACES` races as in test_routing.py. Lean: 6 pods arrive
before the upgrade and 6 after it, then 1 race; with ROUTING_FULL=1 (`make test-routing`) 20,
20 and 3. Only the routing objects of the kustomize layouts are applied (the operator runs as
a process); the chart is installed whole.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tarfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import yaml
from tests.integration._routing_plane import (
    Plane,
    apply_routing,
    layout_manifests,
    leading,
    races,
    record,
    routed_plane,
)
from tests.integration._routing_race import Arrivals, Arriving
from tests.support.manifests import (
    CHART,
    NAMESPACE,
    REPO,
    helm_env,
    helm_path,
    parse,
    require_binary,
)

from dra_operator.kube import Client

pytestmark = pytest.mark.controlplane

FULL = os.environ.get("ROUTING_FULL") == "1"
RACES = 3 if FULL else 1
DATA = REPO / "tests" / "data"
PREVIOUS_CHART = DATA / "dra-operator-0.1.0.tgz"
PREVIOUS_LAYOUT = DATA / "beside-kube-scheduler-0.1.0.yaml"
BEFORE, DURING = (20, 20) if FULL else (6, 6)
"""Pods arriving before the upgrade starts, and at least as many after it returns."""


class Helm:
    """helm against the plane, its state under `home`, release dra-operator."""

    def __init__(self, plane: Plane, home: Path) -> None:
        self.binary = require_binary(helm_path(), "make helm")
        self.env = {
            **os.environ,
            "KUBECONFIG": str(plane.state.admin_kubeconfig),
            **helm_env(home),
        }

    def __call__(self, *args: str | Path) -> str:
        done = subprocess.run(
            [str(self.binary), *map(str, args), "--namespace", NAMESPACE],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env=self.env,
        )
        assert done.returncode == 0, f"helm {args[0]} failed:\n{done.stdout}{done.stderr}"
        return done.stdout


async def _upgrade_while_pods_arrive(
    api: Client, upgrade: Callable[[], Awaitable[object]]
) -> Arrivals:
    arriving = Arriving(api)
    await arriving.start()
    await arriving.until(BEFORE)
    await upgrade()
    await arriving.until(arriving.created + DURING)
    return await arriving.finish()


async def _check(api: Client, plane: Plane, arrived: Arrivals, upgrade: str) -> None:
    record(plane, arrived, upgrade=upgrade)
    assert arrived.safe, arrived
    assert arrived.refused == 0, arrived
    await races(api, plane, RACES, upgrade=upgrade)
    assert plane.events("allocation.foreign") == []
    assert plane.events("routing.unrouted_pod") == []


@pytest.mark.timeout(1200)
async def test_a_chart_upgrade_keeps_every_device_pod_on_one_scheduler(tmp_path: Path) -> None:
    with routed_plane(tmp_path, install=False) as plane:
        helm = Helm(plane, tmp_path / "helm")
        helm(
            "install",
            "dra-operator",
            PREVIOUS_CHART,
            "--create-namespace",
            "--set",
            "routing.mutate=true,routing.enforce=true,replicas=1",
        )
        async with Client.from_kubeconfig(plane.state.admin_kubeconfig) as api:
            await leading(api, plane)
            arrived = await _upgrade_while_pods_arrive(
                api, lambda: asyncio.to_thread(helm, "upgrade", "dra-operator", CHART)
            )
            await _check(api, plane, arrived, "chart 0.1.0")
        status = yaml.safe_load(helm("get", "metadata", "dra-operator", "--output", "yaml"))
        current = yaml.safe_load((CHART / "Chart.yaml").read_text())["version"]
        assert (status["chart"], status["version"]) == ("dra-operator", current), status


@pytest.mark.timeout(1200)
async def test_applying_deploy_over_the_previous_layout_keeps_every_device_pod_on_one_scheduler(
    tmp_path: Path,
) -> None:
    with routed_plane(tmp_path, install=False) as plane:
        apply_routing(plane.state, parse(PREVIOUS_LAYOUT.read_text()), force_conflicts=False)
        async with Client.from_kubeconfig(plane.state.admin_kubeconfig) as api:
            await leading(api, plane)
            arrived = await _upgrade_while_pods_arrive(
                api,
                lambda: asyncio.to_thread(
                    apply_routing, plane.state, layout_manifests(""), force_conflicts=False
                ),
            )
            await _check(api, plane, arrived, "deploy/beside-kube-scheduler")


def test_the_fixtures_are_the_install_before_the_extended_resources_routing() -> None:
    """What the upgrade tests start from: chart 0.1.0 and a layout that route claims only."""
    with tarfile.open(PREVIOUS_CHART) as chart:
        files = chart.getnames()
        meta = chart.extractfile("dra-operator/Chart.yaml")
        assert meta is not None
        assert yaml.safe_load(meta)["version"] == "0.1.0"
    assert "dra-operator/templates/extended-resources.yaml" not in files
    kinds = [d["kind"] for d in parse(PREVIOUS_LAYOUT.read_text())]
    assert kinds.count("MutatingAdmissionPolicy") == 1 and "ConfigMap" not in kinds
