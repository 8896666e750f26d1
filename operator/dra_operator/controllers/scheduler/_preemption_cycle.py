"""Preemption for a pod the live scheduler found unschedulable: which pods to evict, and where.

The live decision (`decide_pod`) runs the DynamicResources allocation itself, around the
framework's plugins. Preemption needs both as Filter plugins, so that removing victims from
a node and filtering again answers "would the pod fit here without them": this module builds
a framework of the pod's live profile (the in-tree plugins it names; hook plugins are left
out), `DeviceFit` (the allocator on the node) and `DefaultPreemption`, over a handle that reads
what the live one reads (`PreemptionHandle`), and runs one cycle of it on the NodeInfo
snapshot.

Beyond upstream (v1.37.2 does not count a victim's devices free: they are freed only when the
claims controller deallocates the victim's claims; KEP-5690 proposes it): `DeviceFit` counts
free the devices of every claim reserved only for pods removed from the node in the
simulation. A claim also reserved for a pod that stays (or a PodGroup, or nobody) is never
counted free. `nominated_allocation` is what the preemptor's claims would get on the chosen
node once its victims' claims are deallocated: what the ledger holds for it meanwhile.

A node the allocator cannot serve answers Unschedulable "cannot allocate all claims" as
upstream's DynamicResources Filter does, so preemption tries it, and finds that removing pods
does not help.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from dra_operator import errors
from dra_operator.allocator import Explanation
from dra_operator.cluster import ObjectKey, pod_claim_keys
from dra_operator.controllers.scheduler._explain import NOT_AVAILABLE_ON_NODE, claim_failure
from dra_operator.controllers.scheduler._preemption import PreemptionRecorder
from dra_operator.controllers.scheduler._profile import REGISTRY
from dra_operator.controllers.scheduler._state import (
    Settings,
    State,
)
from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    CycleState,
    FitError,
    Framework,
    FrameworkHandle,
    Handle,
    NodeInfo,
    Nominator,
    Plugin,
    PluginFactory,
    Profile,
    Status,
    schedule_pod,
    unresolvable,
    unschedulable,
)
from dra_operator.controllers.scheduler.plugins import defaultpreemption
from dra_operator.controllers.scheduler.plugins.defaultpreemption import (
    Candidate,
    chosen_candidate,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources import (
    Claims,
    allocate_on,
    resolve_claims,
)
from dra_operator.controllers.scheduler.plugins.noderesources.fit import ExtendedResourceHandle
from dra_operator.model import (
    AllocationResult,
    CSIDriver,
    CSINode,
    ExtendedResourceClasses,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    StorageClass,
    node_matches,
)

DEVICE_FIT = "DeviceFit"
CANNOT_ALLOCATE = "cannot allocate all claims"
"""Upstream's DynamicResources Filter text when the claims do not fit a node."""


def claims_freed(state: State, removed: Iterable[Pod]) -> frozenset[str]:
    """The UIDs of the allocated claims reserved only for pods in `removed`."""
    gone = {pod.metadata.uid for pod in removed}
    found: set[str] = set()
    for pod in removed:
        keys = pod_claim_keys(pod)
        extended = pod.status.extended_resource_claim_status
        if extended is not None and extended.resource_claim_name:
            keys.append(ObjectKey(pod.metadata.namespace, extended.resource_claim_name))
        for key in keys:
            entry = state.claims.get(key)
            if entry is None or entry.obj.status.allocation is None:
                continue
            holders = entry.obj.status.reserved_for
            if holders and all(r.resource == "pods" and r.uid in gone for r in holders):
                found.add(entry.obj.metadata.uid)
    return frozenset(found)


