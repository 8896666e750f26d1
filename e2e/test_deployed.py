"""The operator as users install it, running on the local real nodes, and upgraded under load.

Runs with DRA_OPERATOR_E2E_OPERATOR=deployed and no KUBECONFIG (the suite then installs the
image of `make image` with deploy/, `deployed_control_plane`); skipped in the other modes.
Covers: the Deployment's pods run the image as UID 65532 on a read-only root filesystem, pass
their probes, and one of them holds the Lease, reaching the apiserver through the `kubernetes`
Service; a rolling restart of both replicas while pods with claims keep arriving; deploy/
replaced by the Helm chart, then `helm upgrade` to another image reference and other values
while pods keep arriving. Through each change every pod of the stream is bound with a claim
allocated and reserved for it, and `dra-operator verify` finds no device allocated twice.
These run last (e2e/conftest.py): they replace the install the other scenarios used.
"""

from __future__ import annotations

import asyncio
import collections
import os
from collections.abc import Callable

import pytest

from dra_operator.kube import Client
from e2e._install import HELM, UPGRADE_TAG, Installer, install_with, version
from e2e._scene import Scene, devices
from e2e._target import DEPLOYED_LEASE, wait_for_leader

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.skipif(
        install_with(os.environ) == HELM,
        reason="these replace deploy/'s install with the chart themselves: run with kustomize",
    ),
]

MIN_PODS = 6
LIVE = 3  # pods kept at once, below the session's 4 devices: each new one fits
PLACE_TIMEOUT = 180.0  # a handover: the old leader stops, the new one syncs its caches


async def _stream_during(scene: Scene, change: Callable[[], None], prefix: str) -> list[str]:
    """Create pods with claims one after another while `change` runs (in a thread), at least
    MIN_PODS of them, each placed before the next, deleting the oldest beyond LIVE; the
    names of the pods still there."""
    await scene.template()
    changing = asyncio.create_task(asyncio.to_thread(change))
    live: collections.deque[str] = collections.deque()
    made = 0
    while not changing.done() or made < MIN_PODS:
        name = f"{prefix}-{made}"
        made += 1
        await scene.pod(name)
        await scene.placed(name, timeout=PLACE_TIMEOUT)
        live.append(name)
        if len(live) > LIVE:
            await scene.delete_pod(live.popleft())
    await changing
    return list(live)


async def _placed_on_distinct_devices(scene: Scene, names: list[str]) -> None:
    used = []
    for name in names:
        _, claim = await scene.placed(name)
        used += devices(claim)
    assert len(set(used)) == len(used), used
    await scene.verify_clean()


def _operator_pods(installer: Installer) -> dict[str, dict[str, object]]:
    return {p["metadata"]["name"]: p for p in installer.pods()}


async def test_the_deployment_runs_read_only_as_65532_and_leads(
    installer: Installer, e2e_api: Client, operator: str
) -> None:
    pods = _operator_pods(installer)
    assert len(pods) == 2
    assert operator in pods  # the Lease holder is one of the Deployment's pods
    for name, pod in pods.items():
        (status,) = pod["status"]["containerStatuses"]  # type: ignore[index]
        assert status["ready"] and status["started"], name
        (container,) = pod["spec"]["containers"]  # type: ignore[index]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["image"] == f"dra-operator:{version()}"
        # What the container itself sees: its user, and a root filesystem it cannot write.
        script = (
            "import os, sys\n"
            "print(os.getuid(), os.getgid())\n"
            "try:\n    open('/opt/dra-operator/probe', 'w')\n"
            "except OSError as exc:\n    print(exc.strerror)\n"
        )
        seen = installer.exec(name, "python", "-c", script)
        assert seen.split("\n", 1) == ["65532 65532", "Read-only file system\n"], seen
    leader = await wait_for_leader(e2e_api, *DEPLOYED_LEASE)
    assert leader in pods


async def test_a_rolling_restart_of_both_replicas_loses_no_allocation(
    installer: Installer, scene: Scene
) -> None:
    before = set(_operator_pods(installer))

    def restart() -> None:
        installer.rollout_restart()
        installer.rollout_status()

    live = await _stream_during(scene, restart, "restart")
    assert not before & set(_operator_pods(installer))  # both replicas were replaced
    await _placed_on_distinct_devices(scene, live)


async def test_helm_replaces_deploy_and_upgrades_without_losing_allocations(
    installer: Installer, scene: Scene, e2e_api: Client
) -> None:
    installer.delete_kustomize()
    await asyncio.to_thread(installer.helm_install, {})
    first = await wait_for_leader(e2e_api, *DEPLOYED_LEASE, timeout=PLACE_TIMEOUT)
    assert first in _operator_pods(installer)

    def upgrade() -> None:
        installer.helm_upgrade({"image": {"tag": UPGRADE_TAG}, "logLevel": "debug"})
        installer.rollout_status()

    live = await _stream_during(scene, upgrade, "upgrade")
    pods = _operator_pods(installer)
    for pod in pods.values():
        (container,) = pod["spec"]["containers"]  # type: ignore[index]
        assert container["image"] == f"dra-operator:{UPGRADE_TAG}"
        assert "--log-level=debug" in container["args"]
    assert await wait_for_leader(e2e_api, *DEPLOYED_LEASE, timeout=PLACE_TIMEOUT) in pods
    await _placed_on_distinct_devices(scene, live)
