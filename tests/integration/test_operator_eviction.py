"""Device-taint eviction, live: `dra-operator run` and `dra-operator taint` on a real API server.

Each test publishes a slice with two devices on a node, allocates one claim per device (with
the tolerations under test in the allocation result), binds a pod to each and lets the claims
controller reserve the claims. Pods carry a test finalizer so that, once deleted, the
DisruptionTarget condition and the deletion can still be read; the finalizer is then lifted.

Covers: an untolerated NoExecute slice taint evicts at once; tolerationSeconds delays it by that
much (condition time against the taint's timeAdded, second granularity); a toleration without
seconds keeps the pod while an untolerated neighbour goes; removing the taint before the
deadline cancels (event "Cancelling deletion") while a still-tainted neighbour goes; a
DeviceTaintRule evicts and its status goes PodsPendingEviction -> Completed; a NoSchedule taint
evicts nobody; the evicted pod's claim is deallocated and the deletion counted in the metrics;
`verify` finds nothing wrong in the namespace afterwards. The operator runs the claims,
scheduler and eviction controllers, as `dra-operator run` does by default, so one test goes
end to end: a pod with a claim template is scheduled by the operator, evicted by a taint on its
device, its generated claim deallocated and deleted, and a recreated pod gets the other device.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import (
    claim_spec,
    claim_template,
    consumer_pod,
    device_class,
    resource_claim,
    resource_slice,
    selects_driver,
)
from tests.support.kubelet_standin import KubeletStandIn
from tests.support.operator import verify_clean, wait_for

from dra_operator import controlplane, names, verify
from dra_operator.cli._cluster_options import Target
from dra_operator.cli._taint import change_taint
from dra_operator.errors import APINotFoundError
from dra_operator.kube import CORE_EVENTS, PODS, Client, PatchType, Resource, dra
from dra_operator.model import parse_pod

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
CLASSES = dra("deviceclasses")
TEMPLATES = dra("resourceclaimtemplates")
SLICES = dra("resourceslices")
DRIVER = "taint.example.com"
FINALIZER = "test.dra-operator.dev/keep"
TOLERANCE = 2.5  # seconds: timestamps are whole seconds, and the operator reacts to watches


def _time(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


class Scene:
    def __init__(self, api: Client, namespace: str, node: str, kubeconfig: str) -> None:
        self.api = api
        self.namespace = namespace
        self.node = node
        self.pool = f"pool-{namespace}"
        self.kubeconfig = kubeconfig
        self.operator: Any = None  # tests.support.operator.InProcessOperator

    async def publish(self) -> None:
        devices = [{"name": "dev-0"}, {"name": "dev-1"}]
        pool = resource_slice(self.node, DRIVER, devices, name=self.pool, pool=self.pool)
        await self.api.create(SLICES, pool)

    async def consumer(self, name: str, device: str, tolerations: list[Any]) -> None:
        """Claim `name` allocated `device` with `tolerations`; pod `name` bound and reserved."""
        body = resource_claim(
            name, claim_spec("gpu"), finalizers=[names.DELETE_PROTECTION_FINALIZER]
        )
        claim = await self.api.create(CLAIMS, body, namespace=self.namespace)
        result: dict[str, Any] = {
            "request": "gpu",
            "driver": DRIVER,
            "pool": self.pool,
            "device": device,
        }
        if tolerations:
            result["tolerations"] = tolerations
        claim["status"] = {"allocation": {"devices": {"results": [result]}}}
        await self.api.update(CLAIMS, claim, subresource="status")
        pod = consumer_pod(name, claim=name, node=self.node, finalizers=[FINALIZER])
        created = await self.api.create(PODS, pod, namespace=self.namespace)
        uid = created["metadata"]["uid"]

        async def reserved() -> bool:
            current = await self.api.get(CLAIMS, name, namespace=self.namespace)
            refs = (current.get("status") or {}).get("reservedFor") or []
            return any(r.get("uid") == uid for r in refs)

        await wait_for(reserved, what=f"claim {name} reserved for its pod")

    async def scheduled(self, name: str) -> tuple[str, str]:
        """Pod `name` from template "tmpl", bound by the operator: (its device, its claim)."""
        pod = consumer_pod(name, template="tmpl", scheduler=names.DEFAULT_SCHEDULER_NAME)
        await self.api.create(PODS, pod, namespace=self.namespace)

        async def bound() -> tuple[str, str] | None:
            found = parse_pod(await self.api.get(PODS, name, namespace=self.namespace))
            statuses = found.status.resource_claim_statuses
            if found.spec.node_name != self.node or not statuses:
                return None
            claim_name = statuses[0].resource_claim_name
            assert claim_name is not None
            claim = await self.api.get(CLAIMS, claim_name, namespace=self.namespace)
            (result,) = claim["status"]["allocation"]["devices"]["results"]
            assert (result["driver"], result["pool"]) == (DRIVER, self.pool)
            return result["device"], claim_name

        return await wait_for(bound, what=f"pod {name} scheduled onto {self.node}")

    async def gone(self, resource: Resource, name: str) -> bool:
        try:
            await self.api.get(resource, name, namespace=self.namespace)
        except APINotFoundError:
            return True
        return False

    async def taint(self, *, add: bool = True, **options: Any) -> str:
        base = {
            "target": Target(Path(self.kubeconfig)),
            "driver": DRIVER,
            "pool": self.pool,
            "device": None,
            "key": "example.com/broken",
            "value": "true",
            "effect": "NoExecute",
            "effect_filter": None,
            "via": "slice",
            "name": None,
        }
        return await change_taint({**base, **options}, add=add)

    async def terminating(self, name: str) -> dict[str, Any] | None:
        pod = await self.api.get(PODS, name, namespace=self.namespace)
        return pod if pod["metadata"].get("deletionTimestamp") else None

    async def events(self, name: str) -> list[dict[str, Any]]:
        found = await self.api.list(
            CORE_EVENTS,
            namespace=self.namespace,
            field_selector=f"involvedObject.name={name},reason=DeviceTaintManagerEviction",
        )
        return list(found.get("items") or [])

    async def slice_taint_time(self, device: str) -> datetime.datetime:
        raw = await self.api.get(SLICES, self.pool)
        entry = next(d for d in raw["spec"]["devices"] if d["name"] == device)
        return _time(entry["taints"][0]["timeAdded"])

    async def release(self, name: str) -> None:
        with contextlib.suppress(APINotFoundError):
            await self.api.patch(
                PODS, name, {"metadata": {"finalizers": None}}, namespace=self.namespace
            )


def disruption(pod: dict[str, Any]) -> dict[str, Any]:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return next(c for c in conditions if c["type"] == "DisruptionTarget")


@pytest.fixture
async def scene(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    control_plane: controlplane.ControlPlaneState,
    run_operator: Any,
    kubelet_standin: KubeletStandIn,
) -> AsyncIterator[Scene]:
    node = await make_node()
    s = Scene(admin_api, namespace, node["metadata"]["name"], str(control_plane.admin_kubeconfig))
    await s.publish()
    s.operator = await run_operator(controllers=frozenset({"claims", "scheduler", "eviction"}))
    yield s
    for name in ("a", "b"):
        await s.release(name)
    with contextlib.suppress(APINotFoundError):
        await admin_api.delete(SLICES, s.pool)


async def assert_verified(api: Client, namespace: str) -> None:
    state = await verify.read_cluster(api, namespace=namespace)
    errors = [v for v in verify.check(state) if v.severity == verify.Severity.ERROR]
    assert errors == []


async def test_untolerated_taint_evicts_at_once_and_frees_the_claim(scene: Scene) -> None:
    await scene.consumer("a", "dev-0", [])
    await scene.taint(device="dev-0")
    pod = await wait_for(lambda: scene.terminating("a"), what="pod a terminating")
    added = await scene.slice_taint_time("dev-0")
    condition = disruption(pod)
    assert condition["reason"] == "DeletionByDeviceTaintManager"
    assert condition["message"] == "Device Taint manager: deleting due to NoExecute taint"
    assert abs((_time(condition["lastTransitionTime"]) - added).total_seconds()) <= TOLERANCE
    events = await scene.events("a")
    assert [e["message"] for e in events] == ["Marking for deletion"]
    await scene.release("a")

    async def deallocated() -> bool:
        claim = await scene.api.get(CLAIMS, "a", namespace=scene.namespace)
        return not (claim.get("status") or {}).get("allocation")

    await wait_for(deallocated, what="claim a deallocated")
    await assert_verified(scene.api, scene.namespace)
    metrics = scene.operator.operator.metrics.render().decode()
    assert "device_taint_eviction_controller_pod_deletions_total 1.0" in metrics


async def test_toleration_seconds_delay_the_eviction(scene: Scene) -> None:
    toleration = {"key": "example.com/broken", "operator": "Exists", "effect": "NoExecute"}
    await scene.consumer("a", "dev-0", [{**toleration, "tolerationSeconds": 6}])
    await scene.taint(device="dev-0")
    pod = await wait_for(lambda: scene.terminating("a"), what="pod a terminating")
    added = await scene.slice_taint_time("dev-0")
    evicted = _time(disruption(pod)["lastTransitionTime"])
    assert abs((evicted - added).total_seconds() - 6) <= TOLERANCE
    await assert_verified(scene.api, scene.namespace)


async def test_toleration_without_seconds_keeps_the_pod(scene: Scene) -> None:
    toleration = {"key": "example.com/broken", "operator": "Exists", "effect": "NoExecute"}
    await scene.consumer("a", "dev-0", [toleration])
    await scene.consumer("b", "dev-1", [])
    await scene.taint()  # the whole pool
    await wait_for(lambda: scene.terminating("b"), what="untolerating neighbour b evicted")
    assert await scene.terminating("a") is None
    assert await scene.events("a") == []


async def test_removed_taint_cancels_the_eviction(scene: Scene) -> None:
    toleration = {"key": "example.com/broken", "operator": "Exists", "effect": "NoExecute"}
    delayed = [{**toleration, "tolerationSeconds": 5}]
    await scene.consumer("a", "dev-0", delayed)
    await scene.consumer("b", "dev-1", delayed)
    await scene.taint()
    await scene.taint(add=False, device="dev-0")

    async def cancelled() -> bool:
        return [e["message"] for e in await scene.events("a")] == ["Cancelling deletion"]

    await wait_for(cancelled, what="the cancelling event for a")
    await wait_for(lambda: scene.terminating("b"), what="still-tainted neighbour b evicted")
    assert await scene.terminating("a") is None
    await assert_verified(scene.api, scene.namespace)


async def test_device_taint_rule_evicts_and_reports_progress(scene: Scene) -> None:
    toleration = {"key": "example.com/broken", "operator": "Exists", "effect": "NoExecute"}
    await scene.consumer("a", "dev-0", [{**toleration, "tolerationSeconds": 3}])
    name = f"rule-{scene.namespace}"
    await scene.taint(via="rule", device="dev-0", name=name)
    rules = dra("devicetaintrules", "v1beta2")
    seen: list[str] = []

    async def reason_is(wanted: str) -> bool:
        rule = await scene.api.get(rules, name)
        conditions = (rule.get("status") or {}).get("conditions") or []
        reasons = [c["reason"] for c in conditions if c["type"] == "EvictionInProgress"]
        if reasons and (not seen or seen[-1] != reasons[0]):
            seen.append(reasons[0])
        return wanted in reasons

    try:
        await wait_for(lambda: reason_is("PodsPendingEviction"), what="PodsPendingEviction")
        await wait_for(lambda: scene.terminating("a"), what="pod a terminating")
        await wait_for(lambda: reason_is("Completed"), what="Completed")
        assert seen == ["PodsPendingEviction", "Completed"]
    finally:
        await scene.taint(add=False, via="rule", name=name)


async def test_no_schedule_taint_does_not_evict(scene: Scene) -> None:
    await scene.consumer("a", "dev-0", [])
    await scene.consumer("b", "dev-1", [])
    await scene.taint(device="dev-0", effect="NoSchedule")
    await scene.taint(device="dev-1")
    await wait_for(lambda: scene.terminating("b"), what="NoExecute neighbour b evicted")
    assert await scene.terminating("a") is None
    assert await scene.events("a") == []


async def test_evicted_claim_is_freed_and_a_recreated_pod_gets_the_other_device(
    scene: Scene, control_plane: controlplane.ControlPlaneState
) -> None:
    gpu = f"taint-{scene.namespace}"
    await scene.api.create(CLASSES, device_class(gpu, selects_driver(DRIVER)))
    try:
        template = claim_template("tmpl", claim_spec(gpu))
        await scene.api.create(TEMPLATES, template, namespace=scene.namespace)
        first, claim = await scene.scheduled("a")
        # A test finalizer keeps the generated claim readable after its deletion.
        add = [{"op": "add", "path": "/metadata/finalizers/-", "value": FINALIZER}]
        await scene.api.patch(
            CLAIMS, claim, add, namespace=scene.namespace, patch_type=PatchType.JSON
        )
        await scene.taint(device=first)
        await wait_for(lambda: scene.gone(PODS, "a"), what="pod a evicted and deleted")
        assert [e["message"] for e in await scene.events("a")] == ["Marking for deletion"]

        async def freed() -> dict[str, Any] | None:
            found = await scene.api.get(CLAIMS, claim, namespace=scene.namespace)
            status, meta = found.get("status") or {}, found["metadata"]
            done = meta.get("deletionTimestamp") and meta.get("finalizers") == [FINALIZER]
            return found if done and not status.get("reservedFor") else None

        freed_claim = await wait_for(freed, what=f"claim {claim} released and being deleted")
        assert not (freed_claim.get("status") or {}).get("allocation")
        await scene.api.patch(
            CLAIMS, claim, {"metadata": {"finalizers": None}}, namespace=scene.namespace
        )
        await wait_for(lambda: scene.gone(CLAIMS, claim), what=f"claim {claim} deleted")
        second, _ = await scene.scheduled("b")
        assert {first, second} == {"dev-0", "dev-1"}
        await verify_clean(control_plane, scene.namespace)
    finally:
        with contextlib.suppress(APINotFoundError):
            await scene.api.delete(CLASSES, gpu)
