"""VolumeRestrictions: in-line disks that cannot be shared, and ReadWriteOncePod claims in use.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/volumerestrictions. Filter rejects a
node where another pod already mounts the same GCE PD (unless both read-only), AWS EBS volume,
RBD image (sharing a monitor; unless both read-only) or iSCSI IQN (unless both read-only); and
rejects every node while a ReadWriteOncePod claim of the pod is used by any pod of the cluster
(preemption may remove that pod: AddPod/RemovePod keep the count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    Status,
    error,
    unresolvable,
    unschedulable,
)
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.model import Pod, Volume

NAME = "VolumeRestrictions"
REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
_STATE_KEY = "PreFilter" + NAME


@dataclass(slots=True)
class _State:
    read_write_once_pod: frozenset[str]  # claim names in the pod's namespace
    conflicting: int  # how many of them pods of the cluster use

    def clone(self) -> _State:
        return _State(self.read_write_once_pod, self.conflicting)

    def update(self, pod: Pod, sign: int) -> None:
        self.conflicting += sign * sum(
            1 for v in pod.spec.volumes if v.claim_name in self.read_write_once_pod
        )


def _same_disk(a: Volume, b: Volume) -> bool:
    """`isVolumeConflict` for one pair: the same disk, and not both mounting it read-only."""
    if a.gce_persistent_disk and b.gce_persistent_disk:
        x, y = a.gce_persistent_disk, b.gce_persistent_disk
        return x.pd_name == y.pd_name and not (x.read_only and y.read_only)
    if a.aws_elastic_block_store and b.aws_elastic_block_store:
        return a.aws_elastic_block_store.volume_id == b.aws_elastic_block_store.volume_id
    if a.iscsi and b.iscsi:
        return a.iscsi.iqn == b.iscsi.iqn and not (a.iscsi.read_only and b.iscsi.read_only)
    if a.rbd and b.rbd:
        r, s = a.rbd, b.rbd
        return (
            bool(set(r.monitors) & set(s.monitors))
            and (r.pool, r.image) == (s.pool, s.image)
            and not (r.read_only and s.read_only)
        )
    return False


def _conflict(volume: Volume, other: Pod) -> bool:
    return any(_same_disk(volume, existing) for existing in other.spec.volumes)


class VolumeRestrictions:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        namespace = pod.metadata.namespace
        rwop = set()
        for volume in pod.spec.volumes:
            if volume.claim_name is None:
                continue
            pvc = self._handle.pvc(namespace, volume.claim_name)
            if pvc is None:
                return None, unresolvable(f'persistentvolumeclaim "{volume.claim_name}" not found')
            if pvc.read_write_once_pod:
                rwop.add(pvc.metadata.name)
        snapshot = self._handle.snapshot
        conflicting = sum(
            1
            for name in rwop
            if any(info.pvc_ref_counts.get(f"{namespace}/{name}", 0) > 0 for info in snapshot)
        )
        if conflicting == 0 and not any(v.has_disk for v in pod.spec.volumes):
            return None, SKIP
        state.write(_STATE_KEY, _State(frozenset(rwop), conflicting))
        return None, SUCCESS

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node: NodeInfo) -> Status:
        return self._update(state, pod_to_add.pod, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        return self._update(state, pod_to_remove.pod, -1)

    def _update(self, state: CycleState, pod: Pod, sign: int) -> Status:
        data = state.get(_STATE_KEY)
        if not isinstance(data, _State):
            return error(f'cannot read "{_STATE_KEY}" from cycleState')
        data.update(pod, sign)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        for volume in pod.spec.volumes:
            if volume.has_disk and any(_conflict(volume, p.pod) for p in node.pods):
                return unschedulable(REASON_DISK_CONFLICT)
        data = state.get(_STATE_KEY)
        if not isinstance(data, _State):
            return error(f'cannot read "{_STATE_KEY}" from cycleState')
        if data.conflicting > 0:
            return unschedulable(REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return SUCCESS


def new(args: Mapping[str, object], handle: Handle) -> VolumeRestrictions:
    """VolumeRestrictions takes no args."""
    check_known(args, "args", ())
    return VolumeRestrictions(handle)
