"""The `Handle` the framework gives its plugins: what they may read besides their arguments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from dra_operator.controllers.scheduler.framework._nodeinfo import Snapshot
from dra_operator.controllers.scheduler.framework._plugins import Handle
from dra_operator.model import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)


class CycleHandle(Handle, Protocol):
    """A Handle whose snapshot the framework swaps at the start of each cycle."""

    def set_snapshot(self, snapshot: Snapshot) -> None: ...


class FrameworkHandle:
    """Upstream's `framework.Handle` with nothing besides the snapshot: no namespaces and no
    storage objects exist. The live scheduler's handle extends it with its caches.

    The framework swaps the snapshot at the start of each cycle; a plugin keeps the handle,
    never the snapshot, between calls.
    """

    __slots__ = ("_snapshot",)

    def __init__(self) -> None:
        self._snapshot = Snapshot(())

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def set_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        return None

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return None

    def pv(self, name: str) -> PersistentVolume | None:
        return None

    def pvs(self, storage_class: str) -> Sequence[PersistentVolume]:
        return ()

    def storage_class(self, name: str) -> StorageClass | None:
        return None

    def csi_node(self, name: str) -> CSINode | None:
        return None

    def csi_driver(self, name: str) -> CSIDriver | None:
        return None
