"""`GroupWriter` over `kube.Client`: the PodGroup status patch of a gang cycle.

A JSON merge patch of `podgroups/status` in the served scheduling.k8s.io version, with the
operator's field manager (kube-scheduler patches the status it computed, `PatchPodGroupStatus`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra_operator import names
from dra_operator.cluster import ObjectKey
from dra_operator.controllers import APIRecorder, counting_failures
from dra_operator.kube import Client, PatchType, Resource


class KubeGroupWriter:
    """Implements `GroupWriter`; `groups` is the served PodGroup resource."""

    def __init__(
        self, client: Client, groups: Resource, *, metrics: APIRecorder | None = None
    ) -> None:
        self._client = client
        self._groups = groups
        self._metrics = metrics

    async def patch_group_status(self, key: ObjectKey, patch: Mapping[str, Any]) -> None:
        with counting_failures(self._metrics, "PodGroup"):
            await self._client.patch(
                self._groups,
                key.name,
                dict(patch),
                namespace=key.namespace,
                subresource="status",
                patch_type=PatchType.MERGE,
                field_manager=names.OPERATOR_FIELD_MANAGER,
            )
