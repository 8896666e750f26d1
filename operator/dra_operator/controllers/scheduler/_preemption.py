"""Carrying out a preemption DefaultPreemption chose: the scheduler's writes for it.

kube-scheduler v1.37.2, pkg/scheduler/framework/preemption/executor.go (`PreemptPod`,
`prepareCandidate`, `clearNominatedNodeName`). For each victim not already being deleted: a
victim still waiting at Permit is rejected ("preempted") instead; any other gets the
`DisruptionTarget` condition (reason `PreemptionByScheduler`) on `pods/status`, then a graceful
DELETE with its UID as precondition; either way a `Preempted` Event on the victim. Then the
pods of lower priority nominated to the same node lose their nomination (they may no longer
fit there). The preemptor's own nomination (`status.nominatedNodeName`) is written by
`nominate`. A victim already gone (404) is skipped, as upstream skips it; one replaced by a pod
of the same name (409 on the DELETE's UID precondition) is left alone.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any, Protocol

import structlog

from dra_operator import errors, kube, names
from dra_operator.controllers import APIRecorder, counting_failures, record_retry
from dra_operator.controllers.scheduler.framework import Nominator, WaitingPods
from dra_operator.controllers.scheduler.plugins.defaultpreemption import (
    DISRUPTION_TARGET,
    NAME,
    PREEMPTION_BY_SCHEDULER,
    Candidate,
)
from dra_operator.model import Pod

_log = structlog.get_logger("dra_operator.controllers.scheduler")

PREEMPTED = "Preempted"
"""The Event reason on each victim."""
DEVICES_NOMINATED = "DevicesNominated"
"""The pod condition on a preemptor whose devices are nominated to it (KEP-5690)."""
PREEMPTED_WAITING = "preempted"
"""The reason a victim waiting at Permit is rejected with."""


def condition_message(preemptor: Pod) -> str:
    return f"{preemptor.spec.scheduler_name}: preempting to accommodate a higher priority pod"


def event_message(preemptor: Pod, node: str, *, in_memory: bool = False) -> str:
    text = f"Preempted by pod {preemptor.metadata.uid} on node {node}"
    return text + " (in kube-scheduler memory)." if in_memory else text


def disruption_patch(preemptor: Pod, now: datetime.datetime) -> dict[str, Any]:
    """Strategic merge patch of `pods/status` (conditions merge by `type`)."""
    stamp = now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    condition = {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": PREEMPTION_BY_SCHEDULER,
        "message": condition_message(preemptor),
        "lastTransitionTime": stamp,
    }
    return {"status": {"conditions": [condition]}}


def _has_condition(victim: Pod, preemptor: Pod) -> bool:
    """Upstream's `UpdatePodCondition` writes nothing when the condition is already there."""
    return any(
        c.type == DISRUPTION_TARGET
        and c.status == "True"
        and c.reason == PREEMPTION_BY_SCHEDULER
        and c.message == condition_message(preemptor)
        for c in victim.status.conditions
    )


def lower_priority_nominated(nominator: Nominator, preemptor: Pod, node: str) -> list[Pod]:
    """The pods nominated to `node` with a priority below the preemptor's."""
    own = preemptor.spec.priority or 0
    return [i.pod for i in nominator.for_node(node) if (i.pod.spec.priority or 0) < own]


class PreemptionRecorder(APIRecorder, Protocol):
    """The part of `observability.Metrics` preemption writes to."""

    def preemption_attempted(self) -> None: ...

    def preempted(self, victims: int) -> None: ...

    def device_nomination(self, outcome: str) -> None: ...


