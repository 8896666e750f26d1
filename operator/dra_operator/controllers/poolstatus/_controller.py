"""The ResourcePoolStatusRequest controller: answer each request once, forget old ones.

kube-controller-manager v1.37.2, pkg/controller/resourcepoolstatusrequest: a request with a
status is complete and never looked at again (the API server makes it immutable); users delete
and re-create it for fresh numbers. While a pool of the request is half-published (fewer slices
than `resourceSliceCount` at its newest generation) the request is retried with backoff, up to
`MAX_RETRIES` times, then dropped unanswered. Every `CLEANUP_PERIOD` the controller deletes
requests answered more than `ANSWERED_TTL` ago (by their condition's lastTransitionTime, else
their creation) and unanswered ones created more than `PENDING_TTL` ago.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from typing import Any, Final, Protocol

from dra_operator import errors, model
from dra_operator.cluster import ObjectKey, Store
from dra_operator.controllers._queue import Result
from dra_operator.controllers.poolstatus._answer import answer

CONDITION_COMPLETE: Final = "Complete"
CONDITION_FAILED: Final = "Failed"
QUEUE: Final = "resourcepoolstatusrequest"
"""The work queue's name (upstream: ControllerName "resourcepoolstatusrequest-controller")."""
MAX_RETRIES: Final = 5
CLEANUP_PERIOD: Final = 600.0  # seconds
ANSWERED_TTL: Final = datetime.timedelta(hours=1)
PENDING_TTL: Final = datetime.timedelta(hours=24)


class PoolStatusWriter(Protocol):
    """The two writes: the answer (conditional on the request's resourceVersion) and the
    deletion of an expired request (conditional on its UID)."""

    async def write_status(
        self, name: str, resource_version: str, status: dict[str, Any]
    ) -> None: ...

    async def delete(self, name: str, uid: str) -> None: ...


class PoolStatusReconciler:
    """Answers one request per key (its name); see the module docstring."""

    def __init__(
        self,
        *,
        requests: Store[model.ResourcePoolStatusRequest],
        slices: Store[model.ResourceSlice],
        claims: Store[model.ResourceClaim],
        rules: Store[model.DeviceTaintRule] | None,
        writer: PoolStatusWriter,
        failures: Callable[[str], int],
        now: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self._requests = requests
        self._slices = slices
        self._claims = claims
        self._rules = rules
        self._writer = writer
        self._failures = failures
        self._now = now

    async def __call__(self, name: str) -> Result:
        entry = self._requests.get(ObjectKey("", name))
        if entry is None or entry.obj.answered:
            return Result()
        rules = [e.obj for e in self._rules] if self._rules is not None else []
        result = answer(
            entry.obj,
            (e.obj for e in self._slices),
            (e.obj for e in self._claims),
            rules,
            self._now(),
        )
        if result.incomplete:
            message = f"request {name}: incomplete pools detected, requeueing"
            if self._failures(name) >= MAX_RETRIES:
                raise errors.TerminalError(f"{message}: dropped after {MAX_RETRIES} retries")
            raise errors.DRAOperatorError(message)
        try:
            await self._writer.write_status(name, entry.resource_version, result.status)
        except errors.APINotFoundError:
            return Result()  # deleted meanwhile: nothing to answer
        return Result()

    async def clean_up(self) -> int:
        """Delete the expired requests; how many were deleted."""
        deleted = 0
        for request in expired((entry.obj for entry in self._requests), self._now()):
            try:
                await self._writer.delete(request.metadata.name, request.metadata.uid)
            except errors.APINotFoundError:
                continue
            deleted += 1
        return deleted

    def pending(self) -> list[str]:
        """The names of the requests still to answer (a new leader queues them)."""
        return [e.key.name for e in self._requests if not e.obj.answered]


def expired(
    requests: Iterable[model.ResourcePoolStatusRequest], now: datetime.datetime
) -> list[model.ResourcePoolStatusRequest]:
    """The requests the clean-up deletes at `now` (see the module docstring)."""
    return [
        r for r in requests if _older(_since(r), now, ANSWERED_TTL if r.answered else PENDING_TTL)
    ]


def _since(request: model.ResourcePoolStatusRequest) -> datetime.datetime | None:
    if request.answered:
        for condition in request.conditions:
            if condition.type in (CONDITION_COMPLETE, CONDITION_FAILED):
                return condition.last_transition_time
    return request.metadata.creation_timestamp


def _older(
    moment: datetime.datetime | None, now: datetime.datetime, age: datetime.timedelta
) -> bool:
    return moment is not None and now - moment > age
