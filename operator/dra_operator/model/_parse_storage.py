"""Pod volumes, PVs, PVCs (core/v1) and StorageClass, CSINode, CSIDriver (storage.k8s.io/v1)
from raw JSON, keeping only what the volume plugins read (`model._storage`)."""

from __future__ import annotations

from dra_operator.model._parse_common import (
    Raw,
    as_object,
    list_of,
    metadata,
    opt_bool,
    opt_int,
    opt_node_selector,
    opt_object,
    opt_str,
    quantity_map,
    req_str,
    str_list,
    str_or_empty,
)
from dra_operator.model._parse_pod_scheduling import label_selector
from dra_operator.model._storage import (
    FILESYSTEM,
    AWSElasticBlockStore,
    ClaimReference,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIVolumeSource,
    GCEPersistentDisk,
    ISCSIVolume,
    PersistentVolume,
    PersistentVolumeClaim,
    RBDVolume,
    StorageClass,
    TopologySelectorRequirement,
    TopologySelectorTerm,
    Volume,
)


def _child(path: str, name: str) -> str:
    return f"{path}.{name}"


def volume(value: object, path: str) -> Volume:
    """One `spec.volumes[]` entry."""
    raw = as_object(value, path)
    claim = opt_object(raw, "persistentVolumeClaim", path)
    ephemeral = opt_object(raw, "ephemeral", path)
    gce = opt_object(raw, "gcePersistentDisk", path)
    aws = opt_object(raw, "awsElasticBlockStore", path)
    rbd = opt_object(raw, "rbd", path)
    iscsi = opt_object(raw, "iscsi", path)
    return Volume(
        name=req_str(raw, "name", path),
        claim_name=None
        if claim is None
        else str_or_empty(claim, "claimName", _child(path, "persistentVolumeClaim")),
        ephemeral=ephemeral is not None
        and opt_object(ephemeral, "volumeClaimTemplate", _child(path, "ephemeral")) is not None,
        gce_persistent_disk=None
        if gce is None
        else GCEPersistentDisk(
            pd_name=str_or_empty(gce, "pdName", _child(path, "gcePersistentDisk")),
            read_only=bool(opt_bool(gce, "readOnly", _child(path, "gcePersistentDisk"))),
        ),
        aws_elastic_block_store=None
        if aws is None
        else AWSElasticBlockStore(
            volume_id=str_or_empty(aws, "volumeID", _child(path, "awsElasticBlockStore"))
        ),
        rbd=None
        if rbd is None
        else RBDVolume(
            monitors=str_list(rbd, "monitors", _child(path, "rbd")),
            pool=opt_str(rbd, "pool", _child(path, "rbd")) or "rbd",
            image=str_or_empty(rbd, "image", _child(path, "rbd")),
            read_only=bool(opt_bool(rbd, "readOnly", _child(path, "rbd"))),
        ),
        iscsi=None
        if iscsi is None
        else ISCSIVolume(
            iqn=str_or_empty(iscsi, "iqn", _child(path, "iscsi")),
            read_only=bool(opt_bool(iscsi, "readOnly", _child(path, "iscsi"))),
        ),
    )


def _claim_ref(raw: Raw, path: str) -> ClaimReference:
    return ClaimReference(
        namespace=str_or_empty(raw, "namespace", path),
        name=str_or_empty(raw, "name", path),
        uid=str_or_empty(raw, "uid", path),
    )


