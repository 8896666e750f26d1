"""The live operator's /metrics after scenarios on a real kube-apiserver, and Unreserve.

The operator runs in-process under deploy/base's ClusterRole (`run_operator`) with its metrics
on a free port, and the test scrapes that port as Prometheus would. Its pods are pinned to the
test's node (`nodeSelector`), so no other node in the shared control plane adds attempts, and
each scenario is scraped before and after, so the counts compared are the scenario's own.

Covers: three template pods on two devices (two bound, one unschedulable because the devices
are in use: exact attempts, bindings, claim creations); a concurrent writer touching claims
during allocation, one of its writes placed just before the scheduler's by a hook on the
writer (conflicts and retries counted, one allocated attempt per binding or conflict); a
class whose selector fails at runtime (attempt with outcome `error`, CEL evaluation errors);
reconciles, queues, leader status, cache sizes. Then upstream's Unreserve:
a pod deleted between its reservation and its binding leaves its claim unreserved and
deallocated, with only the scheduler running, and the freed device goes to the next pod.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import (
    claim_spec,
    claim_template,
    device_class,
    driver_of,
    gpus,
    resource_claim,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import InProcessOperator, verify_clean, wait_for

from dra_operator import controlplane, errors, names
from dra_operator.app import Kind
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import KubeSchedulerWriter
from dra_operator.kube import CORE_EVENTS, PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
TEMPLATES = dra("resourceclaimtemplates")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")

Page = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
async def operator(run_operator: Any) -> AsyncIterator[InProcessOperator]:
    """Claims and scheduler controllers, leading, with /metrics on a free port."""
    yield await run_operator(
        controllers=frozenset({"claims", "scheduler"}), metrics_address="127.0.0.1:0"
    )


async def scrape(handle: InProcessOperator) -> Page:
    """GET /metrics from the operator's port; every sample by name and labels."""
    assert handle.operator is not None and handle.operator.probes is not None
    port = handle.operator.probes.metrics_port
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{port}/metrics") as resp,
    ):
        assert resp.status == 200
        text = await resp.text()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def sample(page: Page, series: str, /, **labels: str) -> float:
    return page.get((series, frozenset(labels.items())), 0.0)


def attempts(page: Page) -> dict[str, float]:
    """`dra_operator_allocation_attempts_total` as {"outcome/reason": count}."""
    return {
        f"{dict(labels)['outcome']}/{dict(labels)['reason']}": count
        for (name, labels), count in page.items()
        if name == "dra_operator_allocation_attempts_total"
    }


def delta(after: Mapping[str, float], before: Mapping[str, float]) -> dict[str, float]:
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)}


async def _bound(api: Client, namespace: str, pods: list[str]) -> list[str]:
    found = [
        (await api.get(PODS, name, namespace=namespace))["spec"].get("nodeName") for name in pods
    ]
    return [name for name, node in zip(pods, found, strict=True) if node]


async def _cached(handle: InProcessOperator, objects: dict[Kind, list[str]]) -> None:
    """Until the operator's watch caches hold these cluster-scoped objects, so that no pod is
    decided before its node, class or slice is seen (a decision that adds its own attempts)."""
    assert handle.operator is not None
    caches = handle.operator.caches

    def seen() -> bool:
        return all(
            caches.stores[kind].get(ObjectKey("", name)) is not None
            for kind, names_ in objects.items()
            for name in names_
        )

    await wait_for(seen, what="the operator's caches to see the test's objects")


async def _failed_scheduling(api: Client, namespace: str) -> dict[str, list[str]]:
    events = await api.list(CORE_EVENTS, namespace=namespace)
    found: dict[str, list[str]] = {}
    for event in events.get("items") or ():
        if event["reason"] == names.EVENT_FAILED_SCHEDULING:
            found.setdefault(event["involvedObject"]["name"], []).append(event["message"])
    return found


