"""Publish the inventory's ResourceSlices and keep them there.

One pass (`sync`) lists the slices of this driver on this node (field selectors `spec.driver`,
`spec.nodeName`), creates the missing ones, rewrites those whose content is not the inventory's
and deletes the ones the inventory no longer has. Content is compared by a hash of the
inventory's spec in an annotation, not field by field: the API server adds defaults, and a
taint someone put on a published device (`dra-operator taint --via slice`) is left alone until
the inventory itself changes. When the content changes, the pool generation goes up by one, so
allocators never mix old and new slices of the pool (upstream's resourceslice controller does
the same).

`run` repeats the pass whenever the watch shows a slice of ours deleted or changed by someone
else, and after API errors with a capped backoff: a deleted slice comes back.

Slices are owned by the Node (when it exists; a driver started before its node registered adds
the owner at a later pass, at the latest when the watch ends after five minutes), so deleting the
node deletes them. On shutdown
they are left in place, as upstream's kubelet plugin helper does: a restarting driver (a
DaemonSet rollout) must not make its devices vanish and reappear under the allocator, and the
kubelet itself deletes a driver's slices when the plugin stays unregistered (docs/driver.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import AsyncGenerator
from typing import Any, cast

from dra_operator.driver._events import DriverEvent
from dra_operator.driver._inventory import Inventory
from dra_operator.driver._metrics import DriverMetrics
from dra_operator.errors import APIError, APINotFoundError
from dra_operator.kube import NODES, Backoff, Client, JSONObject, dra
from dra_operator.observability import get_logger

__all__ = ["CONTENT_ANNOTATION", "SLICES", "SlicePublisher"]

SLICES = dra("resourceslices")
CONTENT_ANNOTATION = "dra-operator.dev/inventory-hash"
_FIELD_MANAGER = "dra-operator-driver"
_MAX_BACKOFF = 30.0  # seconds between attempts while the API server keeps failing

_log = get_logger(__name__)


class SlicePublisher:
    """Keeps the inventory's slices published for one node; see the module docstring."""

    def __init__(self, api: Client, inventory: Inventory, metrics: DriverMetrics) -> None:
        self.api = api
        self.inventory = inventory
        self.metrics = metrics
        self.selector = f"spec.driver={inventory.driver},spec.nodeName={inventory.node}"
        self.synced = asyncio.Event()  # set after the first successful pass

    def _hash(self, index: int) -> str:
        # The slice count is part of the content: it is in every slice of the pool.
        text = json.dumps([len(self.inventory.specs), self.inventory.specs[index]], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def _current(self, index: int, existing: JSONObject | None) -> bool:
        if existing is None:
            return False
        annotations = existing.get("metadata", {}).get("annotations") or {}
        return bool(annotations.get(CONTENT_ANNOTATION) == self._hash(index))

    async def _owner(self) -> list[JSONObject]:
        node = await self.api.find(NODES, self.inventory.node)
        if node is None:
            return []
        meta = node["metadata"]
        return [{"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta["uid"]}]

    async def sync(self) -> str:
        """One pass; the resourceVersion of the list it started from."""
        listed = await self.api.list(SLICES, field_selector=self.selector)
        existing = {s["metadata"]["name"]: s for s in listed.get("items", ())}
        names = [self.inventory.slice_name(i) for i in range(len(self.inventory.specs))]
        current = [self._current(i, existing.get(name)) for i, name in enumerate(names)]
        stale = existing.keys() - set(names)
        changed = any(not c for c, n in zip(current, names, strict=True) if n in existing)
        # Same content, some slices missing (deleted by someone): recreate them in the same
        # generation. New content or slices to remove: a new generation for the whole pool.
        generation = max((_generation(s) for s in existing.values()), default=0)
        if not existing or changed or stale:
            generation += 1
        owners = await self._owner()
        written = 0
        for i, manifest in enumerate(self.inventory.manifests(generation)):
            old = existing.get(manifest["metadata"]["name"])
            if (
                current[i]
                and old is not None
                and _generation(old) == generation
                and (old["metadata"].get("ownerReferences") or not owners)
            ):
                continue
            manifest["metadata"]["annotations"] = {CONTENT_ANNOTATION: self._hash(i)}
            if owners:
                manifest["metadata"]["ownerReferences"] = owners
            if old is None:
                await self.api.create(SLICES, manifest, field_manager=_FIELD_MANAGER)
                self.metrics.slice_writes.labels(verb="create").inc()
            else:
                manifest["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
                await self.api.update(SLICES, manifest, field_manager=_FIELD_MANAGER)
                self.metrics.slice_writes.labels(verb="update").inc()
            written += 1
        for name in stale:
            with contextlib.suppress(APINotFoundError):
                await self.api.delete(SLICES, name)
                self.metrics.slice_writes.labels(verb="delete").inc()
            written += 1
        if written or not self.synced.is_set():
            _log.info(
                DriverEvent.SLICES_PUBLISHED,
                node=self.inventory.node,
                driver=self.inventory.driver,
                slices=len(names),
                written=written,
                generation=generation,
            )
        self.synced.set()
        return str(listed.get("metadata", {}).get("resourceVersion", ""))

    def _ours_unchanged(self, event: JSONObject) -> bool:
        """Whether a watch event leaves our slices as published (no new pass needed)."""
        if event.get("type") in ("BOOKMARK", None):
            return True
        obj: dict[str, Any] = event.get("object") or {}
        name = obj.get("metadata", {}).get("name")
        names = [self.inventory.slice_name(i) for i in range(len(self.inventory.specs))]
        if event["type"] == "DELETED" or name not in names:
            return False
        return self._current(names.index(name), obj)

    async def run(self) -> None:
        """Publish, then re-publish on drift or after failures, until cancelled."""
        backoff = Backoff(1.0, _MAX_BACKOFF)
        while True:
            try:
                version = await self.sync()
                backoff.reset()
                # Client.watch is an async generator; aclosing ends its request on `break`.
                events = cast(
                    "AsyncGenerator[JSONObject, None]",
                    self.api.watch(SLICES, field_selector=self.selector, resource_version=version),
                )
                async with contextlib.aclosing(events) as stream:
                    async for event in stream:
                        if not self._ours_unchanged(event):
                            break
            except APIError as exc:
                _log.warning(DriverEvent.SLICES_FAILED, error=str(exc), retry_in=backoff.delay)
                await backoff.wait()


def _generation(slice_: JSONObject) -> int:
    return int(slice_["spec"]["pool"].get("generation", 0))
