"""Scenario 7: hostile input the API server accepts, all at once, with a canary being served.

One operator (a process under deploy/'s RBAC, with two misbehaving hooks loaded: one that never
answers, one that raises) faces: a 128-device slice with 32 attributes per device, a pool whose
two slices disagree on generation and count, a claim of a class that does not exist, a pod
whose template does not exist, a template deleted right under its pod, a claim deleted while
being allocated and a node deleted mid-decision. Each must get a clear Event (or log line, for
the hooks) and the canary pods, created last, must still be bound; `verify` stays clean. A
second test feeds hypothesis-generated slices (attribute names, types and values the API server
accepts) and checks that a pod selecting on them is bound or told why, never that the operator
stops. Selectors at and beyond the CEL cost limit have a scenario of their own
(`test_cel_cost.py`).
"""

from __future__ import annotations

import contextlib
import os
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.chaos.harness import FULL, record
from tests.integration.test_operator_claims import CLAIMS, TEMPLATES
from tests.integration.test_operator_process import holder
from tests.integration.test_scheduler import CLASSES, SLICES
from tests.support.controlplane import NodeFactory, Spawned
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
from tests.support.operator import failed_scheduling, operator_args, verify_clean, wait_for

from dra_operator import controlplane, names
from dra_operator.errors import APINotFoundError
from dra_operator.kube import CORE_EVENTS, NODES, PODS, Client

pytestmark = pytest.mark.controlplane

REPO = Path(__file__).resolve().parents[2]
HOOKS = ("tests.chaos.hostile_hooks:Hanging", "tests.chaos.hostile_hooks:Raising")


def start_operator(
    spawn: Callable[..., Spawned], plane: controlplane.ControlPlaneState, namespace: str
) -> Spawned:
    args = operator_args(str(plane.operator_kubeconfig), namespace, "hostile")
    hooks = [f"--hook={hook}" for hook in HOOKS]
    pythonpath = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return spawn("dra-operator", *args, *hooks, env={"PYTHONPATH": pythonpath})


async def node_of(api: Client, namespace: str, pod: str) -> str | None:
    found: str | None = (await api.get(PODS, pod, namespace=namespace))["spec"].get("nodeName")
    return found


async def events_of(api: Client, namespace: str, name: str, reason: str) -> list[str]:
    events = (await api.list(CORE_EVENTS, namespace=namespace)).get("items") or ()
    return [
        e["message"]
        for e in events
        if e["involvedObject"].get("name") == name and e["reason"] == reason
    ]


def wide_devices(count: int, attributes: int) -> list[dict[str, Any]]:
    """`count` devices with `attributes` int attributes each (a0 .. a<n-1>, a<k> = k * i)."""
    return [
        {"name": f"dev-{i}", "attributes": {f"a{k}": {"int": k * i} for k in range(attributes)}}
        for i in range(count)
    ]


