"""A fake classic DRA driver: the driver side of KEP-3063's control-plane protocol.

What a classic driver built on upstream's `k8s.io/dynamic-resource-allocation/controller`
helper does (classic-dra.md §4.3–4.5), minus real devices: it handles the claims whose
`spec.controller` is its name (1.31, v1alpha3) or whose ResourceClass names it as
`driverName` without `structuredParameters` (1.27–1.30, v1alpha2), answers each
PodSchedulingContext that names such claims with `unsuitableNodes` (every potential or
selected node outside `--nodes`), allocates the pod's claims for `selectedNode` when that node
suits (finalizer `<driver>/deletion-protection` first, then the allocation and, unless switched
off, the pod in `reservedFor`), and deallocates a claim nobody reserves once
`deallocationRequested` is set or it is being deleted, removing its finalizer. The allocation
is `{controller, nodeSelector}` on v1alpha3; on v1alpha2 `status.driverName` plus
`{availableOnNodes, resourceHandles, shareable: true}`, and there it allocates `Immediate`
claims on its own, without a pod, on the first of its nodes by name (upstream's test driver
picks one at random), and answers only for `WaitForFirstConsumer` claims. It is
level-triggered: every watch event on claims, contexts (and v1alpha2 classes), and a resync
every `resync` seconds, lists them and converges. For tests and for trying classic mode
(`dra-operator classic-driver`, docs/classic.md); never for production.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dra_operator import errors
from dra_operator.driver._events import DriverEvent
from dra_operator.kube import PODS, Client, Resource, dra, release_minor
from dra_operator.model import ClaimNaming, deterministic_claim_name
from dra_operator.observability import get_logger

__all__ = ["ClassicDriver", "ClassicDriverSettings", "finalizer_of"]

_log = get_logger(__name__)
Raw = Mapping[str, Any]

FIELD_MANAGER = "dra-operator-classic-driver"  # its writes are told apart from the operator's
_WATCH_RETRY = 1.0  # seconds before a broken watch is opened again


def finalizer_of(driver: str) -> str:
    """The helper's finalizer on claims it allocated."""
    return f"{driver}/deletion-protection"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassicDriverSettings:
    """`nodes`: where it can allocate (every other node is unsuitable); `reserve`: add the
    pod to `reservedFor` on allocation (upstream's SetReservedFor, on by default)."""

    driver: str
    nodes: frozenset[str]
    namespace: str | None = None  # None: every namespace
    reserve: bool = True
    resync: float = 30.0
    version: str = "v1alpha3"


