"""Every store the controllers read, fed by the reflectors (`_reflector`).

One `Store` per watched kind, the allocated-devices ledger and the deleted-pod UIDs, kept
together because one event touches several of them (a claim event moves the ledger; a pod
deletion is remembered). Every replica keeps these warm, leader or not (rule 7).

An object that does not parse keeps its last good version (see `Store.apply`) and is reported
once per resourceVersion through `on_invalid`; the operator never stops over it.

On a 1.30 server (resource.k8s.io/v1alpha2 only), `named` holds its ResourceSlices and parameter
objects as they are (`model.v1alpha2`): the scheduler allocates named resources from them.

The storage kinds (PVs, PVCs, StorageClasses, CSINodes, CSIDrivers) feed the scheduler's volume
plugins; every server serves them (core/v1 and storage.k8s.io/v1), so they are always watched.

The namespaces' labels are always watched (InterPodAffinity's namespaceSelector, and the
namespaceSelector of AllocationPolicies); the AllocationPolicy objects when their CRD is
installed (`policies`); when the scheduler runs, the PodDisruptionBudgets (`pdbs`), which
preemption reads to spare the pods a budget protects.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, Final

from dra_operator import errors, hooks, model
from dra_operator.cluster import (
    CLAIM_INDEXERS,
    DELETED,
    JOURNAL_LENGTH,
    POD_INDEXERS,
    SLICE_INDEXERS,
    Change,
    DeviceLedger,
    ObjectKey,
    RecentlyDeleted,
    Store,
    metadata_and_spec,
    metadata_only,
    version_number,
    without_managed_fields,
)
from dra_operator.controllers.scheduler import NamedInventory


class Kind(enum.StrEnum):
    """The watched kinds, by their plural resource name."""

    PODS = "pods"
    NODES = "nodes"
    CLAIMS = "resourceclaims"
    TEMPLATES = "resourceclaimtemplates"
    CLASSES = "deviceclasses"
    SLICES = "resourceslices"
    TAINT_RULES = "devicetaintrules"
    SCHEDULING_CONTEXTS = "podschedulingcontexts"
    CLASS_PARAMETERS = "resourceclassparameters"  # 1.30 (v1alpha2)
    CLAIM_PARAMETERS = "resourceclaimparameters"  # 1.30 (v1alpha2)
    POOL_STATUS_REQUESTS = "resourcepoolstatusrequests"  # 1.36+ (v1alpha3), KEP-5677
    NAMESPACES = "namespaces"
    POLICIES = "allocationpolicies"
    PERSISTENT_VOLUMES = "persistentvolumes"
    PERSISTENT_VOLUME_CLAIMS = "persistentvolumeclaims"
    STORAGE_CLASSES = "storageclasses"
    CSI_NODES = "csinodes"
    CSI_DRIVERS = "csidrivers"
    POD_GROUPS = "podgroups"  # scheduling.k8s.io, 1.36+ with GenericWorkload
    PDBS = "poddisruptionbudgets"


CORE_KINDS: Final = frozenset({Kind.PODS, Kind.NODES})

InvalidHook = Callable[[Kind, Mapping[str, Any], errors.InvalidObjectError], None]


class Caches:
    """The stores of one operator; `versions` names the served version of each DRA kind."""

    def __init__(
        self,
        versions: Mapping[str, str],
        *,
        consumable_capacity: bool = True,
        policies: bool = False,
        pod_groups: str = "",
        pod_disruption_budgets: bool = False,
        deterministic_claim_names: bool = False,
        on_invalid: InvalidHook | None = None,
    ) -> None:
        def dra(parse: Callable[[Mapping[str, Any], str], Any], kind: Kind) -> Any:
            version = versions.get(kind, "")
            return lambda raw: parse(raw, version)

        # No write is built from a cached pod or node: their raw dicts keep only metadata (and
        # a pod its spec, so that an event that left it unchanged does not parse it again).
        slim = without_managed_fields
        deterministic = deterministic_claim_names  # before 1.28: `model.ClaimNaming`
        self.pods: Store[model.Pod] = Store(
            "Pod",
            lambda raw: model.parse_pod(raw, deterministic_claim_names=deterministic),
            POD_INDEXERS,
            keep=metadata_and_spec,
            reparse=lambda raw, old: model.parse_pod(
                raw, spec=old.spec, deterministic_claim_names=deterministic
            ),
        )
        self.nodes: Store[model.Node] = Store(
            "Node", model.parse_node, journal=JOURNAL_LENGTH, keep=metadata_only
        )
        claim_version = versions[Kind.CLAIMS]
        self.claims: Store[model.ResourceClaim] = Store(
            "ResourceClaim",
            dra(model.parse_resource_claim, Kind.CLAIMS),
            CLAIM_INDEXERS,
            keep=slim,
            reparse=lambda raw, old: model.parse_resource_claim(raw, claim_version, spec=old.spec),
        )
        self.templates: Store[model.ResourceClaimTemplate] = Store(
            "ResourceClaimTemplate",
            dra(model.parse_resource_claim_template, Kind.TEMPLATES),
            keep=slim,
        )
        self.classes: Store[model.DeviceClass] = Store(
            "DeviceClass", dra(model.parse_device_class, Kind.CLASSES), keep=slim
        )
        self.slices: Store[model.ResourceSlice] = Store(
            "ResourceSlice",
            dra(model.parse_resource_slice, Kind.SLICES),
            SLICE_INDEXERS,
            journal=JOURNAL_LENGTH,  # the scheduler's verdicts read what changed
            keep=slim,
        )
        self.persistent_volumes: Store[model.PersistentVolume] = Store(
            "PersistentVolume", model.parse_persistent_volume, keep=slim
        )
        self.persistent_volume_claims: Store[model.PersistentVolumeClaim] = Store(
            "PersistentVolumeClaim", model.parse_persistent_volume_claim, keep=slim
        )
        self.storage_classes: Store[model.StorageClass] = Store(
            "StorageClass", model.parse_storage_class, keep=slim
        )
        self.csi_nodes: Store[model.CSINode] = Store("CSINode", model.parse_csi_node, keep=slim)
        self.csi_drivers: Store[model.CSIDriver] = Store(
            "CSIDriver", model.parse_csi_driver, keep=slim
        )
        self.stores: dict[Kind, Store[Any]] = {
            Kind.PODS: self.pods,
            Kind.NODES: self.nodes,
            Kind.CLAIMS: self.claims,
            Kind.TEMPLATES: self.templates,
            Kind.CLASSES: self.classes,
            Kind.PERSISTENT_VOLUMES: self.persistent_volumes,
            Kind.PERSISTENT_VOLUME_CLAIMS: self.persistent_volume_claims,
            Kind.STORAGE_CLASSES: self.storage_classes,
            Kind.CSI_NODES: self.csi_nodes,
            Kind.CSI_DRIVERS: self.csi_drivers,
        }
        self.named: NamedInventory | None = None
        if versions.get(Kind.SLICES) == model.v1alpha2.VERSION:  # 1.30: read as they are
            self.named = NamedInventory(
                slices=Store("ResourceSlice", model.v1alpha2.parse_resource_slice, keep=slim),
                class_parameters=Store(
                    "ResourceClassParameters",
                    model.v1alpha2.parse_resource_class_parameters,
                    keep=slim,
                ),
                claim_parameters=Store(
                    "ResourceClaimParameters",
                    model.v1alpha2.parse_resource_claim_parameters,
                    keep=slim,
                ),
            )
            self.stores[Kind.SLICES] = self.named.slices
            if Kind.CLASS_PARAMETERS in versions:
                self.stores[Kind.CLASS_PARAMETERS] = self.named.class_parameters
            if Kind.CLAIM_PARAMETERS in versions:
                self.stores[Kind.CLAIM_PARAMETERS] = self.named.claim_parameters
        elif Kind.SLICES in versions:  # 1.27-1.29 serve none: stays empty
            self.stores[Kind.SLICES] = self.slices
        self.taint_rules: Store[model.DeviceTaintRule] | None = None
        if Kind.TAINT_RULES in versions:
            self.taint_rules = Store(
                "DeviceTaintRule", dra(model.parse_device_taint_rule, Kind.TAINT_RULES)
            )
            self.stores[Kind.TAINT_RULES] = self.taint_rules
        self.contexts: Store[model.PodSchedulingContext] | None = None
        if Kind.SCHEDULING_CONTEXTS in versions:
            self.contexts = Store(
                "PodSchedulingContext",
                dra(model.parse_pod_scheduling_context, Kind.SCHEDULING_CONTEXTS),
            )
            self.stores[Kind.SCHEDULING_CONTEXTS] = self.contexts
        self.pool_status_requests: Store[model.ResourcePoolStatusRequest] | None = None
        if Kind.POOL_STATUS_REQUESTS in versions:
            self.pool_status_requests = Store(
                "ResourcePoolStatusRequest",
                dra(model.parse_resource_pool_status_request, Kind.POOL_STATUS_REQUESTS),
            )
            self.stores[Kind.POOL_STATUS_REQUESTS] = self.pool_status_requests
        self.pod_groups: Store[model.PodGroup] | None = None
        if pod_groups:  # the scheduling.k8s.io version serving them
            self.pod_groups = Store(
                "PodGroup", lambda raw: model.parse_pod_group(raw, pod_groups), keep=slim
            )
            self.stores[Kind.POD_GROUPS] = self.pod_groups
        # Namespaces' labels: the scheduler's InterPodAffinity (namespaceSelector) and policies.
        self.namespaces: Store[Mapping[str, str]] | None = Store("Namespace", namespace_labels)
        self.stores[Kind.NAMESPACES] = self.namespaces
        self.policies: Store[hooks.AllocationPolicy] | None = None
        if policies:
            self.policies = Store("AllocationPolicy", hooks.parse_allocation_policy)
            self.stores[Kind.POLICIES] = self.policies
        self.pdbs: Store[model.PodDisruptionBudget] | None = None
        if pod_disruption_budgets:
            self.pdbs = Store("PodDisruptionBudget", model.parse_pod_disruption_budget, keep=slim)
            self.stores[Kind.PDBS] = self.pdbs
        self.ledger = DeviceLedger(consumable_capacity=consumable_capacity)
        self.deleted_pods = RecentlyDeleted()
        self._on_invalid = on_invalid
        # The version last reported of each object that does not parse: one report per version,
        # forgotten once the object parses again or is deleted (else it grows with every
        # invalid object ever seen).
        self._reported: dict[tuple[Kind, ObjectKey], str] = {}

    @property
    def kinds(self) -> list[Kind]:
        return list(self.stores)

    def apply(
        self, kind: Kind, event_type: str | None, raw: Mapping[str, Any]
    ) -> Change[Any] | None:
        """Record one watch event; None when it changes nothing or does not parse."""
        key = ObjectKey.of(raw)
        try:
            change = self.stores[kind].apply(event_type, raw)
        except errors.InvalidObjectError as exc:
            self._report(kind, key, raw, exc)
            if event_type == DELETED:
                del self._reported[(kind, key)]
            return None
        self._reported.pop((kind, key), None)
        if change is None:
            return None
        if kind is Kind.CLAIMS:
            self.ledger.observe(change)
        elif kind is Kind.PODS and change.new is None and event_type == DELETED:
            uid = change.old.obj.metadata.uid if change.old else ""
            if uid:
                self.deleted_pods.add(uid)
        return change

    def prune(
        self,
        kind: Kind,
        listed: list[Mapping[str, Any]],
        snapshot: int,
        *,
        namespace: str | None = None,
    ) -> list[Change[Any]]:
        """Forget the objects a fresh LIST (at resourceVersion `snapshot`) no longer holds.

        client-go's Replace after a relist: the LIST's events only add and update, so objects
        deleted while the watch was down would otherwise stay in the stores forever (a pod's
        claims never released, a claim's devices never freed). An object seen at or after
        `snapshot` is newer than the LIST and kept; with `namespace`, the LIST covered that
        namespace only and objects elsewhere are kept. Each removal is applied as a deletion.
        """
        present = {ObjectKey.of(raw) for raw in listed}
        for gone in [r for r in self._reported if r[0] is kind and r[1] not in present]:
            del self._reported[gone]  # an invalid object deleted unseen
        changes = []
        for entry in self.stores[kind]:
            if namespace is not None and entry.key.namespace != namespace:
                continue
            seen = version_number(entry.resource_version)
            if entry.key in present or seen is None or seen >= snapshot:
                continue
            change = self.apply(kind, DELETED, entry.raw)
            if change is not None:
                changes.append(change)
        return changes

    def _report(
        self, kind: Kind, key: ObjectKey, raw: Mapping[str, Any], exc: errors.InvalidObjectError
    ) -> None:
        version = str((raw.get("metadata") or {}).get("resourceVersion") or "")
        if self._reported.get((kind, key)) == version:
            return
        self._reported[(kind, key)] = version
        if self._on_invalid is not None:
            self._on_invalid(kind, raw, exc)


def namespace_labels(raw: Mapping[str, Any]) -> Mapping[str, str]:
    """A namespace as an AllocationPolicy's `namespaceSelector` sees it: its labels."""
    labels = (raw.get("metadata") or {}).get("labels") or {}
    return model.FrozenMap({str(k): str(v) for k, v in labels.items()})
