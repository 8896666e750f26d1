"""The parts of core/v1 volumes and storage.k8s.io/v1 that kube-scheduler's volume plugins read.

Pod volumes, PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes and CSIDrivers,
frozen and hashable like the rest of `model`. Only the fields VolumeBinding, VolumeRestrictions,
VolumeZone and NodeVolumeLimits look at are kept; writes (a PV's claimRef, a PVC's volumeName)
are patches built by the scheduler's I/O module, never renders of these views.

The helpers below are upstream's component-helpers `storage/volume` and `storage/ephemeral`
predicates, as pure functions of these values.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from dra_operator.model._frozen import FrozenMap
from dra_operator.model._nodeaffinity import node_matches
from dra_operator.model._pod_scheduling import LabelSelector
from dra_operator.model._quantity import Quantity
from dra_operator.model._types import NodeSelector, ObjectMeta

STORAGE = "storage"
FILESYSTEM = "Filesystem"
_NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"


class VolumeAnnotation(enum.StrEnum):
    """The annotations the scheduler and the PV controller bind volumes with (upstream's)."""

    BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
    SELECTED_NODE = "volume.kubernetes.io/selected-node"  # provision for this node
    BIND_COMPLETED = "pv.kubernetes.io/bind-completed"  # on a claim: binding done
    BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"  # not pre-bound by a user


class VolumeBindingMode(enum.StrEnum):
    IMMEDIATE = "Immediate"
    WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


# -- pod volumes -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GCEPersistentDisk:
    pd_name: str
    read_only: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AWSElasticBlockStore:
    volume_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RBDVolume:
    monitors: tuple[str, ...]
    pool: str = "rbd"
    image: str
    read_only: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ISCSIVolume:
    iqn: str
    read_only: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Volume:
    """`spec.volumes[]`: a claim (named or ephemeral) or one of the in-line disks checked for
    conflicts; every other source is kept as its name only."""

    name: str
    claim_name: str | None = None  # persistentVolumeClaim.claimName
    ephemeral: bool = False  # ephemeral.volumeClaimTemplate: the claim is `<pod>-<volume>`
    gce_persistent_disk: GCEPersistentDisk | None = None
    aws_elastic_block_store: AWSElasticBlockStore | None = None
    rbd: RBDVolume | None = None
    iscsi: ISCSIVolume | None = None

    @property
    def has_disk(self) -> bool:
        """An in-line disk VolumeRestrictions checks (`needsRestrictionsCheck`)."""
        return any((self.gce_persistent_disk, self.aws_elastic_block_store, self.rbd, self.iscsi))


def volume_claim_name(pod_name: str, volume: Volume) -> str | None:
    """The PVC a volume uses (`ephemeral.VolumeClaimName` for ephemeral ones), or None."""
    if volume.claim_name is not None:
        return volume.claim_name
    if volume.ephemeral:
        return f"{pod_name}-{volume.name}"
    return None


# -- PersistentVolume and PersistentVolumeClaim ----------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimReference:
    """A PV's `spec.claimRef`; `uid` empty while the binding is only pre-arranged."""

    namespace: str = ""
    name: str = ""
    uid: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CSIVolumeSource:
    driver: str
    volume_handle: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PersistentVolume:
    metadata: ObjectMeta
    capacity: FrozenMap[str, Quantity] = field(default_factory=FrozenMap)
    access_modes: tuple[str, ...] = ()
    storage_class_name: str = ""
    claim_ref: ClaimReference | None = None
    node_affinity: NodeSelector | None = None  # spec.nodeAffinity.required
    csi: CSIVolumeSource | None = None
    volume_mode: str = FILESYSTEM
    volume_attributes_class_name: str = ""
    phase: str = ""  # Pending, Available, Bound, Released, Failed

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def storage_class(self) -> str:
        """`GetPersistentVolumeClass`: the beta annotation wins over the field."""
        return self.metadata.annotations.get(
            VolumeAnnotation.BETA_STORAGE_CLASS, self.storage_class_name
        )

    @property
    def storage(self) -> Quantity:
        return self.capacity.get(STORAGE) or Quantity(0)


@dataclass(frozen=True, slots=True, kw_only=True)
class PersistentVolumeClaim:
    metadata: ObjectMeta
    storage_class_name: str | None = None
    volume_name: str = ""
    access_modes: tuple[str, ...] = ()
    requests: FrozenMap[str, Quantity] = field(default_factory=FrozenMap)
    selector: LabelSelector | None = None
    volume_mode: str = FILESYSTEM
    volume_attributes_class_name: str = ""
    phase: str = ""  # Pending, Bound, Lost

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def storage_class(self) -> str:
        """`GetPersistentVolumeClaimClass`: the beta annotation, else the field, else ""."""
        annotations = self.metadata.annotations
        if VolumeAnnotation.BETA_STORAGE_CLASS in annotations:
            return annotations[VolumeAnnotation.BETA_STORAGE_CLASS]
        return self.storage_class_name or ""

    @property
    def storage(self) -> Quantity:
        return self.requests.get(STORAGE) or Quantity(0)

    @property
    def read_write_once_pod(self) -> bool:
        return "ReadWriteOncePod" in self.access_modes

    @property
    def fully_bound(self) -> bool:
        """`isPVCFullyBound`: a volume named and the PV controller's bind-completed mark."""
        return (
            bool(self.volume_name) and VolumeAnnotation.BIND_COMPLETED in self.metadata.annotations
        )


def volume_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """`IsVolumeBoundToClaim`: the claimRef names the claim (and its UID, when it has one)."""
    ref = pv.claim_ref
    if ref is None or ref.name != pvc.metadata.name or ref.namespace != pvc.metadata.namespace:
        return False
    return not ref.uid or ref.uid == pvc.metadata.uid


def pv_node_affinity_matches(pv: PersistentVolume, node_labels: Mapping[str, str]) -> bool:
    """`CheckNodeAffinity`: upstream matches a node of labels only, so matchFields never hold."""
    return pv.node_affinity is None or node_matches("", node_labels, pv.node_affinity)


def access_modes_satisfied(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """`CheckAccessModes`: every mode the claim asks for is one the volume offers."""
    return set(pvc.access_modes) <= set(pv.access_modes)


def claim_is_for_pod(pvc: PersistentVolumeClaim, pod_namespace: str, pod_uid: str) -> bool:
    """`ephemeral.VolumeIsForPod`: the pod is the claim's controller."""
    return pvc.metadata.namespace == pod_namespace and any(
        ref.controller and ref.uid == pod_uid for ref in pvc.metadata.owner_references
    )


# -- StorageClass, CSINode, CSIDriver --------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySelectorRequirement:
    key: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySelectorTerm:
    match_label_expressions: tuple[TopologySelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class StorageClass:
    metadata: ObjectMeta
    provisioner: str = ""
    volume_binding_mode: str | None = None  # Immediate or WaitForFirstConsumer (defaulted)
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def can_provision(self) -> bool:
        """A provisioner is named, and not `kubernetes.io/no-provisioner` (static PVs only)."""
        return self.provisioner not in ("", _NOT_SUPPORTED_PROVISIONER)


def topology_matches(terms: tuple[TopologySelectorTerm, ...], labels: Mapping[str, str]) -> bool:
    """`MatchTopologySelectorTerms`: no terms match all; an empty term matches nothing."""
    if not terms:
        return True
    return any(
        term.match_label_expressions
        and all(labels.get(r.key) in r.values for r in term.match_label_expressions)
        for term in terms
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CSINodeDriver:
    name: str
    node_id: str = ""
    allocatable_count: int | None = None  # allocatable.count
    topology_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CSINode:
    metadata: ObjectMeta
    drivers: tuple[CSINodeDriver, ...] = ()

    @property
    def name(self) -> str:
        return self.metadata.name


@dataclass(frozen=True, slots=True, kw_only=True)
class CSIDriver:
    metadata: ObjectMeta
    storage_capacity: bool = False
    prevent_pod_scheduling_if_missing: bool = False

    @property
    def name(self) -> str:
        return self.metadata.name