async def test_hostile_objects_are_reported_and_the_canary_is_served(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    spawn: Callable[..., Spawned],
    control_plane: controlplane.ControlPlaneState,
    record_property: Callable[[str, object], None],
) -> None:
    api, ns = admin_api, namespace
    good, wide, split = (unique_name(p) for p in ("gpu", "wide", "split"))
    nodes = {role: (await make_node())["metadata"]["name"] for role in ("good", "wide", "split")}
    doomed = (await make_node())["metadata"]["name"]
    await cluster(CLASSES, device_class(good))
    wide_selector = (
        f"device.driver == '{driver_of(wide)}' && "
        f"device.attributes['{driver_of(wide)}'].a31 == 31 * 127"
    )
    await cluster(CLASSES, device_class(wide, wide_selector))
    await cluster(CLASSES, device_class(split))
    await cluster(SLICES, resource_slice(nodes["good"], driver_of(good), gpus(8)))
    await cluster(SLICES, resource_slice(nodes["wide"], driver_of(wide), wide_devices(128, 32)))
    for index, (generation, count) in enumerate(((1, 2), (2, 3))):
        body = resource_slice(
            nodes["split"], driver_of(split), gpus(2), name=f"{split}-{index}", pool=split
        )
        body["spec"]["pool"] |= {"generation": generation, "resourceSliceCount": count}
        await cluster(SLICES, body)
    await cluster(SLICES, resource_slice(doomed, driver_of(good), gpus(2)))
    operator = start_operator(spawn, control_plane, ns)
    await wait_for(lambda: holder(api, ns), what="the operator to lead")

    async def pod_with_claim(name: str, class_name: str, *, node: str | None = None) -> None:
        await api.create(CLAIMS, resource_claim(name, claim_spec(class_name)), namespace=ns)
        await api.create(PODS, scheduler_pod(name, claim=name, hostname=node), namespace=ns)

    await pod_with_claim("wide", wide)
    await pod_with_claim("split", split)
    await pod_with_claim("no-class", "no-such-class")
    await api.create(PODS, scheduler_pod("no-template", template="no-such-template"), namespace=ns)
    await api.create(TEMPLATES, claim_template("doomed", claim_spec(good)), namespace=ns)
    await api.create(PODS, scheduler_pod("template-deleted", template="doomed"), namespace=ns)
    await api.delete(TEMPLATES, "doomed", namespace=ns)
    await pod_with_claim("claim-deleted", good)
    with contextlib.suppress(APINotFoundError):
        await api.delete(CLAIMS, "claim-deleted", namespace=ns)
    await pod_with_claim("node-deleted", good, node=doomed)
    await api.delete(NODES, doomed)

    for index in range(3):
        await pod_with_claim(f"canary-{index}", good, node=nodes["good"])
    for index in range(3):
        canary = f"canary-{index}"
        await wait_for(lambda c=canary: node_of(api, ns, c), timeout=120, what=f"{canary} bound")
    bound = await wait_for(lambda: node_of(api, ns, "wide"), timeout=120, what="wide bound")
    assert bound == nodes["wide"]

    async def told(pod: str, *words: str) -> bool:
        messages = await failed_scheduling(api, ns, pod)
        return any(all(word in m for word in words) for m in messages)

    await wait_for(lambda: told("no-class", "no-such-class"), what="the missing class reported")
    await wait_for(lambda: told("split", split), what="the inconsistent pool reported")
    assert await node_of(api, ns, "split") is None

    async def template_reported(pod: str, template: str) -> bool:
        reason = names.EVENT_FAILED_RESOURCE_CLAIM_CREATION
        return any(template in m for m in await events_of(api, ns, pod, reason))

    await wait_for(
        lambda: template_reported("no-template", "no-such-template"),
        what="the missing template reported",
    )

    async def bound_or_told(pod: str) -> bool:
        return bool(
            await node_of(api, ns, pod)
            or await failed_scheduling(api, ns, pod)
            or await template_reported(pod, "doomed")
        )

    for pod in ("template-deleted", "claim-deleted", "node-deleted"):
        await wait_for(lambda p=pod: bound_or_told(p), what=f"{pod} bound or told why")
    output = operator.output()
    assert '"hook.failed"' in output
    assert operator.proc.poll() is None, "the operator stopped"
    await verify_clean(control_plane, ns)
    record(record_property, "hostile-input", runs=1, faults=10, pods=12, violations=0)


ATTRIBUTE_NAMES = st.text(string.ascii_lowercase, min_size=1, max_size=8).map(lambda s: "x" + s)
VALUES = st.one_of(
    st.builds(lambda v: {"int": v}, st.integers(-(2**62), 2**62)),
    st.builds(lambda v: {"bool": v}, st.booleans()),
    st.builds(lambda v: {"string": v}, st.text(string.printable.strip(), max_size=64)),
    st.builds(
        lambda a, b, c: {"version": f"{a}.{b}.{c}"},
        *(st.integers(0, 10**6) for _ in range(3)),
    ),
)
DEVICES = st.lists(
    st.dictionaries(ATTRIBUTE_NAMES, VALUES, max_size=32), min_size=1, max_size=16
).map(lambda attrs: [{"name": f"d-{i}", "attributes": a} for i, a in enumerate(attrs)])


async def test_generated_slices_never_stop_the_operator(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    spawn: Callable[..., Spawned],
    control_plane: controlplane.ControlPlaneState,
    record_property: Callable[[str, object], None],
) -> None:
    """Random attribute maps, and a selector over one generated name: each pod ends bound or
    with a FailedScheduling event; the operator never exits."""
    api, ns = admin_api, namespace
    operator = start_operator(spawn, control_plane, ns)
    await wait_for(lambda: holder(api, ns), what="the operator to lead")
    examples: list[list[dict[str, Any]]] = []

    @settings(
        max_examples=30 if FULL else 6,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(DEVICES)
    def collect(devices: list[dict[str, Any]]) -> None:
        examples.append(devices)

    collect()
    for index, devices in enumerate(examples):
        node = (await make_node())["metadata"]["name"]
        kind = unique_name("gen")
        names_seen = sorted({name for d in devices for name in d["attributes"]})
        probe = names_seen[0] if names_seen else "xmissing"
        driver = driver_of(kind)
        selector = f"device.driver == '{driver}' && '{probe}' in device.attributes['{driver}']"
        await cluster(CLASSES, device_class(kind, selector))
        await cluster(SLICES, resource_slice(node, driver_of(kind), devices))
        pod = f"gen-{index}"
        await api.create(CLAIMS, resource_claim(pod, claim_spec(kind)), namespace=ns)
        await api.create(PODS, scheduler_pod(pod, claim=pod, hostname=node), namespace=ns)

        async def settled(name: str = pod) -> bool:
            return bool(await node_of(api, ns, name) or await failed_scheduling(api, ns, name))

        await wait_for(settled, timeout=120, what=f"{pod} bound or told why")
        assert operator.proc.poll() is None, "the operator stopped"
    await verify_clean(control_plane, ns)
    record(record_property, "hostile-generated-slices", runs=1, faults=len(examples), violations=0)
