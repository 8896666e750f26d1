"""`EvictionWriter` over the API server: the eviction controller's only I/O.

One call per method, nothing retried here: a failure fails the reconcile and the queue retries
after deciding afresh; each failed write is counted there (`controllers.counting_failures`). A
DELETE refused by its UID precondition (409) is counted as a conflict, not a retry: the pod was
replaced and nobody deletes it again. Events are best effort (`kube.post_event`).
"""

from __future__ import annotations

import datetime
from typing import Any

import structlog

from dra_operator import errors, kube, names
from dra_operator.controllers import APIRecorder, counting_failures, record_retry
from dra_operator.controllers.eviction._controller import DISRUPTION_MESSAGE
from dra_operator.model import Pod, parse_pod
from dra_operator.observability import LogEvent

_log = structlog.get_logger("dra_operator.controllers.eviction")

CONTROLLER_NAME = "device-taint-eviction-controller"
"""Upstream's controller name: the field manager of the rule status and the event source."""


def disruption_patch(now: datetime.datetime) -> dict[str, Any]:
    """Strategic merge patch of `pods/status` (conditions merge by `type`)."""
    stamp = now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    condition = {
        "type": names.CONDITION_DISRUPTION_TARGET,
        "status": "True",
        "reason": names.REASON_DELETION_BY_DEVICE_TAINT_MANAGER,
        "message": DISRUPTION_MESSAGE,
        "lastTransitionTime": stamp,
    }
    return {"status": {"conditions": [condition]}}


class KubeEvictionWriter:
    """Implements `EvictionWriter`; `rules` is the served DeviceTaintRule resource, if any."""

    def __init__(
        self,
        api: kube.Client,
        *,
        rules: kube.Resource | None,
        metrics: APIRecorder | None = None,
    ) -> None:
        self._api = api
        self._rules = rules
        self._metrics = metrics

    async def get_pod(self, namespace: str, name: str) -> Pod | None:
        raw = await self._api.find(kube.PODS, name, namespace=namespace)
        return parse_pod(raw) if raw is not None else None

    async def emit(self, pod: Pod, message: str) -> None:
        meta = pod.metadata
        regarding = kube.event_target(
            "v1", "Pod", namespace=meta.namespace, name=meta.name, uid=meta.uid
        )
        failure = await kube.post_event(
            self._api,
            regarding,
            type=names.EVENT_TYPE_NORMAL,
            reason=names.EVENT_DEVICE_TAINT_MANAGER_EVICTION,
            message=message,
            component=CONTROLLER_NAME,
        )
        if failure is not None:
            _log.warning(
                LogEvent.EVENT_FAILED, pod=f"{meta.namespace}/{meta.name}", error=str(failure)
            )

    async def add_disruption_condition(self, pod: Pod, now: datetime.datetime) -> None:
        with counting_failures(self._metrics, "Pod"):
            await self._api.patch(
                kube.PODS,
                pod.metadata.name,
                disruption_patch(now),
                namespace=pod.metadata.namespace,
                subresource="status",
                patch_type=kube.PatchType.STRATEGIC,
                field_manager=CONTROLLER_NAME,
            )

    async def delete_pod(self, pod: Pod) -> bool:
        meta = pod.metadata
        try:
            await self._api.delete(kube.PODS, meta.name, namespace=meta.namespace, uid=meta.uid)
        except errors.APINotFoundError:
            return False  # gone
        except errors.APIConflictError:
            if self._metrics is not None:
                self._metrics.api_conflict("Pod")
            return False  # replaced by a pod of the same name (UID precondition)
        except errors.APIError as exc:
            record_retry(self._metrics, "Pod", exc)
            raise
        return True

    async def apply_rule_status(self, body: dict[str, Any]) -> None:
        if self._rules is None:
            return
        with counting_failures(self._metrics, "DeviceTaintRule"):
            await self._api.apply(
                self._rules, body, field_manager=CONTROLLER_NAME, force=True, subresource="status"
            )
