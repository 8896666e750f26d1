"""Upgrading the deployed operator beside kube-scheduler: no window where both allocate.

Runs with DRA_OPERATOR_E2E_OPERATOR=deployed and no KUBECONFIG, after test_deployed
(e2e/conftest.py): the local control plane in_cluster, where kube-scheduler and
kube-controller-manager run leader-elected, and the operator runs as a Deployment of the image
of `make image` on the real nodes. Whatever install is there is removed first, then:

* the chart: tests/data/dra-operator-0.1.0.tgz (the chart before the routing of extended
  resources) installed with `routing.mutate=true,routing.enforce=true`, as its docs had users
  run it beside kube-scheduler; then `helm upgrade` to deploy/helm/dra-operator with its
  defaults and another image reference, so both replicas are replaced and the Lease changes
  hands while the routing changes;
* kustomize: tests/data/beside-kube-scheduler-0.1.0.yaml (the former
  deploy/beside-kube-scheduler, rendered) applied whole; then docs/install.md's upgrade,
  `kubectl apply --server-side -k crds/` and `kubectl apply --server-side -k deploy/`.

Before, during and after each upgrade, pods arrive one after another: pods with a claim,
alternately naming default-scheduler and dra-operator, and every fourth a pod without devices
naming default-scheduler. Checked: every pod with a claim came back from its creation named
dra-operator; every pod was bound (a claim pod with its claim allocated and reserved for it);
the Scheduled Events of every pod come from the scheduler its `spec.schedulerName` names and
no other (dra-operator for the claim pods, kube-scheduler's `default-scheduler` for the
others); no device in two live claims after any placement; `dra-operator verify` clean.

Only this tree's image is built here, so it runs under the previous install too; while that
install is in place, this tree's ClusterRole is also bound to the operator's ServiceAccount
(the previous rules lack what this code reads: PodGroups, volumes, PodDisruptionBudgets). The
binding is removed once the upgrade returns, so the pods after it run under the install's own.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.manifests import DEPLOY, NAMESPACE, REPO

from dra_operator import controlplane, names
from dra_operator.kube import CORE_EVENTS, PODS, Client
from e2e._install import HELM, UPGRADE_TAG, Installer, install_with
from e2e._scene import Scene, devices
from e2e._target import DEPLOYED_LEASE, wait_for_leader

pytestmark = [
    pytest.mark.controlplane,
    pytest.mark.skipif(
        install_with(os.environ) == HELM,
        reason="these replace the install with the previous one themselves: run with kustomize",
    ),
]

DATA = REPO / "tests" / "data"
PREVIOUS_CHART = DATA / "dra-operator-0.1.0.tgz"
PREVIOUS_LAYOUT = DATA / "beside-kube-scheduler-0.1.0.yaml"
KUBE_SCHEDULER = "default-scheduler"
BEFORE = AFTER = 4  # pods placed before the upgrade starts, and after it returns
LIVE = 3  # claim pods kept at once, below the session's 4 devices: each new one fits
PLACE_TIMEOUT = 180.0  # a handover: the old leader stops, the new one syncs its caches
ROUTES = ("dra-operator-route-claims", "dra-operator-route-extended-resources")
PLAIN = "trap 'exit 0' TERM; sleep 3600 & wait"


class Arrivals:
    """Pods created one after another in `scene`, each bound before the next, while an upgrade
    runs; what they showed."""

    def __init__(self, scene: Scene, prefix: str) -> None:
        self.scene = scene
        self.prefix = prefix
        self.expected: dict[str, str] = {}  # pod -> the scheduler that must bind it
        self.unrouted: list[str] = []
        self.shared: list[tuple[str, str, str]] = []
        self._live: collections.deque[str] = collections.deque()

    async def during(self, change: Callable[[], None], after: Callable[[], None]) -> None:
        """BEFORE pods, then pods while `change` runs (in a thread), then `after`, then AFTER
        pods."""
        for _ in range(BEFORE):
            await self._one()
        changing = asyncio.create_task(asyncio.to_thread(change))
        while not changing.done():
            await self._one()
        await changing
        await asyncio.to_thread(after)
        for _ in range(AFTER):
            await self._one()

    async def _one(self) -> None:
        index = len(self.expected)
        name = f"{self.prefix}-{index}"
        if index % 4 == 3:
            self.expected[name] = KUBE_SCHEDULER
            await self.scene.api.create(PODS, _plain(name), namespace=self.scene.namespace)
            await _bound(self.scene, name)
            await self.scene.delete_pod(name)
            return
        asked = KUBE_SCHEDULER if index % 2 == 0 else names.DEFAULT_SCHEDULER_NAME
        self.expected[name] = names.DEFAULT_SCHEDULER_NAME
        created = await self.scene.pod(name, spec={"schedulerName": asked})
        if created["spec"]["schedulerName"] != names.DEFAULT_SCHEDULER_NAME:
            self.unrouted.append(name)
        await self.scene.placed(name, timeout=PLACE_TIMEOUT)
        self._live.append(name)
        if len(self._live) > LIVE:
            await self.scene.delete_pod(self._live.popleft())
        used: list[tuple[str, str, str]] = []
        for pod in self._live:
            _, claim = await self.scene.placed(pod)
            used += devices(claim)
        self.shared += [d for d, n in collections.Counter(used).items() if n > 1]

    async def check(self) -> None:
        binders = await _binders(self.scene.api, self.scene.namespace)
        _record(self.prefix, self.expected, binders, self.unrouted, self.shared)
        assert self.unrouted == [], "pods with claims that kept default-scheduler"
        assert self.shared == [], "devices in two live claims"
        wrong = {
            pod: sorted(binders[pod])
            for pod, scheduler in self.expected.items()
            if binders[pod] - {scheduler}
        }
        assert wrong == {}, "pods with Scheduled Events from another scheduler"
        plain = [p for p, s in self.expected.items() if s == KUBE_SCHEDULER]
        assert all(binders[p] == {KUBE_SCHEDULER} for p in plain), binders
        assert any(binders[p] for p, s in self.expected.items() if s != KUBE_SCHEDULER)
        await self.scene.verify_clean()


def _record(
    upgrade: str,
    expected: dict[str, str],
    binders: collections.defaultdict[str, set[str]],
    unrouted: list[str],
    shared: list[tuple[str, str, str]],
) -> None:
    """With ROUTING_FIGURES naming a file, one JSON line of counts for docs/coexistence.md."""
    target = os.environ.get("ROUTING_FIGURES")
    if not target:
        return
    events = collections.Counter(who for pod in expected for who in binders[pod])
    line = {
        "upgrade": f"deployed {upgrade}",
        "pods": len(expected),
        "claim_pods": sum(s != KUBE_SCHEDULER for s in expected.values()),
        "scheduled_events": dict(events),
        "pods_with_two_binders": sum(len(binders[pod]) > 1 for pod in expected),
        "unrouted": len(unrouted),
        "devices_in_two_live_claims": len(shared),
    }
    with Path(target).open("a") as out:
        out.write(json.dumps(line) + "\n")


def _plain(name: str) -> dict[str, Any]:
    """A pod that needs no device, for kube-scheduler."""
    container = {"name": "main", "image": controlplane.TEST_IMAGE, "command": ["sh", "-c", PLAIN]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": KUBE_SCHEDULER,
            "terminationGracePeriodSeconds": 1,
            "containers": [container],
        },
    }


async def _bound(scene: Scene, name: str) -> None:
    for _ in range(int(PLACE_TIMEOUT / 0.5)):
        pod = await scene.get_pod(name)
        if pod and pod["spec"].get("nodeName"):
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"pod {name} never bound")


async def _binders(api: Client, namespace: str) -> collections.defaultdict[str, set[str]]:
    """Per pod, who reported binding it: kube-scheduler's Events (events.k8s.io/v1) carry
    `reportingComponent`, the operator's (core/v1) `source.component`."""
    found = await api.list(CORE_EVENTS, namespace=namespace, field_selector="reason=Scheduled")
    binders: collections.defaultdict[str, set[str]] = collections.defaultdict(set)
    for event in found.get("items") or ():
        who = event.get("reportingComponent") or (event.get("source") or {}).get("component")
        binders[event["involvedObject"]["name"]].add(str(who))
    return binders


