"""`ClaimsWriter` over the API server: the claims controller's only I/O.

Each method is one call with the precondition the plan asks for (resourceVersion in the body,
or the UID on delete); nothing is retried here: a failure fails the reconcile and the queue
retries it after deciding afresh, so every failed write is counted as a retry (and a 409 as a
conflict) by `controllers.counting_failures`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra_operator import errors, kube, names
from dra_operator.cluster import ObjectKey
from dra_operator.controllers import APIRecorder, counting_failures
from dra_operator.controllers.claims._writes import Event
from dra_operator.model import Pod, ResourceClaim, parse_pod, parse_resource_claim
from dra_operator.observability import LogEvent, get_logger

_log = get_logger(__name__)

_CLAIM = "ResourceClaim"


class KubeClaimsWriter:
    """Implements `ClaimsWriter`; `claims` is the served ResourceClaim resource."""

    def __init__(
        self,
        api: kube.Client,
        *,
        claims: kube.Resource,
        pod_groups: kube.Resource | None = None,
        metrics: APIRecorder | None = None,
    ) -> None:
        self._api = api
        self._claims = claims
        self._pod_groups = pod_groups  # served only with GenericWorkload
        self._metrics = metrics

    async def create_claim(self, namespace: str, manifest: Mapping[str, Any]) -> Mapping[str, Any]:
        body = {**manifest, "apiVersion": self._claims.api_version}
        with counting_failures(self._metrics, _CLAIM):
            return await self._api.create(
                self._claims, body, namespace=namespace, field_manager=names.OPERATOR_FIELD_MANAGER
            )

    async def list_claims(self, namespace: str) -> list[Mapping[str, Any]]:
        listing = await kube.list_all(self._api, self._claims, namespace=namespace)
        return [*listing.items]

    async def apply_pod_status(self, namespace: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        with counting_failures(self._metrics, "Pod"):
            return await self._api.apply(
                kube.PODS,
                body,
                namespace=namespace,
                subresource="status",
                field_manager=names.CLAIMS_FIELD_MANAGER,
                force=True,
            )

    async def apply_pod_group_status(
        self, namespace: str, body: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        if self._pod_groups is None:  # no PodGroups without the API: no plan writes one
            raise errors.TerminalError("the server serves no PodGroups")
        body = {**body, "apiVersion": self._pod_groups.api_version}
        with counting_failures(self._metrics, "PodGroup"):
            return await self._api.apply(
                self._pod_groups,
                body,
                namespace=namespace,
                subresource="status",
                field_manager=names.CLAIMS_FIELD_MANAGER,
                force=True,
            )

    async def update_claim_status(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        with counting_failures(self._metrics, _CLAIM):
            return await self._api.update(
                self._claims,
                body,
                subresource="status",
                field_manager=names.OPERATOR_FIELD_MANAGER,
            )

    async def update_claim(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        with counting_failures(self._metrics, _CLAIM):
            return await self._api.update(
                self._claims, body, field_manager=names.OPERATOR_FIELD_MANAGER
            )

    async def delete_claim(self, key: ObjectKey, uid: str) -> None:
        try:
            with counting_failures(self._metrics, _CLAIM):
                await self._api.delete(self._claims, key.name, namespace=key.namespace, uid=uid)
        except errors.APINotFoundError:
            return

    async def get_pod(self, namespace: str, name: str) -> Pod | None:
        raw = await self._api.find(kube.PODS, name, namespace=namespace)
        return parse_pod(raw) if raw is not None else None

    async def get_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        raw = await self._api.find(self._claims, name, namespace=namespace)
        return parse_resource_claim(raw, self._claims.version) if raw is not None else None

    async def emit(self, event: Event) -> None:
        regarding = kube.event_target(
            "v1", "Pod", namespace=event.involved.namespace, name=event.involved.name, uid=event.uid
        )
        failure = await kube.post_event(
            self._api,
            regarding,
            type=event.type,
            reason=event.reason,
            message=event.message,
            component=names.CLAIMS_EVENT_COMPONENT,
        )
        if failure is not None:  # best effort: the reconcile goes on (see kube.post_event)
            _log.warning(
                LogEvent.EVENT_FAILED,
                reason=event.reason,
                pod=str(event.involved),
                error=str(failure),
            )