def parse_persistent_volume(raw: Raw) -> PersistentVolume:
    """A core/v1 PersistentVolume."""
    spec = opt_object(raw, "spec", "") or {}
    status = opt_object(raw, "status", "") or {}
    claim_ref = opt_object(spec, "claimRef", "spec")
    affinity = opt_object(spec, "nodeAffinity", "spec") or {}
    csi = opt_object(spec, "csi", "spec")
    return PersistentVolume(
        metadata=metadata(raw),
        capacity=quantity_map(spec, "capacity", "spec"),
        access_modes=str_list(spec, "accessModes", "spec"),
        storage_class_name=str_or_empty(spec, "storageClassName", "spec"),
        claim_ref=None if claim_ref is None else _claim_ref(claim_ref, "spec.claimRef"),
        node_affinity=opt_node_selector(affinity, "required", "spec.nodeAffinity"),
        csi=None
        if csi is None
        else CSIVolumeSource(
            driver=req_str(csi, "driver", "spec.csi"),
            volume_handle=str_or_empty(csi, "volumeHandle", "spec.csi"),
        ),
        volume_mode=opt_str(spec, "volumeMode", "spec") or FILESYSTEM,
        volume_attributes_class_name=str_or_empty(spec, "volumeAttributesClassName", "spec"),
        phase=str_or_empty(status, "phase", "status"),
    )


def parse_persistent_volume_claim(raw: Raw) -> PersistentVolumeClaim:
    """A core/v1 PersistentVolumeClaim."""
    spec = opt_object(raw, "spec", "") or {}
    status = opt_object(raw, "status", "") or {}
    resources = opt_object(spec, "resources", "spec") or {}
    selector = opt_object(spec, "selector", "spec")
    return PersistentVolumeClaim(
        metadata=metadata(raw),
        storage_class_name=opt_str(spec, "storageClassName", "spec"),
        volume_name=str_or_empty(spec, "volumeName", "spec"),
        access_modes=str_list(spec, "accessModes", "spec"),
        requests=quantity_map(resources, "requests", "spec.resources"),
        selector=None if selector is None else label_selector(selector, "spec.selector"),
        volume_mode=opt_str(spec, "volumeMode", "spec") or FILESYSTEM,
        volume_attributes_class_name=str_or_empty(spec, "volumeAttributesClassName", "spec"),
        phase=str_or_empty(status, "phase", "status"),
    )


def _topology_requirement(value: object, path: str) -> TopologySelectorRequirement:
    raw = as_object(value, path)
    return TopologySelectorRequirement(
        key=req_str(raw, "key", path), values=str_list(raw, "values", path)
    )


def _topology_term(value: object, path: str) -> TopologySelectorTerm:
    raw = as_object(value, path)
    return TopologySelectorTerm(
        match_label_expressions=list_of(raw, "matchLabelExpressions", path, _topology_requirement)
    )


def parse_storage_class(raw: Raw) -> StorageClass:
    """A storage.k8s.io/v1 StorageClass (its fields are top-level: it has no spec)."""
    return StorageClass(
        metadata=metadata(raw),
        provisioner=str_or_empty(raw, "provisioner", ""),
        volume_binding_mode=opt_str(raw, "volumeBindingMode", ""),
        allowed_topologies=list_of(raw, "allowedTopologies", "", _topology_term),
    )


def _csi_node_driver(value: object, path: str) -> CSINodeDriver:
    raw = as_object(value, path)
    allocatable = opt_object(raw, "allocatable", path) or {}
    return CSINodeDriver(
        name=req_str(raw, "name", path),
        node_id=str_or_empty(raw, "nodeID", path),
        allocatable_count=opt_int(allocatable, "count", _child(path, "allocatable")),
        topology_keys=str_list(raw, "topologyKeys", path),
    )


def parse_csi_node(raw: Raw) -> CSINode:
    """A storage.k8s.io/v1 CSINode (named as its Node)."""
    spec = opt_object(raw, "spec", "") or {}
    return CSINode(
        metadata=metadata(raw), drivers=list_of(spec, "drivers", "spec", _csi_node_driver)
    )


def parse_csi_driver(raw: Raw) -> CSIDriver:
    """A storage.k8s.io/v1 CSIDriver."""
    spec = opt_object(raw, "spec", "") or {}
    return CSIDriver(
        metadata=metadata(raw),
        storage_capacity=bool(opt_bool(spec, "storageCapacity", "spec")),
        prevent_pod_scheduling_if_missing=bool(
            opt_bool(spec, "preventPodSchedulingIfMissing", "spec")
        ),
    )
