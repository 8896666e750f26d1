"""VolumeZone: a pod's bound PVs labelled with a zone or region keep it on nodes there.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/volumezone. PreFilter collects the zone
and region labels (GA and beta keys, multi-zone values joined by "__") of the PVs the pod's
claims are bound to; a WaitForFirstConsumer claim not bound yet is left to VolumeBinding.
Filter lets through nodes without any zone or region label, and rejects nodes whose label
(beta or GA spelling) is not among a PV's values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dra_operator import model
from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    PreFilterResult,
    Status,
    unresolvable,
)
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.model import Pod

NAME = "VolumeZone"
REASON_CONFLICT = "node(s) had no available volume zone"
_STATE_KEY = "PreFilter" + NAME
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (_BETA_ZONE, _BETA_REGION, _ZONE, _REGION)
_GA = {_BETA_ZONE: _ZONE, _BETA_REGION: _REGION}
_MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def pv_topologies(pv: model.PersistentVolume) -> list[PVTopology]:
    """A label whose list holds an empty entry is ignored, as upstream's parse error is."""
    found = []
    for key in TOPOLOGY_LABELS:
        value = pv.metadata.labels.get(key)
        if value is None:
            continue
        zones = [z.strip() for z in value.split(_MULTI_ZONE_DELIMITER)]
        if all(zones):
            found.append(PVTopology(pv.name, key, frozenset(zones)))
    return found


class VolumeZone:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def _topologies(self, pod: Pod) -> tuple[list[PVTopology], Status]:
        found: list[PVTopology] = []
        handle = self._handle
        for volume in pod.spec.volumes:
            name = volume.claim_name
            if name is None:
                continue
            if not name:
                return [], unresolvable("PersistentVolumeClaim had no name")
            pvc = handle.pvc(pod.metadata.namespace, name)
            if pvc is None:
                return [], unresolvable(f'persistentvolumeclaim "{name}" not found')
            if not pvc.volume_name:
                class_name = pvc.storage_class
                if not class_name:
                    return [], unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                sc = handle.storage_class(class_name)
                if sc is None:
                    return [], unresolvable(f'storageclass.storage.k8s.io "{class_name}" not found')
                if sc.volume_binding_mode is None:
                    return [], unresolvable(
                        f'VolumeBindingMode not set for StorageClass "{class_name}"'
                    )
                if sc.volume_binding_mode == model.VolumeBindingMode.WAIT_FOR_FIRST_CONSUMER:
                    continue
                return [], unresolvable("PersistentVolume had no name")
            pv = handle.pv(pvc.volume_name)
            if pv is None:
                return [], unresolvable(f'persistentvolume "{pvc.volume_name}" not found')
            found.extend(pv_topologies(pv))
        return found, SUCCESS

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        topologies, status = self._topologies(pod)
        if not status.ok:
            return None, status
        if not topologies:
            return None, SKIP
        state.write(_STATE_KEY, tuple(topologies))
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if not pod.spec.volumes:
            return SUCCESS
        stored = state.get(_STATE_KEY)
        if isinstance(stored, tuple):
            topologies: Sequence[PVTopology] = stored
        else:  # PreFilter did not run: compute here, as upstream does
            topologies, status = self._topologies(pod)
            if not status.ok:
                return status
        labels: Mapping[str, str] = node.node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return SUCCESS
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(_GA.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return unresolvable(REASON_CONFLICT)
        return SUCCESS


def new(args: Mapping[str, object], handle: Handle) -> VolumeZone:
    """VolumeZone takes no args."""
    check_known(args, "args", ())
    return VolumeZone(handle)
