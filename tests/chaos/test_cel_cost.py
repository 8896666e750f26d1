"""Scenario 7 (CEL cost): selectors at and beyond the cost limit, 1,000,000 for both the API
server's estimate and the scheduler's runtime check.

A selector over the limit cannot be created through the API server: admission estimates each
expression's worst-case cost from the declared maxima (strings of 64 characters, maps of 32
entries) and refuses it, "too complex, exceeds cost limit". So two things can go wrong, and
one test covers both (one operator, under deploy/'s RBAC, on the real control plane):

1. The operator's runtime cost is counted by its own CEL translator, not by cel-go. Were it to
   count more than cel-go for some construct, a selector the API server admitted would fail at
   evaluation ("actual cost limit exceeded") where kube-scheduler allocates. For several
   shapes (nested ranges, string scans and a regular expression over the longest attribute
   values, list and map literals in a loop; `LEAN_SHAPES` in `make test`), the test asks
   the API server for the largest size it admits (a search over dry-run creates), and a pod
   whose class selects with exactly that selector, on a device whose 32 attributes are as
   long as the API allows, must be bound.
2. An over-limit selector still reaches the operator when the object was stored by an older
   API server whose estimate admitted it, or while validation was off: the test shows the API
   server refuses the selector, then writes the DeviceClass and a ResourceClaim carrying it
   straight into etcd, as such a server would have. Their pods must be told why
   (FailedScheduling with upstream's text, "actual cost limit exceeded"), while a canary pod
   is bound beside them and the operator keeps running.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from tests.chaos.harness import FULL, record
from tests.chaos.test_hostile_input import node_of, start_operator
from tests.integration.test_operator_claims import CLAIMS
from tests.integration.test_operator_process import holder
from tests.integration.test_scheduler import CLASSES, SLICES
from tests.support.controlplane import NodeFactory, Spawned
from tests.support.dra_objects import (
    claim_spec,
    device_class,
    driver_of,
    resource_claim,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import failed_scheduling, verify_clean, wait_for

from dra_operator import controlplane
from dra_operator.errors import APIError
from dra_operator.kube import PODS, Client

pytestmark = pytest.mark.controlplane

LONGEST = 64  # characters in a string attribute value (the API's maximum)
ATTRIBUTES = 32  # attributes and capacities per device (the API's maximum)
TOO_COMPLEX = "exceeds cost limit"
OVER_LIMIT = "lists.range(2000).all(i, lists.range(2000).all(j, j >= 0))"

# {n}: the size searched for; {s}, {t}: the device's two longest string attributes.
SHAPES = {
    "nested-ranges": "lists.range({n}).all(i, lists.range({n}).all(j, j >= i - {n}))",
    "string-scans": "lists.range({n}).all(i, {s}.contains({t}) && {s}.startsWith({t}))",
    "regex": "lists.range({n}).all(i, !{s}.matches('^(ab|ba)*c$'))",
    "literals": "lists.range({n}).all(i, [i, i + 1].exists(x, x == i) && {{'k': i}}['k'] == i)",
}
# `make test` tries the two that stress the operator's own cost accounting (lists.range charges
# its length, literals their creation) and evaluate in well under a second; `make chaos` all.
LEAN_SHAPES = ("nested-ranges", "literals")


async def leading(operator: Spawned, api: Client, namespace: str) -> None:
    """Until the operator holds its Lease; failing, with the tail of its log."""
    try:
        await wait_for(lambda: holder(api, namespace), timeout=120, what="the operator to lead")
    except pytest.fail.Exception:
        tail = "\n".join(operator.output().splitlines()[-30:])
        pytest.fail(f"the operator never led; its log ends:\n{tail}", pytrace=False)


def longest_devices(count: int) -> list[dict[str, Any]]:
    """Devices with `ATTRIBUTES` string attributes of `LONGEST` characters each."""
    value = "ab" * (LONGEST // 2)
    return [
        {
            "name": f"dev-{i}",
            "attributes": {
                name: {"string": value} for name in ("s", "t", *(f"x{k}" for k in range(30)))
            },
        }
        for i in range(count)
    ]


def selector(shape: str, driver: str, n: int) -> str:
    attribute = f"device.attributes['{driver}']"
    body = SHAPES[shape].format(n=n, s=f"{attribute}.s", t=f"{attribute}.t")
    return f"device.driver == '{driver}' && {body}"


async def admitted(api: Client, body: dict[str, Any]) -> bool:
    """Whether the API server admits the DeviceClass `body` (dry run: nothing is stored)."""
    try:
        await api.request("POST", CLASSES.path(), params={"dryRun": "All"}, body=body)
    except APIError as exc:
        assert exc.status == 422 and TOO_COMPLEX in exc.message, exc
        return False
    return True


async def largest_admitted(api: Client, shape: str, driver: str) -> int:
    """The largest n the API server's cost estimate admits for `shape` (it must admit 1)."""

    async def fits(n: int) -> bool:
        return await admitted(api, device_class(unique_name("probe"), selector(shape, driver, n)))

    assert await fits(1), f"{shape} is refused at its smallest"
    low, high = 1, 2
    while await fits(high):
        low, high = high, high * 2
    while high - low > 1:  # fits(low), not fits(high)
        middle = (low + high) // 2
        low, high = (middle, high) if await fits(middle) else (low, middle)
    return low