class PreemptionWriter:
    """The API writes of one preemption; see the module docstring."""

    def __init__(
        self,
        api: kube.Client,
        *,
        field_manager: str = names.OPERATOR_FIELD_MANAGER,
        waiting: WaitingPods | None = None,
        metrics: PreemptionRecorder | None = None,
    ) -> None:
        self._api = api
        self._field_manager = field_manager
        self._waiting = waiting
        self._metrics = metrics

    async def preempt(
        self, preemptor: Pod, candidate: Candidate, nominated: Sequence[Pod] = ()
    ) -> None:
        """Evict `candidate`'s victims for `preemptor`, then clear the nominations of
        `nominated` (the lower-priority pods nominated to the same node)."""
        if self._metrics is not None:
            self._metrics.preempted(len(candidate.victims))
        for victim in candidate.victims:
            if victim.metadata.deletion_timestamp is not None:
                continue  # already going: no second DELETE
            await self._preempt_one(preemptor, victim, candidate.node)
        for pod in nominated:
            try:
                await self.nominate(pod, "")
            except errors.APIError as exc:  # not critical, as upstream
                _log.warning("nomination.clear_failed", pod=_key(pod), error=str(exc))

    async def _preempt_one(self, preemptor: Pod, victim: Pod, node: str) -> None:
        waiting = self._waiting.get(victim.metadata.uid) if self._waiting else None
        in_memory = waiting is not None and waiting.reject(NAME, PREEMPTED_WAITING)
        if not in_memory and not await self._disrupt(preemptor, victim):
            return
        await self._event(victim, event_message(preemptor, node, in_memory=in_memory))

    async def _disrupt(self, preemptor: Pod, victim: Pod) -> bool:
        """Condition then DELETE; False when the victim is gone or was replaced."""
        meta = victim.metadata
        try:
            if not _has_condition(victim, preemptor):
                await self._api.patch(
                    kube.PODS,
                    meta.name,
                    disruption_patch(preemptor, datetime.datetime.now(datetime.UTC)),
                    namespace=meta.namespace,
                    subresource="status",
                    patch_type=kube.PatchType.STRATEGIC,
                    field_manager=self._field_manager,
                )
            await self._api.delete(kube.PODS, meta.name, namespace=meta.namespace, uid=meta.uid)
        except (errors.APINotFoundError, errors.APIConflictError):
            _log.info("preemption.victim_gone", victim=_key(victim))
            return False
        except errors.APIError as exc:
            record_retry(self._metrics, "Pod", exc)
            raise
        return True

    async def nominate(self, pod: Pod, node: str) -> None:
        """Set (or with "" clear) `status.nominatedNodeName`."""
        meta = pod.metadata
        body = {"status": {"nominatedNodeName": node or None}}
        with counting_failures(self._metrics, "Pod"):
            await self._api.patch(
                kube.PODS,
                meta.name,
                body,
                namespace=meta.namespace,
                subresource="status",
                patch_type=kube.PatchType.MERGE,
                field_manager=self._field_manager,
            )

    async def note(self, pod: Pod, *, status: str, reason: str, message: str) -> None:
        """The preemptor's `DevicesNominated` condition (`status`, `reason`, `message`; see
        `_claim_nomination`) and an Event saying the same."""
        meta = pod.metadata
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        condition = {
            "type": DEVICES_NOMINATED,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": stamp,
        }
        try:
            await self._api.patch(
                kube.PODS,
                meta.name,
                {"status": {"conditions": [condition]}},
                namespace=meta.namespace,
                subresource="status",
                patch_type=kube.PatchType.STRATEGIC,
                field_manager=self._field_manager,
            )
        except errors.APINotFoundError:
            return
        await self._event(pod, message, reason=reason)

    async def _event(self, victim: Pod, message: str, *, reason: str = PREEMPTED) -> None:
        meta = victim.metadata
        regarding = {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": meta.namespace,
            "name": meta.name,
            "uid": meta.uid,
        }
        failure = await kube.post_event(
            self._api,
            regarding,
            type=names.EVENT_TYPE_NORMAL,
            reason=reason,
            message=message,
            component=self._field_manager,
        )
        if failure is not None:
            _log.warning("event.failed", pod=_key(victim), error=str(failure))


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"
