"""The preemption writes on the real API server, as the operator's identity (deploy/'s RBAC).

The simulation that chooses the victims is DefaultPreemption's (unit tests); here its outcome
is carried out: the victim gets the DisruptionTarget condition and a graceful DELETE (no
kubelet runs, so it stays terminating with its deletionTimestamp), a `Preempted` Event; the
preemptor is nominated, and a lower-priority pod nominated to the same node loses its
nomination. The PodDisruptionBudgets the scheduler reads are readable under the same RBAC.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import PRIORITY_CLASSES, priority_class
from tests.support.operator import wait_for

from dra_operator.controllers.scheduler._preemption import (
    PreemptionWriter,
    lower_priority_nominated,
)
from dra_operator.controllers.scheduler.framework import Nominator
from dra_operator.controllers.scheduler.plugins.defaultpreemption import Candidate
from dra_operator.kube import CORE_EVENTS, POD_DISRUPTION_BUDGETS, PODS, Client
from dra_operator.model import Pod, parse_pod
from dra_operator.observability import Metrics

pytestmark = pytest.mark.controlplane


def _pod(name: str, priority: str, *, node: str = "", cpu: str = "1") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "priorityClassName": priority,
        "schedulerName": "dra-operator",
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def _read(api: Client, namespace: str, name: str) -> Pod:
    return parse_pod(await api.get(PODS, name, namespace=namespace))


async def test_victims_get_the_condition_an_event_and_a_graceful_delete(
    admin_api: Client,
    operator_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Awaitable[dict[str, Any]]],
) -> None:
    for name, value in (
        (f"{namespace}-low", 0),
        (f"{namespace}-mid", 10),
        (f"{namespace}-high", 1000),
    ):
        await cluster(PRIORITY_CLASSES, priority_class(name, value))
    node = (await make_node(capacity={"cpu": "1", "pods": "10"}))["metadata"]["name"]
    await admin_api.create(PODS, _pod("low", f"{namespace}-low", node=node), namespace=namespace)
    await admin_api.create(PODS, _pod("high", f"{namespace}-high"), namespace=namespace)
    await admin_api.create(PODS, _pod("waiting", f"{namespace}-mid"), namespace=namespace)
    low, high, waiting = [await _read(admin_api, namespace, n) for n in ("low", "high", "waiting")]
    metrics = Metrics()
    writer = PreemptionWriter(operator_api, metrics=metrics)
    await writer.nominate(waiting, node)  # an earlier, lower nomination to the same node
    nominator = Nominator()
    nominator.add(await _read(admin_api, namespace, "waiting"), node)

    candidate = Candidate(node, (low,), 0)
    await writer.preempt(high, candidate, lower_priority_nominated(nominator, high, node))
    await writer.nominate(high, node)

    assert metrics.registry.get_sample_value("scheduler_preemption_victims_sum") == 1.0
    victim = await _read(admin_api, namespace, "low")
    assert victim.metadata.deletion_timestamp is not None  # graceful: the kubelet finishes it
    [condition] = [c for c in victim.status.conditions if c.type == "DisruptionTarget"]
    assert (condition.status, condition.reason) == ("True", "PreemptionByScheduler")
    assert condition.message == "dra-operator: preempting to accommodate a higher priority pod"
    assert (await _read(admin_api, namespace, "high")).status.nominated_node_name == node
    assert (await _read(admin_api, namespace, "waiting")).status.nominated_node_name == ""

    async def preempted_event() -> list[dict[str, Any]] | None:
        found = await admin_api.list(
            CORE_EVENTS,
            namespace=namespace,
            field_selector="involvedObject.name=low,reason=Preempted",
        )
        return list(found.get("items") or []) or None

    [event] = await wait_for(preempted_event, what="the Preempted event on the victim")
    assert event["message"] == f"Preempted by pod {high.metadata.uid} on node {node}"
    assert event["type"] == "Normal"

    # Preempting again skips a victim already terminating (no second DELETE, no error).
    await writer.preempt(high, Candidate(node, (victim,), 0))
    await admin_api.delete(PODS, "low", namespace=namespace, grace_period_seconds=0)
    await writer.preempt(high, candidate)  # gone: skipped, as upstream skips it


async def test_the_operator_reads_pod_disruption_budgets(
    admin_api: Client, operator_api: Client, namespace: str
) -> None:
    body = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1},
    }
    await admin_api.create(POD_DISRUPTION_BUDGETS, body, namespace=namespace)
    listed = await operator_api.list(POD_DISRUPTION_BUDGETS, namespace=namespace)
    assert [item["metadata"]["name"] for item in listed["items"]] == ["b"]
