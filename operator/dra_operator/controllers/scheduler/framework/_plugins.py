"""The extension points, as Protocols: a plugin implements the ones it needs.

Shaped like kube-scheduler's `framework` interfaces (pkg/scheduler/framework/interface.go) so
that a reader of upstream finds each point where expected. Everything up to Permit is pure: a
plugin reads its arguments, the `Handle` and the `CycleState`, and returns verdicts and scores.
PreBind and Bind are the only points that write, and do it through the writer the plugin was
built with, never through a client of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from dra_operator.controllers.scheduler.framework._nodeinfo import NodeInfo, PodInfo, Snapshot
from dra_operator.controllers.scheduler.framework._state import CycleState
from dra_operator.controllers.scheduler.framework._status import Status
from dra_operator.model import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """PreFilter may narrow the nodes worth filtering (NodeName, NodeAffinity do); None = all."""

    node_names: frozenset[str] | None = None


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """What PostFilter achieved: the node the pod is nominated to (preemption)."""

    nominated_node_name: str = ""


class Handle(Protocol):
    """What the framework offers every plugin (upstream's `framework.Handle`)."""

    @property
    def snapshot(self) -> Snapshot:
        """This cycle's snapshot; the same object for every call of one cycle."""
        ...

    # The storage listers the volume plugins read (upstream's informer listers); None when
    # the object does not exist.

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None: ...

    def pv(self, name: str) -> PersistentVolume | None: ...

    def pvs(self, storage_class: str) -> Sequence[PersistentVolume]:
        """The PVs of one storage class (`GetPersistentVolumeClass`), in name order."""
        ...

    def storage_class(self, name: str) -> StorageClass | None: ...

    def csi_node(self, name: str) -> CSINode | None: ...

    def csi_driver(self, name: str) -> CSIDriver | None: ...

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        """The labels of namespace `name`, None when there is no such namespace.

        For pod affinity terms' `namespaceSelector` (InterPodAffinity), which upstream reads
        from its namespace lister.
        """
        ...


class Plugin(Protocol):
    @property
    def name(self) -> str: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: Pod, b: Pod) -> bool: ...


class PreFilterExtensions(Protocol):
    """Keeps a plugin's PreFilter state true when preemption removes or adds a pod."""

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status: ...

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status: ...


class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        """Rescale `scores` in place to [MIN_NODE_SCORE, MAX_NODE_SCORE]."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class SignedPlugin(Plugin, Protocol):
    """A Filter or Score plugin whose verdict on a node can be reused for the next pod alike.

    Shaped after `SignPlugin` (k8s.io/kube-scheduler v0.37.2, framework/interface.go, for
    opportunistic batching): `sign_pod`
    returns what of `pod` the plugin's PreFilter, Filter, PreScore and Score read, as a
    hashable value; two pods with equal signatures get the same verdict and raw score on a
    NodeInfo of the same generation. None when this pod's verdict cannot be reused (it reads
    state beyond the pod and the node).
    """

    def sign_pod(self, pod: Pod) -> Hashable | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """Success, or Wait with a timeout in seconds, or a rejection."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Bind, or Skip to let the next Bind plugin do it."""
        ...


PluginFactory = Callable[[Mapping[str, object], Handle], Plugin]
"""Builds a plugin from its args (KubeSchedulerConfiguration `pluginConfig[].args`)."""
