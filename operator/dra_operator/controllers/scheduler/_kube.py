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
from dra_operator.controllers.scheduler._extended import create_body
from dra_operator.controllers.scheduler._writes import Event
from dra_operator.kube import PODS, Client, PatchType, Resource, dra, post_event
from dra_operator.model import ResourceClaim

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

    async def create_claim(self, claim: ResourceClaim) -> Mapping[str, Any]:
        body = create_body(claim, self._claims.version)
        with counting_failures(self._metrics, "ResourceClaim"):
            return await self._client.create(
                self._claims,
                body,
                namespace=claim.metadata.namespace,
                field_manager=names.OPERATOR_FIELD_MANAGER,
            )

    async def delete_claim(self, key: ObjectKey, uid: str) -> None:
        with counting_failures(self._metrics, "ResourceClaim"):
            try:
                await self._client.delete(self._claims, key.name, namespace=key.namespace, uid=uid)
            except errors.APINotFoundError:
                return  # gone already (upstream ignores NotFound since 1.37)

    async def patch_pod_status(self, pod: ObjectKey, patch: Mapping[str, Any]) -> None:
        """Strategic merge, as kube-scheduler's `PatchPodStatus` sends it."""
        with counting_failures(self._metrics, "Pod"):
            await self._client.patch(
                PODS,
                pod.name,
                patch,
                namespace=pod.namespace,
                subresource="status",
                patch_type=PatchType.STRATEGIC,
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


class KubeContextWriter:
    """`ContextWriter` over one client: PodSchedulingContexts in the served version."""

    def __init__(
        self, client: Client, contexts: Resource, *, metrics: APIRecorder | None = None
    ) -> None:
        self._client = client
        self._contexts = contexts
        self._metrics = metrics

    async def get_context(self, key: ObjectKey) -> Mapping[str, Any] | None:
        try:
            return await self._client.get(self._contexts, key.name, namespace=key.namespace)
        except errors.APINotFoundError:
            return None

    async def create_context(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        with counting_failures(self._metrics, "PodSchedulingContext"):
            return await self._client.create(
                self._contexts,
                self._typed(body),
                namespace=body["metadata"]["namespace"],
                field_manager=names.OPERATOR_FIELD_MANAGER,
            )

    async def update_context(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        with counting_failures(self._metrics, "PodSchedulingContext"):
            return await self._client.update(
                self._contexts, self._typed(body), field_manager=names.OPERATOR_FIELD_MANAGER
            )

    async def delete_context(self, key: ObjectKey, uid: str) -> None:
        with counting_failures(self._metrics, "PodSchedulingContext"):
            try:
                await self._client.delete(
                    self._contexts, key.name, namespace=key.namespace, uid=uid
                )
            except errors.APINotFoundError:
                return

    def _typed(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return {**body, "apiVersion": self._contexts.api_version, "kind": "PodSchedulingContext"}
