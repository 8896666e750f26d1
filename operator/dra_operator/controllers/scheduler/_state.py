"""What a scheduling decision reads: the caches (`State`) and the settings (`Settings`).

`State` is the scheduler's view of the cluster, handed to every step of a decision (the
framework's snapshot is taken from its NodeInfo cache, DynamicResources reads its stores and
ledger) together with the decision's memory: reused verdicts and where the next scored
decision starts. `Settings` holds what does not come from the cluster: features, the policy,
the CEL evaluator, the allocator's budget, metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dra_operator.allocator import (
    Budget,
    Features,
    NamedAllocator,
    Policy,
    SelectionMemo,
    SelectorEvaluator,
)
from dra_operator.cluster import (
    DeviceLedger,
    ObjectKey,
    Store,
)
from dra_operator.controllers.scheduler._classes_handle import ClassesHandle
from dra_operator.controllers.scheduler._classic import waiting_texts
from dra_operator.controllers.scheduler._metrics import SchedulerMetrics
from dra_operator.controllers.scheduler._named import NamedInventory
from dra_operator.controllers.scheduler._profile import default_framework
from dra_operator.controllers.scheduler._taints import TaintedSlices
from dra_operator.controllers.scheduler._verdicts import Verdicts
from dra_operator.controllers.scheduler.framework import (
    Framework,
    NodeInfoCache,
)
from dra_operator.model import (
    DeviceClass,
    Node,
    Pod,
    PodSchedulingContext,
    ResourceClaim,
    ResourceSlice,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What a decision needs besides the caches."""

    features: Features
    policy: Policy
    selectors: SelectorEvaluator
    budget: Budget = field(default_factory=Budget)
    metrics: SchedulerMetrics | None = None
    selection: SelectionMemo = field(default_factory=SelectionMemo)  # across decisions
    extended_resources: bool = True  # DRAExtendedResource: DRA serves mapped extended resources
    percentage_to_score: int = 0  # of the nodes, for scored policies; 0: adaptive, as upstream
    named: NamedAllocator = field(default_factory=NamedAllocator)  # 1.30's named resources
    waiting: tuple[str, str] = waiting_texts(37)  # the server's texts for classic waits


@dataclass(slots=True, kw_only=True)
class State:
    """The caches a decision reads (the stores are built with the cluster indexers).

    Slices are read through `tainted`, which adds the taints of DeviceTaintRules when the
    server has them in effect.
    """

    pods: Store[Pod]
    claims: Store[ResourceClaim]
    classes: Store[DeviceClass]
    slices: Store[ResourceSlice]
    nodes: Store[Node]
    ledger: DeviceLedger
    node_infos: NodeInfoCache
    contexts: Store[PodSchedulingContext] | None = None  # served only with classic DRA (1.31)
    named: NamedInventory | None = None  # 1.30's slices and parameters (v1alpha2)
    tainted: TaintedSlices = field(default_factory=TaintedSlices)
    verdicts: Verdicts | None = None  # None: ask the allocator on every node, every time
    score_start: int = 0  # where the next scored decision starts looking (upstream's rotation)
    framework: Framework | None = None  # None: the default profile over `classes`
    profiles: Mapping[str, Framework] = field(default_factory=dict)  # by schedulerName

    def __post_init__(self) -> None:
        if self.framework is None:
            classes = self.classes
            self.framework = default_framework(
                handle=ClassesHandle(lambda: (entry.obj for entry in classes))
            )

    def framework_for(self, pod: Pod) -> Framework:
        """The framework of the profile named by the pod's `schedulerName`, else the default."""
        found = self.profiles.get(pod.spec.scheduler_name, self.framework)
        assert found is not None  # set in __post_init__
        return found

    def nodes_by_name(self) -> list[Node]:
        """Every node, sorted by name (kept sorted between node changes with `verdicts`)."""
        if self.verdicts is not None:
            return self.verdicts.nodes_by_name(self.nodes)
        return [entry.obj for entry in sorted(self.nodes, key=lambda e: e.key.name)]

    def context_of(self, pod: Pod) -> PodSchedulingContext | None:
        """The PodSchedulingContext named like `pod` (classic DRA), if any."""
        if self.contexts is None:
            return None
        entry = self.contexts.get(ObjectKey(pod.metadata.namespace, pod.metadata.name))
        return entry.obj if entry is not None else None

    def class_map(self) -> dict[str, DeviceClass]:
        """Classes by name, built once per decision (not once per node)."""
        return {entry.obj.metadata.name: entry.obj for entry in self.classes}
