"""The scheduler's story in the log: one event per decision, built only when it is printed.

At info, each decision: `allocation.placed` (pod or claim, node, claims → devices, the policy
and strategy, the milliseconds the decision took), `allocation.unschedulable` (the
FailedScheduling text) or `allocation.refused` (a `before_allocate` hook said no). At debug,
also `allocation.waiting` and, from DynamicResources' node walk, one `allocation.node` verdict
per node tried.
Nothing is formatted unless the level is enabled: the decision loop is the hot path.
"""

from __future__ import annotations

import logging
from typing import Any

from dra_operator.controllers.scheduler._decision import (
    Decision,
    Placement,
    Unschedulable,
    Wait,
)
from dra_operator.controllers.scheduler._events import WorkKey
from dra_operator.controllers.scheduler._policies import Choice
from dra_operator.observability import LogEvent, get_logger

__all__ = ["log_decision", "log_refusal"]

_log = get_logger("dra_operator.controllers.scheduler")
_levels = logging.getLogger("dra_operator.controllers.scheduler")  # stdlib: cached checks


def _subject(key: WorkKey, choice: Choice, seconds: float | None = None) -> dict[str, Any]:
    keys: dict[str, Any] = {
        key.kind: f"{key.namespace}/{key.name}",
        "policy": choice.policy or None,
        "strategy": choice.settings.policy.name,
    }
    if seconds is not None:
        keys["ms"] = round(seconds * 1000, 3)
    return keys


def log_decision(key: WorkKey, choice: Choice, decision: Decision, seconds: float) -> None:
    """Log one decision that took `seconds`."""
    if isinstance(decision, Wait):
        if _levels.isEnabledFor(logging.DEBUG):
            _log.debug(LogEvent.ALLOCATION_WAITING, reason=decision.reason, **_subject(key, choice))
        return
    if decision is None or not _levels.isEnabledFor(logging.INFO):
        return
    if isinstance(decision, Unschedulable):
        subject = _subject(key, choice, seconds)
        _log.info(LogEvent.ALLOCATION_UNSCHEDULABLE, reason=decision.message, **subject)
    elif isinstance(decision, Placement):
        claims = {
            str(write.key): (
                [f"{r.driver}/{r.pool}/{r.device}" for r in write.allocation.devices.results]
                if write.allocation is not None
                else "reserved"  # already allocated: the pod joins its reservedFor
            )
            for write in decision.claims
        }
        _log.info(
            LogEvent.ALLOCATION_PLACED,
            node=decision.node,
            claims=claims,
            bind=decision.bind,
            **_subject(key, choice, seconds),
        )


def log_refusal(key: WorkKey, choice: Choice, message: str) -> None:
    """A `before_allocate` hook refused the decision."""
    _log.info(LogEvent.ALLOCATION_REFUSED, reason=message, **_subject(key, choice))
