"""`SchedulerWriter` over `kube.Client`: the scheduler's API calls as raw JSON.

Claims are written in the API version the operator speaks (`resource`); events go through
`events.k8s.io/v1` with reporting controller `dra-operator` (the scheduler name), as
kube-scheduler reports under its own. An event that cannot be recorded is logged by nobody and
dropped: events are best effort, as client-go's recorder makes them.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from dra_operator import errors, names
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler._writes import Event
from dra_operator.kube import EVENTS, PODS, Client, Resource, dra

_INSTANCE = "dra-operator"
_MAX_NOTE = 1024  # events.k8s.io note limit


class KubeSchedulerWriter:
    """The scheduler's writes over one client; `claims` names the served claim version."""

    def __init__(self, client: Client, claims: Resource | None = None) -> None:
        self._client = client
        self._claims = claims if claims is not None else dra("resourceclaims")

    async def update_claim(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return await self._client.update(
            self._claims, body, field_manager=names.OPERATOR_FIELD_MANAGER
        )

    async def update_claim_status(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return await self._client.update(
            self._claims, body, subresource="status", field_manager=names.OPERATOR_FIELD_MANAGER
        )

    async def get_claim(self, key: ObjectKey) -> Mapping[str, Any] | None:
        try:
            return await self._client.get(self._claims, key.name, namespace=key.namespace)
        except errors.APINotFoundError:
            return None

    async def bind(self, body: Mapping[str, Any]) -> None:
        metadata = body["metadata"]
        await self._client.create(
            PODS,
            body,
            namespace=metadata["namespace"],
            name=metadata["name"],
            subresource="binding",
            field_manager=names.OPERATOR_FIELD_MANAGER,
        )

    async def emit(self, event: Event) -> None:
        now = datetime.datetime.now(datetime.UTC)
        api_version = "v1" if event.kind == "Pod" else self._claims.api_version
        body = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "generateName": f"{event.involved.name}.",
                "namespace": event.involved.namespace,
            },
            "eventTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "reportingController": names.SCHEDULER_EVENT_COMPONENT,
            "reportingInstance": _INSTANCE,
            "action": "Scheduling",
            "reason": event.reason,
            "type": event.type,
            "note": event.message[:_MAX_NOTE],
            "regarding": {
                "apiVersion": api_version,
                "kind": event.kind,
                "namespace": event.involved.namespace,
                "name": event.involved.name,
                "uid": event.uid,
            },
        }
        try:
            await self._client.create(EVENTS, body, namespace=event.involved.namespace)
        except errors.APIError:
            return
