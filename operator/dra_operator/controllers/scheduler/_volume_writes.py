"""`KubeVolumeWriter`: VolumeBinding's PreBind writes over `kube.Client`, as JSON merge patches.

Each patch carries the resourceVersion the scheduler decided on, so a PV or claim that changed
meanwhile is refused (409) rather than overwritten, as upstream's Update of the cached object
is. The claim's side of a static binding is the one write upstream leaves to the PV controller
(see `plugins.volumebinding`); a conflict there is settled by reading the claim again: bound to
our PV already (the PV controller was faster) is success, unbound is written again.
"""

from __future__ import annotations

from typing import Any

from dra_operator import errors, model, names
from dra_operator.controllers import APIRecorder, counting_failures
from dra_operator.kube import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, Client

_BIND_COMPLETED = model.VolumeAnnotation.BIND_COMPLETED
_BOUND_BY_CONTROLLER = model.VolumeAnnotation.BOUND_BY_CONTROLLER
_CLAIM_ATTEMPTS = 3


class KubeVolumeWriter:
    """`plugins.volumebinding.VolumeWriter` over one client."""

    def __init__(self, client: Client, *, metrics: APIRecorder | None = None) -> None:
        self._client = client
        self._metrics = metrics

    async def bind_volume(self, pv: model.PersistentVolume) -> model.PersistentVolume:
        ref = pv.claim_ref
        if ref is None:
            raise errors.TerminalError(f"persistentvolume {pv.name}: no claimRef to write")
        meta: dict[str, Any] = {"resourceVersion": pv.metadata.resource_version}
        if _BOUND_BY_CONTROLLER in pv.metadata.annotations:
            meta["annotations"] = {_BOUND_BY_CONTROLLER: "yes"}
        patch = {
            "metadata": meta,
            "spec": {
                "claimRef": {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "namespace": ref.namespace,
                    "name": ref.name,
                    "uid": ref.uid,
                }
            },
        }
        with counting_failures(self._metrics, "PersistentVolume"):
            raw = await self._client.patch(
                PERSISTENT_VOLUMES, pv.name, patch, field_manager=names.OPERATOR_FIELD_MANAGER
            )
        return model.parse_persistent_volume(raw)

    async def bind_claim(self, pvc: model.PersistentVolumeClaim, pv_name: str) -> None:
        namespace, name = pvc.metadata.namespace, pvc.metadata.name
        version = pvc.metadata.resource_version
        for _ in range(_CLAIM_ATTEMPTS):
            patch = {
                "metadata": {
                    "resourceVersion": version,
                    "annotations": {_BIND_COMPLETED: "yes", _BOUND_BY_CONTROLLER: "yes"},
                },
                "spec": {"volumeName": pv_name},
            }
            try:
                with counting_failures(self._metrics, "PersistentVolumeClaim"):
                    await self._client.patch(
                        PERSISTENT_VOLUME_CLAIMS,
                        name,
                        patch,
                        namespace=namespace,
                        field_manager=names.OPERATOR_FIELD_MANAGER,
                    )
                return
            except errors.APIConflictError:
                raw = await self._client.get(PERSISTENT_VOLUME_CLAIMS, name, namespace=namespace)
                fresh = model.parse_persistent_volume_claim(raw)
                if fresh.volume_name == pv_name and fresh.fully_bound:
                    return
                if fresh.volume_name not in ("", pv_name):
                    raise
                version = fresh.metadata.resource_version
        raise errors.APIConflictError(
            409,
            "Conflict",
            f"persistentvolumeclaim {namespace}/{name}: still changing after "
            f"{_CLAIM_ATTEMPTS} attempts to bind it to {pv_name}",
        )

    async def select_node(
        self, pvc: model.PersistentVolumeClaim, node_name: str
    ) -> model.PersistentVolumeClaim:
        patch = {
            "metadata": {
                "resourceVersion": pvc.metadata.resource_version,
                "annotations": {model.VolumeAnnotation.SELECTED_NODE: node_name},
            }
        }
        with counting_failures(self._metrics, "PersistentVolumeClaim"):
            raw = await self._client.patch(
                PERSISTENT_VOLUME_CLAIMS,
                pvc.metadata.name,
                patch,
                namespace=pvc.metadata.namespace,
                field_manager=names.OPERATOR_FIELD_MANAGER,
            )
        return model.parse_persistent_volume_claim(raw)
