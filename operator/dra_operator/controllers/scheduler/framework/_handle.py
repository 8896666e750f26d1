"""The `Handle` the framework gives its plugins: what they may read besides their arguments."""

from __future__ import annotations

from dra_operator.controllers.scheduler.framework._nodeinfo import Snapshot


class FrameworkHandle:
    """Upstream's `framework.Handle`: the snapshot of the cycle under way.

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
