"""The *limit* system: the least API work a DRA control plane must do per pod, nothing else.

`python -m bench.scheduling.limit --kubeconfig K --plan FILE --namespace NS --scheduler NAME`
watches the pods of NS that name scheduler NAME and, per pod, makes the writes every control
plane must make for a pod of a one-claim template (`plan` is computed before the run by our
allocator in FirstFit order, so no decision is made while measured):

1. create the claim from the template (generateName, owned by the pod, with the
   delete-protection finalizer already on it: one write instead of create + update);
2. patch the pod's `status.resourceClaimStatuses`;
3. write the claim's status: the planned allocation and the pod in `reservedFor`;
4. bind the pod; 5. post the `Scheduled` event.

A deleted pod's claim loses its finalizer and is deleted, and its planned allocation is free
for the next pod (steady state); a pod that finds none free waits for one. Allocated claims it
did not make (pre-allocated by the bench) take their devices out of the plan. It runs as the
`dra-operator` user, so the audit log counts its requests as ours are counted. It writes
"ready" to the file `--ready` once watching.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import json
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from dra_operator import errors
from dra_operator.allocator import Features, allocate
from dra_operator.allocator import Node as AllocatorNode
from dra_operator.cluster import DeviceLedger
from dra_operator.controllers.scheduler import CELSelectors
from dra_operator.kube import PODS, Client, dra, post_event
from dra_operator.model import (
    ResourceSlice,
    parse_device_class,
    parse_resource_claim,
    parse_resource_slice,
    render_allocation_result,
)

__all__ = ["main", "plan"]

FINALIZER = "resource.kubernetes.io/delete-protection"
_CLAIMS = dra("resourceclaims")

Manifest = dict[str, Any]
Slot = tuple[str, Manifest]  # node, rendered status.allocation


def plan(
    nodes: tuple[str, ...],
    slices: tuple[Manifest, ...],
    classes: tuple[Manifest, ...],
    template: Manifest,
) -> list[Slot]:
    """Every allocation the template's claims can get, node by node in name order, each
    device in the allocator's FirstFit order: what our scheduler decides while filling."""
    features = Features.for_kubernetes("1.36")
    selectors = CELSelectors(features)
    by_class = {c["metadata"]["name"]: parse_device_class(c) for c in classes}
    by_node: dict[str | None, list[ResourceSlice]] = {}
    for manifest in slices:
        parsed = parse_resource_slice(manifest)
        by_node.setdefault(parsed.node_name, []).append(parsed)
    ledger = DeviceLedger()
    slots: list[Slot] = []
    for node in sorted(nodes):
        local = by_node.get(node, [])
        while True:
            uid = f"plan-{len(slots)}"
            claim = parse_resource_claim(
                {"metadata": {"name": uid, "namespace": "plan", "uid": uid}, **template["spec"]}
            )
            answer = allocate(
                [claim],
                classes=by_class,
                slices=local,
                node=AllocatorNode(name=node, labels={}),
                features=features,
                selectors=selectors,
                ledger=ledger.snapshot(),
            )
            if answer.results is None:
                break
            (result,) = answer.results
            ledger.reserve(uid, result)
            slots.append((node, render_allocation_result(result)))
    return slots


_ATTEMPTS = 6


async def _retried(call: Callable[[], Awaitable[Any]]) -> Any:
    """`call`, again after a timeout, a 429 or a 5xx (an overloaded API server), with backoff;
    ours retries such writes too."""
    for attempt in range(_ATTEMPTS):
        try:
            return await call()
        except (errors.APIServerError, errors.APITooManyRequestsError):
            if attempt == _ATTEMPTS - 1:
                raise
            await asyncio.sleep(0.2 * 2**attempt)
    raise AssertionError("unreachable")