def etcd_call(etcd_url: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{etcd_url}{path}", data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        result: dict[str, Any] = json.load(answer)
        return result


def etcd_key_of(etcd_url: str, suffix: str) -> str:
    """The etcd key the API server stored an object under, found by its tail
    (`/deviceclasses/<name>`): the key layout is the server's business, not the test's."""

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    answer = etcd_call(
        etcd_url, "/v3/kv/range", {"key": b64("/"), "range_end": b64("0"), "keys_only": True}
    )
    keys = [base64.b64decode(kv["key"]).decode() for kv in answer.get("kvs", ())]
    found = [key for key in keys if key.endswith(suffix)]
    assert len(found) == 1, f"no single etcd key ends with {suffix}: {found}"
    return found[0]


def store_unvalidated(etcd_url: str, key: str, body: dict[str, Any]) -> None:
    """Put `body` at `key` in etcd as JSON, as an API server that admitted it would have
    stored it (the server reads JSON as well as protobuf)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    metadata = {**body["metadata"], "uid": str(uuid.uuid4()), "creationTimestamp": stamp}
    value = json.dumps({**body, "metadata": metadata}).encode()
    etcd_call(
        etcd_url,
        "/v3/kv/put",
        {"key": base64.b64encode(key.encode()).decode(), "value": base64.b64encode(value).decode()},
    )


async def test_selectors_at_and_over_the_cost_limit(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    spawn: Callable[..., Spawned],
    control_plane: controlplane.ControlPlaneState,
    record_property: Callable[[str, object], None],
) -> None:
    api, ns, etcd = admin_api, namespace, control_plane.etcd_url
    operator = start_operator(spawn, control_plane, ns)
    node = (await make_node())["metadata"]["name"]

    # 1. The costliest selectors the API server admits, a driver and class per shape.
    shapes = list(SHAPES) if FULL else list(LEAN_SHAPES)
    kinds = {shape: unique_name(shape) for shape in shapes}
    sizes: dict[str, int] = {}
    for shape, kind in kinds.items():
        driver = driver_of(kind)
        await cluster(SLICES, resource_slice(node, driver, longest_devices(1)))
        sizes[shape] = await largest_admitted(api, shape, driver)
        await cluster(CLASSES, device_class(kind, selector(shape, driver, sizes[shape])))

    # 2. A class and a claim over the limit, refused by the API server, stored in etcd.
    good, costly = unique_name("gpu"), unique_name("costly")
    await cluster(CLASSES, device_class(good))
    await cluster(SLICES, resource_slice(node, driver_of(good), longest_devices(3)))
    over = f"device.driver == '{driver_of(good)}' && {OVER_LIMIT}"
    class_body = device_class(costly, over)
    claim_body = resource_claim(
        "claim-over", claim_spec(good, selectors=[{"cel": {"expression": over}}]), namespace=ns
    )
    assert not await admitted(api, class_body), "the API server admits the over-limit selector"
    await api.create(CLAIMS, resource_claim("canary", claim_spec(good)), namespace=ns)
    # Where the server keeps classes and claims, from objects it stored itself.
    classes = etcd_key_of(etcd, f"/deviceclasses/{good}").removesuffix(good)
    claims = etcd_key_of(etcd, f"/resourceclaims/{ns}/canary").removesuffix("canary")
    store_unvalidated(etcd, classes + costly, class_body)
    store_unvalidated(etcd, claims + "claim-over", claim_body)
    try:
        served = await api.get(CLAIMS, "claim-over", namespace=ns)
        assert served["spec"]["devices"]["requests"][0]["exactly"]["selectors"]
        await wait_for(lambda: api.get(CLASSES, costly), what="the stored class served")
        await api.create(CLAIMS, resource_claim("class-over", claim_spec(costly)), namespace=ns)

        await leading(operator, api, ns)
        pods = [f"costly-{shape}" for shape in shapes] + ["class-over", "claim-over", "canary"]
        for shape in shapes:
            claim = resource_claim(f"costly-{shape}", claim_spec(kinds[shape]))
            await api.create(CLAIMS, claim, namespace=ns)
        for pod in pods:
            await api.create(PODS, scheduler_pod(pod, claim=pod), namespace=ns)

        async def bound(pod: str) -> bool:
            messages = await failed_scheduling(api, ns, pod)
            assert not any("cost limit" in m for m in messages), messages
            return bool(await node_of(api, ns, pod))

        async def told(pod: str, *words: str) -> bool:
            messages = await failed_scheduling(api, ns, pod)
            return any(all(word in m for word in words) for m in messages)

        for pod in [f"costly-{shape}" for shape in shapes] + ["canary"]:
            await wait_for(lambda p=pod: bound(p), timeout=180, what=f"{pod} bound")
        await wait_for(
            lambda: told("class-over", f"class {costly}", "actual cost limit exceeded"),
            timeout=120,
            what="the class's over-limit selector reported",
        )
        await wait_for(
            lambda: told("claim-over", "claim-over", "actual cost limit exceeded"),
            timeout=120,
            what="the claim's over-limit selector reported",
        )
        for pod in ("class-over", "claim-over"):
            assert await node_of(api, ns, pod) is None
        assert operator.proc.poll() is None, "the operator stopped"
        await verify_clean(control_plane, ns)
    finally:
        await api.delete(CLASSES, costly)
    record(
        record_property,
        "cel-cost",
        runs=1,
        pods=len(pods),
        faults=len(shapes) + 2,
        violations=0,
        largest_admitted=sizes,
    )
