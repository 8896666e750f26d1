"""A kubelet STAND-IN for tests: no containers run, pods only look as if a kubelet had them.

The local control plane has no kubelet, so nothing would ever move a bound pod past Pending
or finish its graceful deletion. `KubeletStandIn` does the two visible parts of a kubelet's
job for pods bound to the nodes it serves:

* marks a bound Pending pod Running (phase, conditions, container statuses), but only once
  every claim it uses is allocated and reserved for it, as the kubelet's DRA manager refuses
  to prepare a claim that is not reserved for the pod (it re-checks on claim events);
* completes graceful deletion: a pod with a deletionTimestamp is deleted with
  gracePeriodSeconds=0 (the real kubelet first stops the containers and reports a terminal
  phase; the stand-in skips to the end, the harder case for the claims controller).

`finish` reports a pod Succeeded or Failed, as a kubelet does when its containers exit. Use
it as `async with KubeletStandIn(api, namespace=ns, nodes={node}) as kubelet:`; the fixture
`kubelet_standin` runs one for the test's namespace and every node. The watch loops re-list
on 410 Gone and on stream ends, and an unexpected error surfaces when the block exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from collections.abc import AsyncIterator, Callable, Collection
from types import TracebackType
from typing import Any, Self

import pytest

from dra_operator.errors import APIConflictError, APIError, APINotFoundError, APIServerError
from dra_operator.kube import PODS, Client, JSONObject, PatchType, Resource, dra
from dra_operator.model import Pod, parse_pod, parse_resource_claim

_Key = tuple[str, str]
_RETRY_DELAY = 0.2  # seconds between attempts after the API server did not answer
_RUNNING_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class KubeletStandIn:
    """Pretends to be the kubelet of `nodes` (every node when None) for pods in `namespace`
    (every namespace when None)."""

    def __init__(
        self,
        api: Client,
        *,
        namespace: str | None = None,
        nodes: Collection[str] | None = None,
        claims_version: str = "v1",
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.nodes = None if nodes is None else frozenset(nodes)
        self._claims = dra("resourceclaims", claims_version)
        self._queue: asyncio.Queue[_Key] = asyncio.Queue()
        self._waiting: set[_Key] = set()  # bound Pending pods whose claims are not ready
        self._main: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        self._main = asyncio.create_task(self._run(), name="kubelet-standin")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._main is not None
        if self._main.done():
            self._main.result()  # raise what ended it
        self._main.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._main

    async def finish(self, namespace: str, name: str, phase: str = "Succeeded") -> JSONObject:
        """Report the pod's containers exited (code 0 for Succeeded, 1 for Failed)."""
        if phase not in ("Succeeded", "Failed"):
            raise ValueError(f"phase must be Succeeded or Failed, not {phase!r}")
        pod = await self.api.get(PODS, name, namespace=namespace)
        now, code = _now(), 0 if phase == "Succeeded" else 1
        reason = "Completed" if code == 0 else "Error"
        not_ready = [
            {"type": t, "status": "False", "reason": "PodCompleted", "lastTransitionTime": now}
            for t in ("ContainersReady", "Ready")
        ]
        containers = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {
                    "terminated": {
                        "exitCode": code,
                        "reason": reason,
                        "startedAt": now,
                        "finishedAt": now,
                    }
                },
            }
            for c in pod["spec"]["containers"]
        ]
        status = {"phase": phase, "conditions": not_ready, "containerStatuses": containers}
        return await self._patch_status(pod, status)

    # -- the loops --------------------------------------------------------------------------

    async def _run(self) -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(self._watch(PODS, self._pod_event, field_selector="spec.nodeName!="))
            group.create_task(self._watch(self._claims, self._claim_event))
            group.create_task(self._work())

    def _pod_event(self, obj: JSONObject) -> None:
        meta = obj["metadata"]
        if self.nodes is None or obj["spec"].get("nodeName") in self.nodes:
            self._queue.put_nowait((meta["namespace"], meta["name"]))

    def _claim_event(self, obj: JSONObject) -> None:
        namespace = obj["metadata"]["namespace"]
        for key in sorted(self._waiting):
            if key[0] == namespace:
                self._queue.put_nowait(key)

    async def _watch(
        self,
        resource: Resource,
        handle: Callable[[JSONObject], None],
        *,
        field_selector: str | None = None,
    ) -> None:
        while True:
            try:
                listed = await self.api.list(
                    resource, namespace=self.namespace, field_selector=field_selector
                )
                for item in listed.get("items") or ():
                    handle(item)
                version = listed["metadata"]["resourceVersion"]
                async with contextlib.aclosing(
                    self.api.watch(
                        resource,
                        namespace=self.namespace,
                        field_selector=field_selector,
                        resource_version=version,
                    )
                ) as events:
                    async for event in events:
                        if event["type"] in ("ADDED", "MODIFIED"):
                            handle(event["object"])
            except APIServerError:
                await asyncio.sleep(_RETRY_DELAY)
            except APIError as exc:
                if exc.status != 410:
                    raise

    async def _work(self) -> None:
        while True:
            key = await self._queue.get()
            try:
                await self._sync(*key)
            except (APINotFoundError, APIConflictError):
                pass  # gone or changed meanwhile: its next event brings it back
            except APIServerError:
                await asyncio.sleep(_RETRY_DELAY)
                self._queue.put_nowait(key)

    async def _sync(self, namespace: str, name: str) -> None:
        self._waiting.discard((namespace, name))
        raw = await self.api.get(PODS, name, namespace=namespace)
        pod = parse_pod(raw)
        if not pod.spec.node_name or (
            self.nodes is not None and pod.spec.node_name not in self.nodes
        ):
            return
        if pod.metadata.deletion_timestamp is not None:
            await self.api.delete(
                PODS, name, namespace=namespace, uid=pod.metadata.uid, grace_period_seconds=0
            )
        elif pod.status.phase in ("", "Pending"):
            if await self._claims_ready(pod):
                await self._start(raw)
            else:
                self._waiting.add((namespace, name))

    async def _claims_ready(self, pod: Pod) -> bool:
        names = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
        for entry in pod.spec.resource_claims:
            claim_name = entry.resource_claim_name or names.get(entry.name)
            if claim_name is None:
                if entry.name in names:
                    continue  # the controller recorded that no claim is needed
                return False
            try:
                raw = await self.api.get(self._claims, claim_name, namespace=pod.metadata.namespace)
            except APINotFoundError:
                return False
            claim = parse_resource_claim(raw, self._claims.version)
            reserved = any(r.uid == pod.metadata.uid for r in claim.status.reserved_for)
            if claim.status.allocation is None or not reserved:
                return False
        return True

    async def _start(self, pod: JSONObject) -> None:
        now = _now()
        containers = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now}},
            }
            for c in pod["spec"]["containers"]
        ]
        status = {
            "phase": "Running",
            "startTime": now,
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": now}
                for t in _RUNNING_CONDITIONS
            ],
            "containerStatuses": containers,
        }
        await self._patch_status(pod, status)

    async def _patch_status(self, pod: JSONObject, status: dict[str, Any]) -> JSONObject:
        # Conditions merge by type (strategic merge), so PodScheduled from binding stays.
        meta = pod["metadata"]
        patch = {"metadata": {"uid": meta["uid"]}, "status": status}
        return await self.api.patch(
            PODS,
            meta["name"],
            patch,
            namespace=meta["namespace"],
            subresource="status",
            patch_type=PatchType.STRATEGIC,
        )


