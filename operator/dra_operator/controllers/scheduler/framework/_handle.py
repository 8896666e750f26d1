"""The `Handle` the framework gives its plugins: what they may read besides their arguments."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from dra_operator.controllers.scheduler.framework._nodeinfo import NodeInfo, PodInfo, Snapshot
from dra_operator.controllers.scheduler.framework._nominator import Nominator
from dra_operator.controllers.scheduler.framework._plugins import Handle
from dra_operator.controllers.scheduler.framework._state import CycleState
from dra_operator.controllers.scheduler.framework._status import Status
from dra_operator.model import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    StorageClass,
)

if TYPE_CHECKING:
    from dra_operator.controllers.scheduler.framework._runtime import Framework


def _no_budgets() -> Sequence[PodDisruptionBudget]:
    return ()


class CycleHandle(Handle, Protocol):
    """A Handle whose snapshot the framework swaps at the start of each cycle."""

    def set_snapshot(self, snapshot: Snapshot) -> None: ...


class FrameworkHandle:
    """Upstream's `framework.Handle`: the snapshot of the cycle under way, the nominated pods,
    the PodDisruptionBudgets and the framework's plugin runners (what preemption simulates
    with). No namespaces and no storage objects exist here; the live scheduler's handle
    extends it with its caches.

    The framework swaps the snapshot at the start of each cycle; a plugin keeps the handle,
    never the snapshot, between calls.
    """

    __slots__ = ("_framework", "_snapshot", "nominator", "pod_disruption_budgets")

    def __init__(
        self,
        *,
        nominator: Nominator | None = None,
        pod_disruption_budgets: Callable[[], Sequence[PodDisruptionBudget]] = _no_budgets,
    ) -> None:
        self._snapshot = Snapshot(())
        self._framework: Framework | None = None
        self.nominator = nominator if nominator is not None else Nominator()
        self.pod_disruption_budgets = pod_disruption_budgets

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

    # -- what preemption simulates with --------------------------------------------------------

    def bind_framework(self, framework: Framework) -> None:
        """Called by the framework this handle serves, before it builds its plugins."""
        self._framework = framework

    @property
    def framework(self) -> Framework:
        if self._framework is None:
            raise RuntimeError("the handle serves no framework yet")
        return self._framework

    def run_filter_with_nominated_pods(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        return self.framework.run_filter_with_nominated_pods(state, pod, node)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, to_add: PodInfo, node: NodeInfo
    ) -> Status:
        return self.framework.run_pre_filter_extension_add_pod(state, pod, to_add, node)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        return self.framework.run_pre_filter_extension_remove_pod(state, pod, to_remove, node)
