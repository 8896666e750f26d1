"""VolumeBinding: a pod's PersistentVolumeClaims decide where it may run, and get bound there.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/volumebinding. PreFilter sorts the pod's
claims (`_binder`) and rejects the pod outright while an "immediate" claim is unbound (the PV
controller binds those, not the scheduler). Filter checks each node: bound claims' PVs must
accept it, and each WaitForFirstConsumer claim must find an available PV there or be
provisionable for it. Score (StorageCapacityScoring, on by default in 1.37) prefers the node
whose matched PVs are the tightest fit. Reserve assumes the chosen bindings in memory so the
next pod does not take the same PV; Unreserve forgets them. PreBind writes them through the
`VolumeWriter` the live scheduler hands over, then waits (1 s polls, `bindTimeoutSeconds`,
default 600) until every claim is bound, as upstream's `BindPodVolumes` does.

One difference: after writing a PV's claimRef, PreBind also writes the claim's side (its
volumeName and the bind-completed annotation), which kube-controller-manager's PV controller
would otherwise do; so a control plane without that controller binds too, and beside it both
write the same values. Differences inherited from `_binder`: no CSIStorageCapacity, no in-tree
to CSI translation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from dra_operator import errors, model
from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    PreFilterResult,
    ScoreExtensions,
    Status,
    error,
    unresolvable,
)
from dra_operator.controllers.scheduler.plugins._args import (
    PluginArgsError,
    as_int,
    as_list,
    as_mapping,
    check_known,
)
from dra_operator.controllers.scheduler.plugins.volumebinding import _scorer
from dra_operator.controllers.scheduler.plugins.volumebinding._assume import AssumeCache
from dra_operator.controllers.scheduler.plugins.volumebinding._binder import (
    REASON_BIND_CONFLICT,
    REASON_NODE_CONFLICT,
    REASON_PV_NOT_EXIST,
    REASON_UNBOUND_IMMEDIATE,
    BinderError,
    Binding,
    PodVolumeClaims,
    PodVolumes,
    bind_volume_to_claim,
    claim_of,
    claim_problem,
    find_pod_volumes,
    pod_volume_claims,
    storage_bytes,
    with_selected_node,
)
from dra_operator.model import PersistentVolume, PersistentVolumeClaim, Pod

NAME = "VolumeBinding"
DEFAULT_BIND_TIMEOUT_SECONDS = 600
POLL_INTERVAL = 1.0  # seconds between checks of the bindings in PreBind, as upstream

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "NAME",
    "REASON_BIND_CONFLICT",
    "REASON_NODE_CONFLICT",
    "REASON_PV_NOT_EXIST",
    "REASON_UNBOUND_IMMEDIATE",
    "VolumeBinding",
    "VolumeWriter",
    "WritesVolumes",
    "new",
]


class VolumeWriter(Protocol):
    """The API writes of PreBind; each raises `errors.DRAOperatorError` when refused."""

    async def bind_volume(self, pv: PersistentVolume) -> PersistentVolume:
        """Write `pv`'s claimRef and annotations (precondition: its resourceVersion)."""
        ...

    async def bind_claim(self, pvc: PersistentVolumeClaim, pv_name: str) -> None:
        """Name the PV in the claim and mark the binding complete, unless already done."""
        ...

    async def select_node(
        self, pvc: PersistentVolumeClaim, node_name: str
    ) -> PersistentVolumeClaim:
        """Annotate the claim with the node its volume is to be provisioned for."""
        ...


@runtime_checkable
class WritesVolumes(Protocol):
    """A Handle of the live scheduler: it carries the writer PreBind uses."""

    @property
    def volume_writer(self) -> VolumeWriter: ...


@dataclass(slots=True)
class _State:
    """Per cycle; shared by clones, as upstream's (preemption never reads it)."""

    claims: PodVolumeClaims | None = None  # None: the pod uses no claims
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    has_static_bindings: bool = False
    all_bound: bool = False


def _shape(raw: object) -> tuple[_scorer.ShapePoint, ...]:
    """`args.shape`: utilization 0..100 ascending, scores 0..10 (scaled by 10)."""
    if raw is None:
        return _scorer.DEFAULT_SHAPE
    points: list[_scorer.ShapePoint] = []
    for i, value in enumerate(as_list(raw, "args.shape")):
        path = f"args.shape[{i}]"
        point = as_mapping(value, path)
        check_known(point, path, ("utilization", "score"))
        utilization = as_int(point.get("utilization", 0), f"{path}.utilization")
        score = as_int(point.get("score", 0), f"{path}.score")
        if not 0 <= utilization <= 100 or not 0 <= score <= _scorer.MAX_CUSTOM_PRIORITY_SCORE:
            raise PluginArgsError(f"{path}: utilization must be 0..100 and score 0..10")
        if points and utilization <= points[-1].utilization:
            raise PluginArgsError(f"{path}.utilization: values must be sorted in increasing order")
        factor = 100 // _scorer.MAX_CUSTOM_PRIORITY_SCORE
        points.append(_scorer.ShapePoint(utilization, score * factor))
    if not points:
        raise PluginArgsError("args.shape: must not be empty")
    return tuple(points)


