"""`SchedulerWriter` over `kube.Client`: the scheduler's API calls as raw JSON.

Claims are written in the API version the operator speaks; events are core/v1 with source
component `dra-operator` (the scheduler name), as kube-scheduler reports under its own. An
event that cannot be recorded is logged and dropped: events are best effort. Every failed
write is retried by deciding the key again, so it is counted as a retry (and a 409 as a
conflict) by `controllers.counting_failures`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from dra_operator import errors, names
from dra_operator.cluster import ObjectKey
from dra_operator.controllers import APIRecorder, counting_failures
from dra_operator.controllers.scheduler._writes import Event
from dra_operator.kube import PODS, Client, Resource, dra, post_event

_log = structlog.get_logger("dra_operator.controllers.scheduler")


class KubeSchedulerWriter:
    """The scheduler's writes over one client; `claims` names the served claim version."""

    def __init__(
        self,
        client: Client,
        claims: Resource | None = None,
        *,
        metrics: APIRecorder | None = None,
    ) -> None:
        self._client = client
        self._claims = claims if claims is not None else dra("resourceclaims")
        self._metrics = metrics

    async def update_claim(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        with counting_failures(self._metrics, "ResourceClaim"):
            return await self._client.update(
                self._claims, self._typed(body), field_manager=names.OPERATOR_FIELD_MANAGER
            )

    async def update_claim_status(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        with counting_failures(self._metrics, "ResourceClaim"):
            return await self._client.update(
                self._claims,
                self._typed(body),
                subresource="status",
                field_manager=names.OPERATOR_FIELD_MANAGER,
            )

    def _typed(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Listed items come without apiVersion and kind; a PUT names them."""
        return {**body, "apiVersion": self._claims.api_version, "kind": "ResourceClaim"}

    async def get_claim(self, key: ObjectKey) -> Mapping[str, Any] | None:
        try:
            return await self._client.get(self._claims, key.name, namespace=key.namespace)
        except errors.APINotFoundError:
            return None

    async def bind(self, body: Mapping[str, Any]) -> None:
        metadata = body["metadata"]
        with counting_failures(self._metrics, "Pod"):
            await self._client.create(
                PODS,
                body,
                namespace=metadata["namespace"],
                name=metadata["name"],
                subresource="binding",
                field_manager=names.OPERATOR_FIELD_MANAGER,
            )

    async def emit(self, event: Event) -> None:
        api_version = "v1" if event.kind == "Pod" else self._claims.api_version
        regarding = {
            "apiVersion": api_version,
            "kind": event.kind,
            "namespace": event.involved.namespace,
            "name": event.involved.name,
            "uid": event.uid,
        }
        failed = await post_event(
            self._client,
            regarding,
            type=event.type,
            reason=event.reason,
            message=event.message,
            component=names.SCHEDULER_EVENT_COMPONENT,
        )
        if failed is not None:
            _log.warning("event.failed", reason=event.reason, error=str(failed))