async def test_metrics_after_a_scenario_show_the_expected_counts(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
    monkeypatch: pytest.MonkeyPatch,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    scarce, plenty = unique_name("gpu"), unique_name("gpu")
    broken = unique_name("broken")
    await cluster(CLASSES, device_class(scarce))
    await cluster(CLASSES, device_class(plenty))
    await cluster(
        CLASSES, device_class(broken, f"device.attributes['{driver_of(plenty)}'].missing == 1")
    )
    slices: list[str] = []
    for name, count in ((scarce, 2), (plenty, 7)):
        created = await cluster(SLICES, resource_slice(node, driver_of(name), gpus(count)))
        slices.append(created["metadata"]["name"])
    await _cached(
        operator,
        {Kind.NODES: [node], Kind.CLASSES: [scarce, plenty, broken], Kind.SLICES: slices},
    )
    start = await scrape(operator)
    assert sample(start, "dra_operator_leader_status") == 1

    # 1. Three pods with template claims on two devices: two bound, one unschedulable.
    template = claim_template("tmpl", claim_spec(scarce))
    await admin_api.create(TEMPLATES, template, namespace=namespace)
    trio = ["t0", "t1", "t2"]
    for name in trio:
        pod = scheduler_pod(name, hostname=node, template="tmpl")
        await admin_api.create(PODS, pod, namespace=namespace)

    async def two_bound_one_failed() -> bool:
        bound = await _bound(admin_api, namespace, trio)
        failed = await _failed_scheduling(admin_api, namespace)
        return len(bound) == 2 and any(name in failed for name in trio if name not in bound)

    await wait_for(two_bound_one_failed)
    first = await scrape(operator)
    assert delta(attempts(first), attempts(start)).keys() == {"allocated/", "unschedulable/in_use"}
    assert (
        sample(first, "dra_operator_allocation_attempts_total", outcome="allocated", reason="") == 2
    )
    assert sample(first, "dra_operator_pod_binding_duration_seconds_count") == 2
    created = {"status": "success", "admin_access": "false"}
    assert sample(first, "resourceclaim_controller_creates_total", **created) == 3
    owned = {**created, "owner_api_group": "", "owner_api_kind": "Pod"}
    assert sample(first, "dynamic_resource_allocation_resourceclaim_creates_total", **owned) == 3
    assert sample(first, "dra_operator_allocation_duration_seconds_count", outcome="allocated") == 2
    assert sample(first, "dra_operator_allocation_search_steps_count") >= 3

    # 2. A concurrent writer touching six claims while they are allocated: 409s, decided again.
    # Besides the free-running writer, one write is met by a touch just before it is sent, so
    # at least one conflict happens however the two interleave.
    racers = [f"r{i}" for i in range(6)]
    for name in racers:
        await admin_api.create(
            CLAIMS, resource_claim(f"c-{name}", claim_spec(plenty)), namespace=namespace
        )
    stop = asyncio.Event()
    update = KubeSchedulerWriter.update_claim
    touched: list[str] = []

    async def touching_first(
        writer: KubeSchedulerWriter, body: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        name = body["metadata"]["name"]
        if name == "c-r0" and not touched:
            touched.append(name)
            patch = {"metadata": {"labels": {"touched": "first"}}}
            await admin_api.patch(CLAIMS, name, patch, namespace=namespace)
        return await update(writer, body)

    monkeypatch.setattr(KubeSchedulerWriter, "update_claim", touching_first)

    async def meddle() -> int:
        touches = 0
        while not stop.is_set():
            for name in racers:
                patch = {"metadata": {"labels": {"touched": str(touches)}}}
                with contextlib.suppress(errors.APIError):
                    await admin_api.patch(CLAIMS, f"c-{name}", patch, namespace=namespace)
                touches += 1
        return touches

    meddler = asyncio.create_task(meddle())
    for name in racers:
        pod = scheduler_pod(name, hostname=node, claim=f"c-{name}")
        await admin_api.create(PODS, pod, namespace=namespace)
    await wait_for(lambda: _all_bound(admin_api, namespace, racers))
    stop.set()
    assert await meddler > 0
    assert touched == ["c-r0"]
    second = await scrape(operator)
    conflicts = sample(second, "dra_operator_api_conflicts_total", kind="ResourceClaim")
    conflicts -= sample(first, "dra_operator_api_conflicts_total", kind="ResourceClaim")
    retried = {"kind": "ResourceClaim", "reason": "conflict"}
    retries = sample(second, "dra_operator_api_retries_total", **retried)
    retries -= sample(first, "dra_operator_api_retries_total", **retried)
    allocated = delta(attempts(second), attempts(first)).get("allocated/", 0.0)
    assert conflicts >= 1, "the concurrent writer met no write of the scheduler"
    assert retries == conflicts
    assert allocated == len(racers) + conflicts  # each placement was bound or met a 409
    assert sample(second, "dra_operator_pod_binding_duration_seconds_count") == 8

    # 3. A class whose selector fails at runtime on the free device: outcome "error".
    await admin_api.create(CLAIMS, resource_claim("bad", claim_spec(broken)), namespace=namespace)
    await admin_api.create(
        PODS, scheduler_pod("bad", hostname=node, claim="bad"), namespace=namespace
    )
    messages = await wait_for(lambda: _failed_for(admin_api, namespace, "bad"))
    assert any("CEL runtime error" in message for message in messages)
    third = await scrape(operator)
    assert delta(attempts(third), attempts(second)).get("error/cel_error", 0) >= 1
    assert sample(third, "dra_operator_cel_evaluation_errors_total") > 0
    assert sample(third, "dra_operator_cel_compilations_total") >= 3
    assert sample(third, "dra_operator_cel_compilation_errors_total") == 0
    assert sample(third, "dra_operator_cel_cache_hits_total") > 0
    assert 0 < sample(third, "dra_operator_cel_cache_hit_ratio") < 1

    # Controllers, queues, leader, caches (the operator watches this namespace only).
    for controller in (names.CLAIMS_QUEUE, names.SCHEDULER_QUEUE):
        success = {"controller": controller, "result": "success"}
        assert sample(third, "dra_operator_reconciles_total", **success) > 0
        assert sample(third, "workqueue_adds_total", name=controller) > 0
        assert sample(third, "workqueue_work_duration_seconds_count", name=controller) > 0
    assert sample(third, "dra_operator_leader_status") == 1
    assert sample(third, "dra_operator_cache_objects", kind="pods") == 10
    assert sample(third, "dra_operator_cache_objects", kind="resourceclaims") == 10
    allocated_claims = {"allocated": "true", "admin_access": "false"}
    generated = {**allocated_claims, "source": "resource_claim_template"}
    assert sample(third, "resourceclaim_controller_resource_claims", **generated) == 2
    by_user = {**allocated_claims, "source": ""}
    assert sample(third, "resourceclaim_controller_resource_claims", **by_user) == 6
    renamed = "dynamic_resource_allocation_resource_claims"  # 1.37's name, the same numbers
    assert sample(third, renamed, **generated) == 2
    assert sample(third, renamed, **by_user) == 6
    await verify_clean(control_plane, namespace)


async def _all_bound(api: Client, namespace: str, pods: list[str]) -> bool:
    return len(await _bound(api, namespace, pods)) == len(pods)


async def _failed_for(api: Client, namespace: str, pod: str) -> list[str]:
    return (await _failed_scheduling(api, namespace)).get(pod, [])


async def test_a_pod_deleted_before_its_binding_is_unreserved_and_its_claim_deallocated(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    run_operator: Any,
    monkeypatch: pytest.MonkeyPatch,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    """Only the scheduler runs: nobody else would take the reservation of the deleted pod back.

    The pod is deleted for real, through the API, by a hook on the writer's bind, just before the
    scheduler sends `pods/binding`; the server answers 404.
    """
    bind = KubeSchedulerWriter.bind

    async def deleting_first(writer: KubeSchedulerWriter, body: Mapping[str, Any]) -> None:
        if body["metadata"]["name"] == "doomed":
            await admin_api.delete(PODS, "doomed", namespace=namespace)
        await bind(writer, body)

    monkeypatch.setattr(KubeSchedulerWriter, "bind", deleting_first)
    handle = await run_operator(controllers=frozenset({"scheduler"}), metrics_address="127.0.0.1:0")
    node = (await make_node())["metadata"]["name"]
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    device = await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(1)))
    await _cached(
        handle,
        {Kind.NODES: [node], Kind.CLASSES: [gpu], Kind.SLICES: [device["metadata"]["name"]]},
    )
    await admin_api.create(CLAIMS, resource_claim("doomed", claim_spec(gpu)), namespace=namespace)
    await admin_api.create(
        PODS, scheduler_pod("doomed", hostname=node, claim="doomed"), namespace=namespace
    )
    messages = await wait_for(lambda: _failed_for(admin_api, namespace, "doomed"))
    assert [m for m in messages if m.startswith("binding rejected: ")] == messages

    async def released() -> dict[str, Any] | None:
        claim = await admin_api.get(CLAIMS, "doomed", namespace=namespace)
        status, finalizers = claim.get("status") or {}, claim["metadata"].get("finalizers")
        return (
            claim
            if not status.get("reservedFor") and not status.get("allocation") and not finalizers
            else None
        )

    await wait_for(released)
    # The freed device goes to the next pod, on the same single-device node.
    await admin_api.create(CLAIMS, resource_claim("next", claim_spec(gpu)), namespace=namespace)
    await admin_api.create(
        PODS, scheduler_pod("next", hostname=node, claim="next"), namespace=namespace
    )
    await wait_for(lambda: _all_bound(admin_api, namespace, ["next"]))
    page = await scrape(handle)
    assert sample(page, "dra_operator_pod_binding_duration_seconds_count") == 1
    assert sample(page, "dra_operator_api_conflicts_total", kind="Pod") == 0
    assert sample(page, "dra_operator_api_retries_total", kind="Pod", reason="conflict") == 0
    await verify_clean(control_plane, namespace)
