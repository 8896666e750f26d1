"""The live scheduler's framework Handle: plugins read the operator's caches and write through
the API client.

Upstream's `framework.Handle` hands plugins informer listers (namespaces, PVCs, PVs,
StorageClasses, CSINodes, CSIDrivers), the ClientSet (DefaultBinder's Binding, VolumeBinding's
PreBind writes) and, with DRA-backed extended resources on, the DeviceClass mapping of
NodeResourcesFit (kube-scheduler v1.37.2, pkg/scheduler/framework/interface.go). Ours reads the
same objects from the stores the watches keep, so a plugin sees what the cycle's snapshot saw
of the cluster at most one event later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dra_operator import names
from dra_operator.cluster import ObjectKey, Store
from dra_operator.controllers import APIRecorder, counting_failures
from dra_operator.controllers.scheduler._classes_handle import ClassesHandle
from dra_operator.controllers.scheduler._volume_writes import KubeVolumeWriter
from dra_operator.controllers.scheduler._writes import binding_body
from dra_operator.controllers.scheduler.plugins.defaultbinder import PodBinder
from dra_operator.controllers.scheduler.plugins.volumebinding import VolumeWriter
from dra_operator.kube import PODS, Client
from dra_operator.model import (
    CSIDriver,
    CSINode,
    DeviceClass,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)


class KubePodBinder:
    """DefaultBinder's `PodBinder`: the pod's `pods/binding` subresource, with its UID."""

    def __init__(self, client: Client, *, metrics: APIRecorder | None = None) -> None:
        self._client = client
        self._metrics = metrics

    async def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        body = binding_body(ObjectKey(namespace, name), uid, node_name)
        with counting_failures(self._metrics, "Pod"):
            await self._client.create(
                PODS,
                body,
                namespace=namespace,
                name=name,
                subresource="binding",
                field_manager=names.OPERATOR_FIELD_MANAGER,
            )


class LiveHandle(ClassesHandle):
    """See the module docstring. `namespaces` is None when the operator does not watch
    namespaces; a namespaceSelector then matches no namespace. `extended_resources` says
    whether DeviceClasses may serve extended resources (the server's DRAExtendedResource)."""

    __slots__ = (
        "_csi_drivers",
        "_csi_nodes",
        "_namespaces",
        "_pod_binder",
        "_pvcs",
        "_pvs",
        "_storage_classes",
        "_volume_writer",
    )

    def __init__(
        self,
        *,
        pvcs: Store[PersistentVolumeClaim],
        pvs: Store[PersistentVolume],
        storage_classes: Store[StorageClass],
        csi_nodes: Store[CSINode],
        csi_drivers: Store[CSIDriver],
        classes: Store[DeviceClass],
        namespaces: Store[Mapping[str, str]] | None,
        client: Client,
        metrics: APIRecorder | None = None,
        extended_resources: bool = True,
    ) -> None:
        super().__init__((lambda: (e.obj for e in classes)) if extended_resources else None)
        self._pvcs = pvcs
        self._pvs = pvs
        self._storage_classes = storage_classes
        self._csi_nodes = csi_nodes
        self._csi_drivers = csi_drivers
        self._namespaces = namespaces
        self._pod_binder = KubePodBinder(client, metrics=metrics)
        self._volume_writer = KubeVolumeWriter(client, metrics=metrics)

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        if self._namespaces is None:
            return None
        entry = self._namespaces.get(ObjectKey("", name))
        return entry.obj if entry is not None else None

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        entry = self._pvcs.get(ObjectKey(namespace, name))
        return entry.obj if entry is not None else None

    def pv(self, name: str) -> PersistentVolume | None:
        entry = self._pvs.get(ObjectKey("", name))
        return entry.obj if entry is not None else None

    def pvs(self, storage_class: str) -> Sequence[PersistentVolume]:
        found = (e.obj for e in self._pvs if e.obj.storage_class == storage_class)
        return sorted(found, key=lambda pv: pv.name)

    def storage_class(self, name: str) -> StorageClass | None:
        entry = self._storage_classes.get(ObjectKey("", name))
        return entry.obj if entry is not None else None

    def csi_node(self, name: str) -> CSINode | None:
        entry = self._csi_nodes.get(ObjectKey("", name))
        return entry.obj if entry is not None else None

    def csi_driver(self, name: str) -> CSIDriver | None:
        entry = self._csi_drivers.get(ObjectKey("", name))
        return entry.obj if entry is not None else None

    @property
    def pod_binder(self) -> PodBinder:
        return self._pod_binder

    @property
    def volume_writer(self) -> VolumeWriter:
        return self._volume_writer