def _current_rules(installer: Installer) -> str:
    """This tree's ClusterRoles under names of their own, bound to the operator's
    ServiceAccount."""
    kubectl = controlplane.find_binaries().path("kubectl")
    documents: list[dict[str, Any]] = []
    for role in controlplane.load_cluster_roles(DEPLOY / "base", kubectl):
        name = f"{role['metadata']['name']}-e2e-current"
        documents.append({**role, "metadata": {"name": name}})
        documents.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": name,
                },
                "subjects": [
                    {"kind": "ServiceAccount", "name": "dra-operator", "namespace": NAMESPACE}
                ],
            }
        )
    return yaml.safe_dump_all(documents)


def _remove_install(installer: Installer) -> None:
    if installer.has_helm_release():
        installer.helm_uninstall()
    else:
        installer.delete_kustomize()


async def _leads(installer: Installer, api: Client) -> None:
    leader = await wait_for_leader(api, *DEPLOYED_LEASE, timeout=PLACE_TIMEOUT)
    assert leader in {p["metadata"]["name"] for p in installer.pods()}


def _routes(installer: Installer) -> set[str]:
    found = installer.kubectl_json("get", "mutatingadmissionpolicybindings")
    return {b["metadata"]["name"] for b in found["items"]}


@pytest.mark.timeout(1800)
async def test_a_chart_upgrade_from_0_1_0_keeps_every_pod_on_one_scheduler(
    installer: Installer, scene: Scene, e2e_api: Client
) -> None:
    rules = _current_rules(installer)
    await asyncio.to_thread(_remove_install, installer)
    await asyncio.to_thread(installer.apply_stdin, rules)
    previous = {"routing": {"mutate": True, "enforce": True}}
    await asyncio.to_thread(
        installer.helm_install, previous, take_ownership=True, chart=PREVIOUS_CHART
    )
    await _leads(installer, e2e_api)
    assert _routes(installer) == {ROUTES[0]}
    await scene.template()

    def upgrade() -> None:
        installer.helm_upgrade({"image": {"tag": UPGRADE_TAG}})
        installer.rollout_status()

    arrivals = Arrivals(scene, "chart")
    await arrivals.during(upgrade, lambda: installer.delete_stdin(rules))
    await arrivals.check()
    for pod in installer.pods():
        (container,) = pod["spec"]["containers"]
        assert container["image"] == f"dra-operator:{UPGRADE_TAG}"
    await _leads(installer, e2e_api)
    assert _routes(installer) == set(ROUTES)


@pytest.mark.timeout(1800)
async def test_applying_deploy_over_the_previous_layout_keeps_every_pod_on_one_scheduler(
    installer: Installer, scene: Scene, e2e_api: Client
) -> None:
    rules = _current_rules(installer)
    await asyncio.to_thread(_remove_install, installer)
    await asyncio.to_thread(installer.apply_stdin, rules)
    await asyncio.to_thread(installer.apply_file, PREVIOUS_LAYOUT)
    await asyncio.to_thread(installer.rollout_status)
    await _leads(installer, e2e_api)
    assert _routes(installer) == {ROUTES[0]}
    await scene.template()

    def upgrade() -> None:
        installer.apply_layout()
        installer.rollout_status()

    arrivals = Arrivals(scene, "kustomize")
    await arrivals.during(upgrade, lambda: installer.delete_stdin(rules))
    await arrivals.check()
    await _leads(installer, e2e_api)
    assert _routes(installer) == set(ROUTES)