class DeviceFit:
    """Filter: the pod's allocated claims are usable on the node and the others allocate,
    with the devices of the claims only the pods removed from the node (by preemption's
    simulation) held counted free."""

    def __init__(self, pod_uid: str, claims: Claims, state: State, settings: Settings) -> None:
        self._uid = pod_uid
        self._claims = claims
        self._state = state
        self._settings = settings
        self._classes = state.class_map()
        self._live = state.node_infos.snapshot()

    def removed(self, node: NodeInfo) -> list[Pod]:
        """The pods of the node as it is that `node` (a simulation's clone) no longer holds."""
        live = self._live.get(node.name)
        if live is None:
            return []
        kept = {info.pod.metadata.uid for info in node.pods}
        return [info.pod for info in live.pods if info.pod.metadata.uid not in kept]

    @property
    def name(self) -> str:
        return DEVICE_FIT

    def filter(self, cycle: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if pod.metadata.uid != self._uid:
            return SUCCESS
        n = node.node
        if any(not node_matches(n.name, n.labels, s) for s in self._claims.selectors):
            return unresolvable(NOT_AVAILABLE_ON_NODE)
        freed = claims_freed(self._state, self.removed(node))
        outcome = allocate_on(
            n, self._claims.unallocated, self._classes, self._state, self._settings, freed=freed
        )
        if isinstance(outcome, errors.AllocationInputError):
            return unresolvable(str(outcome))
        if isinstance(outcome, Explanation):
            return unschedulable(CANNOT_ALLOCATE, claim_failure(outcome))
        return SUCCESS


def find_victims(
    pod: Pod,
    state: State,
    settings: Settings,
    *,
    nominator: Nominator,
    budgets: Callable[[], Sequence[PodDisruptionBudget]],
    offset: Callable[[int], int] | None = None,
    metrics: PreemptionRecorder | None = None,
) -> tuple[Candidate | None, str]:
    """The candidate DefaultPreemption chose for `pod` (None: preemption does not help), and
    PostFilter's message (upstream appends it to the FailedScheduling text). `metrics` counts
    an attempt each time PostFilter runs."""
    found = resolve_claims(pod, state, settings.features)
    if not isinstance(found, Claims) or found.classic or found.named:
        return None, ""  # waits, errors, classic DRA and 1.30's named resources: not here
    devices = DeviceFit(pod.metadata.uid, found, state, settings)
    live = state.framework_for(pod)
    kept = tuple(n for n in live.profile.multi_point if n in REGISTRY)
    kept = tuple(n for n in kept if n != defaultpreemption.NAME)
    registry: Mapping[str, PluginFactory] = {**REGISTRY, DEVICE_FIT: _fixed(devices)}
    profile = Profile(
        scheduler_name=live.profile.scheduler_name,
        multi_point=(*kept, DEVICE_FIT, defaultpreemption.NAME),
        disabled=live.profile.disabled,
        weights=live.profile.weights,
        args=live.profile.args,
    )
    handle = PreemptionHandle(live.handle, nominator=nominator, pod_disruption_budgets=budgets)
    framework = Framework(profile, registry, handle=handle)
    if offset is not None:
        plugin = framework.plugins[defaultpreemption.NAME]
        assert isinstance(plugin, defaultpreemption.DefaultPreemption)
        plugin.offset = offset
    cycle = CycleState()
    outcome = schedule_pod(framework, cycle, pod, state.node_infos.snapshot())
    if not isinstance(outcome, FitError):
        return None, ""
    if metrics is not None and outcome.diagnosis.post_filter_msg:
        metrics.preemption_attempted()
    return chosen_candidate(cycle), outcome.diagnosis.post_filter_msg


def nominated_allocation(
    pod: Pod, candidate: Candidate, state: State, settings: Settings
) -> list[tuple[str, AllocationResult]]:
    """What the pod's unallocated claims get on the candidate's node once the claims only its
    victims hold are deallocated: (claim UID, allocation) pairs; none when nothing fits."""
    found = resolve_claims(pod, state, settings.features)
    entry = state.nodes.get(ObjectKey("", candidate.node))
    if not isinstance(found, Claims) or entry is None or not found.unallocated:
        return []
    freed = claims_freed(state, candidate.victims)
    outcome = allocate_on(
        entry.obj, found.unallocated, state.class_map(), state, settings, freed=freed
    )
    if not isinstance(outcome, tuple):
        return []
    results, _ = outcome
    return [(c.metadata.uid, r) for c, r in zip(found.unallocated, results, strict=True)]


class PreemptionHandle(FrameworkHandle):
    """The live framework's handle as the preemption framework sees it: the same listers and
    DeviceClass mapping of extended resources, with the shared nominations and the budgets."""

    __slots__ = ("_live",)

    def __init__(
        self,
        live: Handle,
        *,
        nominator: Nominator,
        pod_disruption_budgets: Callable[[], Sequence[PodDisruptionBudget]],
    ) -> None:
        super().__init__(nominator=nominator, pod_disruption_budgets=pod_disruption_budgets)
        self._live = live

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        return self._live.namespace_labels(name)

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._live.pvc(namespace, name)

    def pv(self, name: str) -> PersistentVolume | None:
        return self._live.pv(name)

    def pvs(self, storage_class: str) -> Sequence[PersistentVolume]:
        return self._live.pvs(storage_class)

    def storage_class(self, name: str) -> StorageClass | None:
        return self._live.storage_class(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self._live.csi_node(name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self._live.csi_driver(name)

    @property
    def extended_resource_classes(self) -> ExtendedResourceClasses:
        live = self._live
        if isinstance(live, ExtendedResourceHandle):
            return live.extended_resource_classes
        return ExtendedResourceClasses.of(())


def _fixed(plugin: Plugin) -> PluginFactory:
    def new(args: Mapping[str, object], handle: Handle) -> Plugin:
        return plugin

    return new
