"""The `Handle` the framework gives its plugins: what they may read besides their arguments."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dra_operator.controllers.scheduler.framework._nodeinfo import Snapshot


def _no_namespaces(name: str) -> Mapping[str, str] | None:
    return None


class FrameworkHandle:
    """Upstream's `framework.Handle`: the snapshot of the cycle under way.

    The framework swaps the snapshot at the start of each cycle; a plugin keeps the handle,
    never the snapshot, between calls.
    """

    __slots__ = ("_namespace_labels", "_snapshot")

    def __init__(
        self, *, namespace_labels: Callable[[str], Mapping[str, str] | None] = _no_namespaces
    ) -> None:
        self._snapshot = Snapshot(())
        self._namespace_labels = namespace_labels

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        """The labels of namespace `name` (InterPodAffinity's namespaceSelector); None when
        there is no such namespace."""
        return self._namespace_labels(name)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def set_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