class VolumeBinding:
    """See the module docstring; one instance outlives cycles (it holds the assume cache)."""

    def __init__(
        self,
        handle: Handle,
        *,
        writer: VolumeWriter | None = None,
        bind_timeout: float = DEFAULT_BIND_TIMEOUT_SECONDS,
        shape: Sequence[_scorer.ShapePoint] = _scorer.DEFAULT_SHAPE,
    ) -> None:
        self._handle = handle
        self._writer = writer
        self._bind_timeout = bind_timeout
        self._shape = tuple(shape)
        self.cache = AssumeCache(handle)

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """Nothing for a pod without volume claims (its Score is 0 on every node); None with
        claims, whose Score reads what Filter found per node."""
        name = pod.metadata.name
        if any(model.volume_claim_name(name, v) is not None for v in pod.spec.volumes):
            return None
        return ()

    # -- PreFilter, Filter --------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        has, problem = claim_problem(pod, self._handle.pvc)
        if problem is not None:
            return None, unresolvable(problem)
        if not has:
            state.write(NAME, _State())
            return None, SKIP
        try:
            claims = pod_volume_claims(pod, self.cache, self._handle.storage_class)
        except BinderError as exc:
            return None, error(str(exc))
        if claims.unbound_immediate:
            return None, unresolvable(REASON_UNBOUND_IMMEDIATE)
        state.write(NAME, _State(claims=claims))
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        data = _read(state)
        if data is None:
            return error(f"reading {NAME!r} from cycleState: not found")
        if data.claims is None:
            return SUCCESS
        try:
            volumes, reasons = find_pod_volumes(
                data.claims, node.node, self.cache, self._handle.storage_class
            )
        except BinderError as exc:
            return error(str(exc))
        if reasons:
            return unresolvable(*reasons)
        data.by_node[node.name] = volumes
        data.has_static_bindings = data.has_static_bindings or bool(volumes.static_bindings)
        return SUCCESS

    # -- PreScore, Score ----------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """StorageCapacityScoring is on: score whenever PreFilter ran (upstream's 1.37)."""
        if _read(state) is None:
            return error(f"reading {NAME!r} from cycleState: not found")
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        """Static bindings only: provisions are scored from CSIStorageCapacity, not watched."""
        data = _read(state)
        volumes = data.by_node.get(node.name) if data is not None else None
        if volumes is None:
            return 0, SUCCESS
        by_class: dict[str, _scorer.StorageResource] = {}
        for binding in volumes.static_bindings:
            resource = by_class.setdefault(binding.pv.storage_class_name, _scorer.StorageResource())
            resource.requested += storage_bytes(binding.pvc.storage)
            resource.capacity += storage_bytes(binding.pv.storage)
        return _scorer.score(self._shape, by_class), SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    # -- Reserve, Unreserve -------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = _read(state)
        if data is None:
            return error(f"reading {NAME!r} from cycleState: not found")
        volumes = data.by_node.get(node_name)
        if volumes is None:
            data.all_bound = True
            return SUCCESS
        try:
            data.all_bound = self._assume(pod, node_name, volumes, data)
        except BinderError as exc:
            return error(str(exc))
        return SUCCESS

    def _assume(self, pod: Pod, node_name: str, volumes: PodVolumes, data: _State) -> bool:
        """`AssumePodVolumes`: False when PreBind has API writes to do."""
        if all(
            pvc is None or pvc.fully_bound
            for pvc in (claim_of(pod, v, self.cache) for v in pod.spec.volumes)
        ):
            return True
        bindings = []
        for binding in volumes.static_bindings:
            pv, dirty = bind_volume_to_claim(binding.pv, binding.pvc)
            if dirty:
                self.cache.assume_pv(pv)
            bindings.append(Binding(binding.pvc, pv))
        provisions = []
        for pvc in volumes.dynamic_provisions:
            selected = with_selected_node(pvc, node_name)
            self.cache.assume_pvc(selected)
            provisions.append(selected)
        data.by_node[node_name] = PodVolumes(tuple(bindings), tuple(provisions))
        return False

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        data = _read(state)
        volumes = data.by_node.get(node_name) if data is not None else None
        if volumes is not None:
            self.cache.restore_pvs([b.pv for b in volumes.static_bindings])
            self.cache.restore_pvcs(volumes.dynamic_provisions)

    # -- PreBind ------------------------------------------------------------------------------

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = _read(state)
        if data is None:
            return error(f"reading {NAME!r} from cycleState: not found")
        if data.all_bound:
            return SUCCESS
        volumes = data.by_node.get(node_name)
        if volumes is None:
            return error(f'no pod volume found for node "{node_name}"')
        if self._writer is None:
            return error("binding volumes: the scheduler has no volume writer")
        try:
            written = await self._write(volumes, node_name)
            async with asyncio.timeout(self._bind_timeout):
                while not self._bound(written, node_name):
                    await asyncio.sleep(POLL_INTERVAL)
        except TimeoutError:
            return error("binding volumes: context deadline exceeded")
        except (errors.DRAOperatorError, BinderError) as exc:
            return error(str(exc))
        return SUCCESS

    async def _write(self, volumes: PodVolumes, node_name: str) -> PodVolumes:
        """`bindAPIUpdate`; what was not written yet is restored in the cache on failure."""
        assert self._writer is not None
        bindings = list(volumes.static_bindings)
        provisions = list(volumes.dynamic_provisions)
        done = 0
        try:
            for binding in volumes.static_bindings:
                pv = await self._writer.bind_volume(binding.pv)
                await self._writer.bind_claim(binding.pvc, pv.name)
                bindings[done] = Binding(binding.pvc, pv)
                done += 1
        except errors.DRAOperatorError:
            self.cache.restore_pvs([b.pv for b in volumes.static_bindings[done:]])
            self.cache.restore_pvcs(volumes.dynamic_provisions)
            raise
        done = 0
        try:
            for pvc in volumes.dynamic_provisions:
                provisions[done] = await self._writer.select_node(pvc, node_name)
                done += 1
        except errors.DRAOperatorError:
            self.cache.restore_pvcs(volumes.dynamic_provisions[done:])
            raise
        return PodVolumes(tuple(bindings), tuple(provisions))

    def _bound(self, written: PodVolumes, node_name: str) -> bool:
        """`checkBindings` on the listers' latest objects; BinderError where it cannot be."""
        info = self._handle.snapshot.get(node_name)
        labels = info.node.labels if info is not None else model.FrozenMap[str, str]()
        for binding in written.static_bindings:
            pv = self._handle.pv(binding.pv.name)
            meta = binding.pvc.metadata
            pvc = self._handle.pvc(meta.namespace, meta.name)
            if pv is None or pvc is None:
                raise BinderError("failed to check binding: not found")
            if _newer(binding.pv.metadata, pv.metadata):
                return False
            if not model.pv_node_affinity_matches(pv, labels):
                raise BinderError(f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}"')
            if pv.claim_ref is None or not pv.claim_ref.uid:
                raise BinderError(f'ClaimRef got reset for pv "{pv.name}"')
            if not pvc.fully_bound:
                return False
        for claim in written.dynamic_provisions:
            meta = claim.metadata
            pvc = self._handle.pvc(meta.namespace, meta.name)
            if pvc is None:
                raise BinderError("failed to check provisioning pvc: not found")
            if _newer(meta, pvc.metadata):
                return False
            selected = pvc.metadata.annotations.get(model.VolumeAnnotation.SELECTED_NODE)
            if selected is None:
                raise BinderError(f'selectedNode annotation reset for PVC "{meta.name}"')
            if selected != node_name:
                raise BinderError(f'provisioning failed for PVC "{meta.name}"')
            if pvc.volume_name:
                pv = self._handle.pv(pvc.volume_name)
                if pv is None:
                    return False
                if not model.pv_node_affinity_matches(pv, labels):
                    raise BinderError(
                        f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}"'
                    )
            if not pvc.fully_bound:
                return False
        return True


def _newer(written: model.ObjectMeta, cached: model.ObjectMeta) -> bool:
    """The lister has not caught up with our write yet (resourceVersions compared as numbers)."""
    try:
        return int(written.resource_version) > int(cached.resource_version)
    except ValueError:
        return False


def _read(state: CycleState) -> _State | None:
    data = state.get(NAME)
    return data if isinstance(data, _State) else None


def new(args: Mapping[str, object], handle: Handle) -> VolumeBinding:
    """VolumeBindingArgs: `bindTimeoutSeconds` (default 600) and `shape` (0→10, 100→0)."""
    check_known(args, "args", ("bindTimeoutSeconds", "shape"))
    timeout = as_int(
        args.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS), "args.bindTimeoutSeconds"
    )
    if timeout < 0:
        raise PluginArgsError("args.bindTimeoutSeconds: must not be negative")
    writer = handle.volume_writer if isinstance(handle, WritesVolumes) else None
    return VolumeBinding(
        handle, writer=writer, bind_timeout=float(timeout), shape=_shape(args.get("shape"))
    )
