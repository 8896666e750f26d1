"""DeviceTaintRules steer the live scheduler and `explain`, against a real kube-apiserver.

The operator runs in-process as the RBAC-limited operator identity (deploy/base's ClusterRole)
with the claims and scheduler controllers. The session control plane serves DeviceTaintRules
(v1beta2) and has device taints on, so rules are in effect as in upstream's scheduler with
DRADeviceTaintRules on: a NoSchedule rule keeps untolerating claims off the devices it selects,
a rule on every device leaves the pod unschedulable with the taint named in FailedScheduling
and by `explain`, and removing the rule lets the parked pod schedule.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import (
    claim_spec,
    device_class,
    driver_of,
    gpus,
    resource_claim,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import InProcessOperator, failed_scheduling, verify_clean, wait_for

from dra_operator import controlplane
from dra_operator.cluster import ObjectKey
from dra_operator.kube import PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")
RULES = dra("devicetaintrules", "v1beta2")
BIN = Path(sys.executable).parent


class Scene:
    """One test's class, a node with two devices, and its DeviceTaintRules."""

    def __init__(self, api: Client, namespace: str, node: str, operator: InProcessOperator):
        self.api, self.namespace, self.node, self.operator = api, namespace, node, operator
        self.gpu = unique_name("gpu")
        self.driver = driver_of(self.gpu)
        self.rules: list[str] = []

    async def setup(self, cluster: Callable[..., Any]) -> None:
        await cluster(CLASSES, device_class(self.gpu))
        await cluster(SLICES, resource_slice(self.node, self.driver, gpus(2)))

    async def rule(self, name: str, **selector: str) -> None:
        """A NoSchedule rule on this scene's driver, once the operator's cache holds it."""
        body = {
            "apiVersion": RULES.api_version,
            "kind": "DeviceTaintRule",
            "metadata": {"name": name},
            "spec": {
                "deviceSelector": {"driver": self.driver, **selector},
                "taint": {"key": "example.com/broken", "value": name, "effect": "NoSchedule"},
            },
        }
        await self.api.create(RULES, body)
        self.rules.append(name)
        await wait_for(lambda: self._cached(name, present=True))

    async def remove(self, name: str) -> None:
        await self.api.delete(RULES, name)
        self.rules.remove(name)

    async def _cached(self, name: str, *, present: bool) -> bool:
        assembly = self.operator.operator
        assert assembly is not None and assembly.caches.taint_rules is not None
        return (assembly.caches.taint_rules.get(ObjectKey("", name)) is not None) is present

    async def teardown(self) -> None:
        for name in list(self.rules):
            await self.remove(name)

    async def pod(self, name: str) -> None:
        claim = resource_claim(name, claim_spec(self.gpu))
        await self.api.create(CLAIMS, claim, namespace=self.namespace)
        await self.api.create(PODS, scheduler_pod(name, claim=name), namespace=self.namespace)

    async def bound_device(self, name: str) -> str | None:
        pod = await self.api.get(PODS, name, namespace=self.namespace)
        if not pod["spec"].get("nodeName"):
            return None
        claim = await self.api.get(CLAIMS, name, namespace=self.namespace)
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        assert pod["spec"]["nodeName"] == self.node
        device: str = result["device"]
        return device


@pytest.fixture
async def scene(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    run_operator: Any,
) -> Any:
    operator = await run_operator(controllers=frozenset({"claims", "scheduler"}))
    node = (await make_node())["metadata"]["name"]
    built = Scene(admin_api, namespace, node, operator)
    await built.setup(cluster)
    yield built
    await built.teardown()


async def test_a_rule_on_one_device_sends_the_pod_to_the_other(
    scene: Scene, control_plane: controlplane.ControlPlaneState
) -> None:
    await scene.rule(f"{scene.gpu}-a", pool=scene.node, device="gpu-0")
    await scene.pod("p")
    assert await wait_for(lambda: scene.bound_device("p")) == "gpu-1"
    await verify_clean(control_plane, scene.namespace)


async def test_a_rule_on_every_device_parks_the_pod_until_it_is_removed(
    scene: Scene, control_plane: controlplane.ControlPlaneState
) -> None:
    name = f"{scene.gpu}-all"
    await scene.rule(name)
    await scene.pod("p")
    (message, *_) = await wait_for(lambda: failed_scheduling(scene.api, scene.namespace, "p"))
    assert f"2 with untolerated taint example.com/broken={name}:NoSchedule" in message
    assert await scene.bound_device("p") is None

    proc = await asyncio.create_subprocess_exec(
        str(BIN / "kubectl-dra"),
        "explain",
        "pod",
        "p",
        "-n",
        scene.namespace,
        "-o",
        "json",
        "--kubeconfig",
        str(control_plane.admin_kubeconfig),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 3, out
    body = json.loads(out)
    (verdict,) = [v for v in body["nodes"] if v["node"] == scene.node]
    assert [r["blocking"] for r in verdict["requests"]] == [
        f"taints: 2 with untolerated taint example.com/broken={name}:NoSchedule"
    ]
    assert (body["policy"], body["strategy"]) == ("", "FirstFit")

    await scene.remove(name)
    assert await wait_for(lambda: scene.bound_device("p")) == "gpu-0"
    await verify_clean(control_plane, scene.namespace)
