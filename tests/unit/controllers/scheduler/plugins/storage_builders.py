"""Raw PVs, PVCs, StorageClasses, CSINodes and pods with volumes, and a Handle over them.

Built as the API serves them and parsed by the model, like upstream's `makePV`/`makePVC`
builders in volumebinding/test_utils.go; `StorageHandle` is the Handle the volume plugins read
(the listers in dicts, the snapshot from the nodes given).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dra_operator.controllers.scheduler.framework import NodeInfo, PodInfo, Snapshot
from dra_operator.model import (
    CSIDriver,
    CSINode,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    parse_csi_driver,
    parse_csi_node,
    parse_node,
    parse_persistent_volume,
    parse_persistent_volume_claim,
    parse_pod,
    parse_storage_class,
)

Raw = dict[str, Any]
NS = "default"
HOSTNAME = "kubernetes.io/hostname"
WAIT = "wait-sc"
WAIT_HDD = "wait-hdd-sc"
IMMEDIATE = "immediate-sc"


def storage_class(
    name: str,
    mode: str | None = "WaitForFirstConsumer",
    *,
    provisioner: str = "kubernetes.io/no-provisioner",
    topologies: Sequence[Mapping[str, Sequence[str]]] = (),
) -> StorageClass:
    raw: Raw = {"metadata": {"name": name}, "provisioner": provisioner}
    if mode is not None:
        raw["volumeBindingMode"] = mode
    if topologies:
        raw["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": list(v)} for k, v in t.items()]}
            for t in topologies
        ]
    return parse_storage_class(raw)


DEFAULT_CLASSES = (
    storage_class(WAIT),
    storage_class(WAIT_HDD),
    storage_class(IMMEDIATE, "Immediate"),
)


def pvc(
    name: str,
    storage_class: str | None = WAIT,
    *,
    bound_to: str = "",
    storage: str = "",
    phase: str = "",
    access_modes: Sequence[str] = (),
    annotations: Mapping[str, str] | None = None,
    owner_uid: str = "",
    selector: Raw | None = None,
    uid: str = "",
    resource_version: str = "1",
) -> PersistentVolumeClaim:
    """`bound_to` names the PV and marks the binding complete (upstream's `withBoundPV`)."""
    meta: Raw = {
        "name": name,
        "namespace": NS,
        "uid": uid or f"uid-{name}",
        "resourceVersion": resource_version,
        "annotations": dict(annotations or {}),
    }
    spec: Raw = {"accessModes": list(access_modes)}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if bound_to:
        spec["volumeName"] = bound_to
        meta["annotations"]["pv.kubernetes.io/bind-completed"] = "yes"
    if storage:
        spec["resources"] = {"requests": {"storage": storage}}
    if selector is not None:
        spec["selector"] = selector
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "pod", "uid": owner_uid, "controller": True}
        ]
    return parse_persistent_volume_claim(
        {"metadata": meta, "spec": spec, "status": {"phase": phase}}
    )


def pv(
    name: str,
    storage_class: str = WAIT,
    *,
    phase: str = "Available",
    capacity: str = "",
    node_affinity: Mapping[str, Sequence[str]] | None = None,
    claim: tuple[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    access_modes: Sequence[str] = (),
    csi: tuple[str, str] | None = None,
    resource_version: str = "1",
) -> PersistentVolume:
    """`claim` is (name, uid) of the claim the PV is bound (or pre-bound) to."""
    spec: Raw = {"storageClassName": storage_class, "accessModes": list(access_modes)}
    if capacity:
        spec["capacity"] = {"storage": capacity}
    if node_affinity is not None:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": k, "operator": "In", "values": list(v)}
                            for k, v in node_affinity.items()
                        ]
                    }
                ]
            }
        }
    if claim is not None:
        spec["claimRef"] = {"namespace": NS, "name": claim[0], "uid": claim[1]}
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    meta: Raw = {"name": name, "labels": dict(labels or {}), "resourceVersion": resource_version}
    return parse_persistent_volume({"metadata": meta, "spec": spec, "status": {"phase": phase}})


def pod(
    name: str = "pod-a",
    *,
    claims: Sequence[str] = (),
    ephemeral: Sequence[str] = (),
    volumes: Sequence[Raw] = (),
    node_name: str = "",
    uid: str = "",
) -> Pod:
    raw_volumes = [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]
    raw_volumes += [
        {"name": e, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}} for e in ephemeral
    ]
    raw_volumes += list(volumes)
    return parse_pod(
        {
            "metadata": {"name": name, "namespace": NS, "uid": uid or f"uid-{name}"},
            "spec": {"containers": [{"name": "c"}], "volumes": raw_volumes, "nodeName": node_name},
        }
    )


def node(name: str, labels: Mapping[str, str] | None = None) -> Node:
    return parse_node({"metadata": {"name": name, "labels": {HOSTNAME: name, **(labels or {})}}})


def csi_node(name: str, limits: Mapping[str, int | None]) -> CSINode:
    drivers = []
    for driver, count in limits.items():
        entry: Raw = {"name": driver, "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return parse_csi_node({"metadata": {"name": name}, "spec": {"drivers": drivers}})


def csi_driver(name: str, *, prevent_if_missing: bool = False) -> CSIDriver:
    spec = {"preventPodSchedulingIfMissing": prevent_if_missing}
    return parse_csi_driver({"metadata": {"name": name}, "spec": spec})


def node_info(n: Node, pods: Iterable[Pod] = ()) -> NodeInfo:
    info = NodeInfo(node=n, allocatable={})
    for p in pods:
        info.pods.append(PodInfo(pod=p, requests={}, non_zero_requests={}))
        for volume in p.spec.volumes:
            if volume.claim_name is not None:
                key = f"{p.metadata.namespace}/{volume.claim_name}"
                info.pvc_ref_counts[key] = info.pvc_ref_counts.get(key, 0) + 1
    return info


class StorageHandle:
    """The listers in dicts; replace an object by passing it to `put`."""

    def __init__(
        self,
        *,
        nodes: Sequence[NodeInfo] = (),
        pvcs: Iterable[PersistentVolumeClaim] = (),
        pvs: Iterable[PersistentVolume] = (),
        classes: Iterable[StorageClass] = DEFAULT_CLASSES,
        csi_nodes: Iterable[CSINode] = (),
        csi_drivers: Iterable[CSIDriver] = (),
    ) -> None:
        self._snapshot = Snapshot(nodes)
        self.pvcs = {(c.metadata.namespace, c.metadata.name): c for c in pvcs}
        self.pvs_by_name = {v.name: v for v in pvs}
        self.classes = {c.name: c for c in classes}
        self.csi_nodes = {c.name: c for c in csi_nodes}
        self.csi_drivers = {d.name: d for d in csi_drivers}

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get((namespace, name))

    def pv(self, name: str) -> PersistentVolume | None:
        return self.pvs_by_name.get(name)

    def pvs(self, storage_class: str) -> Sequence[PersistentVolume]:
        return sorted(
            (v for v in self.pvs_by_name.values() if v.storage_class == storage_class),
            key=lambda v: v.name,
        )

    def storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self.csi_drivers.get(name)

    def put(self, obj: PersistentVolume | PersistentVolumeClaim) -> None:
        if isinstance(obj, PersistentVolume):
            self.pvs_by_name[obj.name] = obj
        else:
            self.pvcs[(obj.metadata.namespace, obj.metadata.name)] = obj
