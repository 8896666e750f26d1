"""The assume cache: PVs and PVCs as the scheduler has decided them, ahead of the API server.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/volumebinding/assume_cache.go: Reserve
records a PV bound to its claim (or a PVC with a selected node) so that the next pod's cycle
does not pick the same PV; the assumed version is used until the informer brings a newer one
(the write arrived, or someone else changed the object) or Unreserve restores it.

Ours lays an overlay over the Handle's listers: an assumed object is kept with the
resourceVersion it was derived from, and dropped as soon as the lister holds another version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from dra_operator.controllers.scheduler.framework import Handle
from dra_operator.model import PersistentVolume, PersistentVolumeClaim

T = TypeVar("T", PersistentVolume, PersistentVolumeClaim)


@dataclass(frozen=True, slots=True)
class _Assumed(Generic[T]):
    obj: T
    base_version: str  # the lister's resourceVersion the assumption was made on


class _Overlay(Generic[T]):
    __slots__ = ("_assumed",)

    def __init__(self) -> None:
        self._assumed: dict[str, _Assumed[T]] = {}

    def get(self, key: str, latest: T | None) -> T | None:
        entry = self._assumed.get(key)
        if entry is None:
            return latest
        if latest is None or latest.metadata.resource_version != entry.base_version:
            del self._assumed[key]  # deleted, written or changed: the lister is newer
            return latest
        return entry.obj

    def assume(self, key: str, obj: T, latest: T | None) -> None:
        """Upstream refuses an object older than the cached one; ours are built from it."""
        base = latest.metadata.resource_version if latest is not None else ""
        self._assumed[key] = _Assumed(obj, base)

    def restore(self, key: str) -> None:
        self._assumed.pop(key, None)


class AssumeCache:
    """PV and PVC lookups through the overlay; one per plugin instance (it outlives cycles)."""

    __slots__ = ("_handle", "_pvcs", "_pvs")

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._pvs: _Overlay[PersistentVolume] = _Overlay()
        self._pvcs: _Overlay[PersistentVolumeClaim] = _Overlay()

    def pv(self, name: str) -> PersistentVolume | None:
        return self._pvs.get(name, self._handle.pv(name))

    def pvs(self, storage_class: str) -> list[PersistentVolume]:
        """The class's PVs, assumed versions first (upstream's `ListPVs`)."""
        found = []
        for latest in self._handle.pvs(storage_class):
            pv = self._pvs.get(latest.name, latest)
            if pv is not None and pv.storage_class == storage_class:
                found.append(pv)
        return found

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._pvcs.get(f"{namespace}/{name}", self._handle.pvc(namespace, name))

    def assume_pv(self, pv: PersistentVolume) -> None:
        self._pvs.assume(pv.name, pv, self._handle.pv(pv.name))

    def assume_pvc(self, pvc: PersistentVolumeClaim) -> None:
        meta = pvc.metadata
        self._pvcs.assume(pvc.key, pvc, self._handle.pvc(meta.namespace, meta.name))

    def restore_pvs(self, pvs: Sequence[PersistentVolume]) -> None:
        for pv in pvs:
            self._pvs.restore(pv.name)

    def restore_pvcs(self, pvcs: Sequence[PersistentVolumeClaim]) -> None:
        for pvc in pvcs:
            self._pvcs.restore(pvc.key)