class ClassicDriver:
    """One fake classic driver over one client; `run` until cancelled."""

    def __init__(self, api: Client, settings: ClassicDriverSettings) -> None:
        self.api = api
        self.settings = settings
        self.claims: Resource = dra("resourceclaims", settings.version)
        self.contexts: Resource = dra("podschedulingcontexts", settings.version)
        self.v1alpha2 = settings.version == "v1alpha2"
        self.classes = dra("resourceclasses", "v1alpha2") if self.v1alpha2 else None
        self._mine: set[str] = set()  # v1alpha2: the ResourceClasses of this driver
        self._changed = asyncio.Event()
        self._deterministic_names = False  # before 1.28 pods do not name their claims
        self.allocations = 0  # counts for tests and logs
        self.deallocations = 0

    async def run(self) -> None:
        _, minor = release_minor(await self.api.server_version())
        self._deterministic_names = ClaimNaming.for_minor(minor) is ClaimNaming.DETERMINISTIC
        async with asyncio.TaskGroup() as group:
            group.create_task(self._watch(self.claims))
            group.create_task(self._watch(self.contexts))
            if self.classes is not None:
                group.create_task(self._watch(self.classes, namespaced=False))
            while True:
                self._changed.clear()
                try:
                    await self.sync()
                except errors.APIConflictError:
                    continue  # it read a claim older than the server's: read again now
                except errors.APIError as exc:  # converges on a later round
                    _log.warning(DriverEvent.CLASSIC_SYNC_FAILED, error=str(exc))
                    await asyncio.sleep(_WATCH_RETRY)
                    continue
                # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation
                # that arrives as the event is set, and the driver would never stop.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.settings.resync):
                        await self._changed.wait()

    async def _watch(self, resource: Resource, *, namespaced: bool = True) -> None:
        namespace = self.settings.namespace if namespaced else None
        while True:
            try:
                listed = await self.api.list(resource, namespace=namespace)
                version = str((listed.get("metadata") or {}).get("resourceVersion") or "")
                watch = self.api.watch(resource, namespace=namespace, resource_version=version)
                async for event in watch:  # read to its end: the server closes it
                    if event.get("type") != "BOOKMARK":
                        self._changed.set()
            except errors.APIError as exc:
                _log.debug(
                    DriverEvent.CLASSIC_WATCH_ENDED, resource=resource.plural, error=str(exc)
                )
            self._changed.set()
            await asyncio.sleep(_WATCH_RETRY)

    async def sync(self) -> None:
        """One round: every claim of ours, then every scheduling context."""
        ns = self.settings.namespace
        if self.classes is not None:
            listed = (await self.api.list(self.classes)).get("items") or []
            self._mine = {
                str(c["metadata"]["name"])
                for c in listed
                if c.get("driverName") == self.settings.driver and not c.get("structuredParameters")
            }
        claims = (await self.api.list(self.claims, namespace=ns)).get("items") or []
        for claim in claims:
            if self._is_mine(claim):
                await self._sync_claim(claim)
        contexts = (await self.api.list(self.contexts, namespace=ns)).get("items") or []
        for context in contexts:
            try:
                await self._sync_context(context)
            except errors.APIConflictError:
                self._changed.set()  # something moved meanwhile: another round

    # -- claims (§4.3) --------------------------------------------------------------------------

    def _is_mine(self, claim: Raw) -> bool:
        if self.v1alpha2:
            return _spec(claim).get("resourceClassName") in self._mine
        return _spec(claim).get("controller") == self.settings.driver

    def _immediate(self, claim: Raw) -> bool:
        return self.v1alpha2 and _spec(claim).get("allocationMode") == "Immediate"

    async def _sync_claim(self, claim: Raw) -> None:
        status = claim.get("status") or {}
        if status.get("reservedFor"):
            return  # in use
        meta = claim["metadata"]
        ending = bool(meta.get("deletionTimestamp")) or bool(status.get("deallocationRequested"))
        finalizer = finalizer_of(self.settings.driver)
        if not ending:
            if self._immediate(claim) and status.get("allocation") is None and self.settings.nodes:
                await self._allocate(claim, None, min(self.settings.nodes))
            return
        if finalizer not in (meta.get("finalizers") or ()):
            return
        body = copy.deepcopy(dict(claim))
        new_status = body.setdefault("status", {})
        if "allocation" in new_status or new_status.get("deallocationRequested"):
            new_status.pop("allocation", None)
            new_status.pop("deallocationRequested", None)
            new_status.pop("driverName", None)  # v1alpha2
            body = await self._update(body, status=True)
            self.deallocations += 1
            _log.info(DriverEvent.CLASSIC_DEALLOCATED, claim=_name(claim))
        body = copy.deepcopy(dict(body))
        body["metadata"]["finalizers"] = [
            f for f in body["metadata"].get("finalizers") or () if f != finalizer
        ]
        await self._update(body)

    async def _update(self, body: Raw, *, status: bool = False) -> dict[str, Any]:
        resource = _typed(body, self.claims)
        subresource = "status" if status else None
        return await self.api.update(
            self.claims, resource, subresource=subresource, field_manager=FIELD_MANAGER
        )

    # -- scheduling contexts (§4.4, §4.5) -------------------------------------------------------

    async def _sync_context(self, context: Raw) -> None:
        meta = context["metadata"]
        spec = context.get("spec") or {}
        selected = str(spec.get("selectedNode") or "")
        potential = [str(n) for n in spec.get("potentialNodes") or ()]
        if meta.get("deletionTimestamp") or (not selected and not potential):
            return
        namespace = str(meta["namespace"])
        pod = await self.api.find(PODS, str(meta["name"]), namespace=namespace)
        if pod is None:
            return
        pod_uid = pod["metadata"]["uid"]
        owned = any(
            o.get("controller") and o.get("uid") == pod_uid
            for o in meta.get("ownerReferences") or ()
        )
        if pod["metadata"].get("deletionTimestamp") or not owned:
            return
        mine = await self._pod_claims(pod)
        if not mine:
            return
        if selected and selected not in potential:
            potential.append(selected)
        unsuitable = [n for n in potential if n not in self.settings.nodes]
        if selected and selected not in unsuitable:
            for claim in mine.values():
                await self._allocate(claim, pod, selected)
        await self._answer(context, {name: unsuitable for name in mine})

    async def _pod_claims(self, pod: Raw) -> dict[str, Raw]:
        """The pod's unallocated claims that name this driver, by pod claim name."""
        namespace = pod["metadata"]["namespace"]
        generated = {
            s.get("name"): s.get("resourceClaimName")
            for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
        }
        found: dict[str, Raw] = {}
        for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
            source = entry.get("source") or entry  # 1.26-1.30 nest it in `source`
            named = source.get("resourceClaimName")
            name = named or generated.get(entry.get("name"))
            if not name and self._deterministic_names and source.get("resourceClaimTemplateName"):
                name = deterministic_claim_name(pod["metadata"]["name"], str(entry["name"]))
            if not name:
                continue  # not created yet
            claim = await self.api.find(self.claims, name, namespace=namespace)
            if claim is None:
                continue
            if not self._is_mine(claim) or self._immediate(claim):
                continue  # ≤1.30: the context is only about WaitForFirstConsumer claims
            if (claim.get("status") or {}).get("allocation") is not None:
                continue
            if not named and not _controlled_by(claim, pod):
                continue
            found[str(entry["name"])] = claim
        return found

    async def _allocate(self, claim: Raw, pod: Raw | None, node: str) -> None:
        """Allocate `claim` for `node`; `pod`: the consumer (None: an Immediate claim)."""
        finalizer = finalizer_of(self.settings.driver)
        body = copy.deepcopy(dict(claim))
        if finalizer not in (body["metadata"].get("finalizers") or ()):
            body["metadata"]["finalizers"] = [
                *(body["metadata"].get("finalizers") or ()),
                finalizer,
            ]
            body = copy.deepcopy(await self._update(body))
        status = body.setdefault("status", {})
        term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        if self.v1alpha2:
            driver = self.settings.driver
            status["driverName"] = driver
            status["allocation"] = {
                "availableOnNodes": {"nodeSelectorTerms": [term]},
                "resourceHandles": [{"driverName": driver, "data": json.dumps({"node": node})}],
                "shareable": True,
            }
        else:
            status["allocation"] = {
                "controller": self.settings.driver,
                "nodeSelector": {"nodeSelectorTerms": [term]},
            }
        if self.settings.reserve and pod is not None:
            consumer = {
                "resource": "pods",
                "name": pod["metadata"]["name"],
                "uid": pod["metadata"]["uid"],
            }
            status["reservedFor"] = [*(status.get("reservedFor") or ()), consumer]
        await self._update(body, status=True)
        self.allocations += 1
        _log.info(DriverEvent.CLASSIC_ALLOCATED, claim=_name(claim), node=node)

    async def _answer(self, context: Raw, unsuitable: Mapping[str, list[str]]) -> None:
        """Add or update `status.resourceClaims` entries that differ (order matters)."""
        body = copy.deepcopy(dict(context))
        entries = list((body.get("status") or {}).get("resourceClaims") or ())
        changed = False
        for name, nodes in unsuitable.items():
            wanted = {"name": name, "unsuitableNodes": nodes[:128]} if nodes else {"name": name}
            at = next((i for i, e in enumerate(entries) if e.get("name") == name), None)
            if at is None:
                entries.append(wanted)
                changed = True
            elif (entries[at].get("unsuitableNodes") or []) != nodes[:128]:
                entries[at] = wanted
                changed = True
        if changed:
            body.setdefault("status", {})["resourceClaims"] = entries
            await self.api.update(
                self.contexts,
                _typed(body, self.contexts),
                subresource="status",
                field_manager=FIELD_MANAGER,
            )


def _spec(raw: Raw) -> Raw:
    spec = raw.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _name(raw: Raw) -> str:
    return f"{raw['metadata'].get('namespace', '')}/{raw['metadata']['name']}"


def _controlled_by(claim: Raw, pod: Raw) -> bool:
    uid = pod["metadata"]["uid"]
    refs = claim["metadata"].get("ownerReferences") or ()
    return any(o.get("controller") and o.get("uid") == uid for o in refs)


def _typed(body: Raw, resource: Resource) -> dict[str, Any]:
    kind = "ResourceClaim" if resource.plural == "resourceclaims" else "PodSchedulingContext"
    return {**body, "apiVersion": resource.api_version, "kind": kind}