class _Limit:
    """The per-pod writes; see the module docstring."""

    def __init__(self, api: Client, slots: list[Slot], namespace: str, template: Manifest) -> None:
        self.api = api
        self.slots = slots
        self.namespace = namespace
        self.template = template
        self.free = list(range(len(slots)))
        self.taken: set[tuple[str, str]] = set()  # (pool, device) pre-allocated by others
        self.placed: dict[str, tuple[str, str, int]] = {}  # pod uid -> claim, version, slot
        self.seen: set[str] = set()
        self.waiting: list[Mapping[str, Any]] = []  # pods that found no free allocation yet
        self.tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _slot(self) -> int | None:
        while self.free:
            index = heapq.heappop(self.free)
            devices = self.slots[index][1]["devices"]["results"]
            if not any((r["pool"], r["device"]) in self.taken for r in devices):
                return index
        return None

    async def place(self, pod: Mapping[str, Any]) -> None:
        meta = pod["metadata"]
        name, uid = meta["name"], meta["uid"]
        index = self._slot()
        if index is None:
            self.waiting.append(pod)  # placed when a deleted pod's allocation is free
            return
        node, allocation = self.slots[index]
        claim = await _retried(
            lambda: self.api.create(
                _CLAIMS,
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {
                        "generateName": f"{name}-gpu-",
                        "namespace": self.namespace,
                        "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                        "finalizers": [FINALIZER],
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "Pod",
                                "name": name,
                                "uid": uid,
                                "controller": True,
                                "blockOwnerDeletion": True,
                            }
                        ],
                    },
                    "spec": self.template["spec"]["spec"],
                },
                namespace=self.namespace,
            )
        )
        claim_name = claim["metadata"]["name"]
        status = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim_name}]}
        await _retried(
            lambda: self.api.patch(
                PODS, name, {"status": status}, namespace=self.namespace, subresource="status"
            )
        )
        consumer = {"resource": "pods", "name": name, "uid": uid}
        claim["status"] = {"allocation": allocation, "reservedFor": [consumer]}
        written = await _retried(lambda: self.api.update(_CLAIMS, claim, subresource="status"))
        self.placed[uid] = (claim_name, written["metadata"]["resourceVersion"], index)
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": self.namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        await _retried(lambda: self.api.create(PODS, binding, name=name, subresource="binding"))
        regarding = {"apiVersion": "v1", "kind": "Pod", **{k: meta[k] for k in ("name", "uid")}}
        regarding["namespace"] = self.namespace
        await post_event(
            self.api,
            regarding,
            type="Normal",
            reason="Scheduled",
            message=f"Successfully assigned {self.namespace}/{name} to {node}",
            component="dra-limit",
        )

    async def release(self, uid: str) -> None:
        found = self.placed.pop(uid, None)
        if found is None:
            return
        claim_name, version, index = found
        patch = {"metadata": {"finalizers": None, "resourceVersion": version}}
        with contextlib.suppress(errors.APINotFoundError):
            await _retried(
                lambda: self.api.patch(_CLAIMS, claim_name, patch, namespace=self.namespace)
            )
            await _retried(lambda: self.api.delete(_CLAIMS, claim_name, namespace=self.namespace))
        heapq.heappush(self.free, index)
        while self.waiting and self.free:
            waiting = self.waiting.pop(0)
            if waiting["metadata"]["uid"] in self.seen:
                await self.place(waiting)

    def pod_event(self, kind: str, pod: Mapping[str, Any]) -> None:
        uid = pod["metadata"]["uid"]
        if kind == "DELETED":
            self.seen.discard(uid)
            self.spawn(self.release(uid))
        elif uid not in self.seen and not pod["spec"].get("nodeName"):
            self.seen.add(uid)
            self.spawn(self.place(pod))

    def claim_event(self, kind: str, claim: Mapping[str, Any]) -> None:
        if kind == "DELETED" or claim["metadata"].get("ownerReferences"):
            return
        allocation = (claim.get("status") or {}).get("allocation")
        for result in (allocation or {}).get("devices", {}).get("results", []):
            self.taken.add((result["pool"], result["device"]))


async def _watch(
    api: Client, resource: Any, namespace: str, handle: Any, ready: asyncio.Event, **query: str
) -> None:
    listed = await api.list(resource, namespace=namespace, **query)
    for item in listed["items"]:
        handle("ADDED", item)
    version = listed["metadata"]["resourceVersion"]
    ready.set()
    while True:
        async with contextlib.aclosing(
            api.watch(resource, namespace=namespace, resource_version=version, **query)
        ) as events:
            async for event in events:
                obj = event["object"]
                version = obj["metadata"]["resourceVersion"]
                if event["type"] != "BOOKMARK":
                    handle(event["type"], obj)


async def _serve(args: argparse.Namespace) -> None:
    document = json.loads(Path(args.plan).read_text())
    slots = [(node, allocation) for node, allocation in document["slots"]]
    async with Client.from_kubeconfig(args.kubeconfig) as api:
        limit = _Limit(api, slots, args.namespace, document["template"])
        claims_ready, pods_ready = asyncio.Event(), asyncio.Event()
        watches = [
            asyncio.create_task(
                _watch(api, _CLAIMS, args.namespace, limit.claim_event, claims_ready)
            ),
            asyncio.create_task(
                _watch(
                    api,
                    PODS,
                    args.namespace,
                    limit.pod_event,
                    pods_ready,
                    field_selector=f"spec.schedulerName={args.scheduler}",
                )
            ),
        ]
        await claims_ready.wait()
        await pods_ready.wait()
        Path(args.ready).write_text("ready\n")
        await asyncio.gather(*watches)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scheduling.limit", description=__doc__)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--plan", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--scheduler", required=True)
    parser.add_argument("--ready", required=True)
    asyncio.run(_serve(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
