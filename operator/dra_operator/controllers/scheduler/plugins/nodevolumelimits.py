"""NodeVolumeLimits: no more CSI volumes on a node than its CSINode says the driver can attach.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/nodevolumelimits (CSILimits). The pod's
claims are counted per CSI driver (a bound claim by its PV's driver and volume handle, an
unbound one by its StorageClass's provisioner) on top of the distinct volumes the node's pods
already use; a driver whose CSINode entry has `allocatable.count` must stay within it. With
VolumeLimitScaling (on by default in 1.37), a CSIDriver with `preventPodSchedulingIfMissing`
keeps pods off nodes whose CSINode does not list it.

Not modelled: VolumeAttachments (volumes attached to the node but used by no pod there are not
counted) and in-tree volumes migrated to CSI (in-line disks and PVs without a `csi` source are
not counted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dra_operator import model
from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    PreFilterResult,
    Status,
    error,
    unresolvable,
    unschedulable,
)
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.model import Pod

NAME = "NodeVolumeLimits"
REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
_UNBOUND_PREFIX = "unbound"
"""Upstream prefixes an unbound claim's stand-in handle with 32 random characters; any
constant that no driver's volume handle starts with keeps them apart as well."""


class _NotFoundError(Exception):
    """A new pod's claim is missing: the pod is unresolvable until it appears."""


class NodeVolumeLimits:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        if any(v.claim_name is not None or v.ephemeral for v in pod.spec.volumes):
            return None, SUCCESS
        return None, SKIP

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if not pod.spec.volumes:
            return SUCCESS
        csi_node = self._handle.csi_node(node.name)
        try:
            new = self._attachable(pod, new_pod=True)
            if not new:
                return SUCCESS
            for driver in new.values():
                if not self._driver_on_node(driver, csi_node):
                    return unschedulable(f"{driver} CSI driver is not installed on the node")
            limits = {
                d.name: d.allocatable_count
                for d in (csi_node.drivers if csi_node is not None else ())
                if d.allocatable_count is not None
            }
            if not limits:
                return SUCCESS
            attached: dict[str, str] = {}
            for existing in node.pods:
                attached.update(self._attachable(existing.pod, new_pod=False))
        except _NotFoundError as exc:
            return unresolvable(str(exc))
        except ValueError as exc:
            return error(str(exc))
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return unschedulable(REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return SUCCESS

    def _driver_on_node(self, driver: str, csi_node: model.CSINode | None) -> bool:
        """`checkCSIDriverOnNode`: only a driver that opted in must be listed."""
        spec = self._handle.csi_driver(driver)
        if spec is None or not spec.prevent_pod_scheduling_if_missing:
            return True
        return csi_node is not None and any(d.name == driver for d in csi_node.drivers)

    def _attachable(self, pod: Pod, *, new_pod: bool) -> dict[str, str]:
        """`filterAttachableVolumes`: "<driver>/<handle>" → driver for each of the pod's claims."""
        found: dict[str, str] = {}
        namespace = pod.metadata.namespace
        for volume in pod.spec.volumes:
            name = model.volume_claim_name(pod.metadata.name, volume)
            if name is None:
                continue
            if not name:
                raise ValueError("PersistentVolumeClaim had no name")
            pvc = self._handle.pvc(namespace, name)
            if pvc is None:
                if new_pod:
                    raise _NotFoundError(
                        f'looking up PVC {namespace}/{name}: persistentvolumeclaim "{name}" '
                        "not found"
                    )
                continue
            if volume.ephemeral and not model.claim_is_for_pod(pvc, namespace, pod.metadata.uid):
                raise ValueError(
                    f"PVC {pvc.key} was not created for pod {namespace}/{pod.metadata.name} "
                    "(pod is not owner)"
                )
            driver, handle = self._driver_and_handle(pvc)
            if driver and handle:
                found[f"{driver}/{handle}"] = driver
        return found

    def _driver_and_handle(self, pvc: model.PersistentVolumeClaim) -> tuple[str, str]:
        pv = self._handle.pv(pvc.volume_name) if pvc.volume_name else None
        if pv is not None:
            return (pv.csi.driver, pv.csi.volume_handle) if pv.csi is not None else ("", "")
        class_name = pvc.storage_class
        sc = self._handle.storage_class(class_name) if class_name else None
        if sc is None:
            return "", ""
        return sc.provisioner, f"{_UNBOUND_PREFIX}-{pvc.key}"


def new(args: Mapping[str, object], handle: Handle) -> NodeVolumeLimits:
    """NodeVolumeLimits takes no args."""
    check_known(args, "args", ())
    return NodeVolumeLimits(handle)