async def wait_for_pod(
    api: Client,
    namespace: str,
    name: str,
    condition: Callable[[JSONObject | None], bool],
    *,
    timeout: float = 30.0,
) -> JSONObject | None:
    """Watch one pod until `condition(pod)` holds (`pod` None: deleted); returns that pod."""
    async with asyncio.timeout(timeout):
        while True:
            listed = await api.list(
                PODS, namespace=namespace, field_selector=f"metadata.name={name}"
            )
            items = listed.get("items") or []
            current: JSONObject | None = items[0] if items else None
            if condition(current):
                return current
            async with contextlib.aclosing(
                api.watch(
                    PODS,
                    namespace=namespace,
                    field_selector=f"metadata.name={name}",
                    resource_version=listed["metadata"]["resourceVersion"],
                )
            ) as events:
                async for event in events:
                    current = None if event["type"] == "DELETED" else event["object"]
                    if event["type"] != "BOOKMARK" and condition(current):
                        return current


def phase_is(phase: str) -> Callable[[JSONObject | None], bool]:
    return lambda pod: pod is not None and pod.get("status", {}).get("phase") == phase


def is_gone(pod: JSONObject | None) -> bool:
    return pod is None


@pytest.fixture
async def kubelet_standin(admin_api: Client, namespace: str) -> AsyncIterator[KubeletStandIn]:
    """A kubelet stand-in for the test's namespace, serving every node."""
    async with KubeletStandIn(admin_api, namespace=namespace) as kubelet:
        yield kubelet
