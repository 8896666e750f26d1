"""The worker-boundary observer: where a reconcile's outcome is counted and its error logged.

`controllers.Controller(observe=...)` calls its observer once per reconcile, after the queue
action. That is the one place an error is handled (retried with backoff, or dropped when
terminal), so it is the one place it is logged, with its traceback (style.md). This module
builds that observer without importing `controllers`: it needs only the outcome's `value`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable

from dra_operator.observability._logging import LogEvent, get_logger
from dra_operator.observability._metrics import Metrics

ReconcileObserver = Callable[[Hashable, enum.Enum, BaseException | None], None]

_TERMINAL = "terminal_error"
"""`controllers.Outcome.TERMINAL`'s value: the key is dropped, not retried."""


def reconcile_observer(metrics: Metrics, controller: str) -> ReconcileObserver:
    """An observer for `controllers.Controller` that counts every outcome and logs errors.

    An error that will be retried is logged as `reconcile.failed`, a terminal one as
    `reconcile.dropped`, both at error level with the traceback and the work key. It never
    raises, as the controller requires.
    """
    log = get_logger(f"dra_operator.controllers.{controller}")

    def observe(key: Hashable, outcome: enum.Enum, error: BaseException | None) -> None:
        result = str(outcome.value)
        metrics.reconciled(controller, result)
        if error is not None:
            event = LogEvent.RECONCILE_DROPPED if result == _TERMINAL else LogEvent.RECONCILE_FAILED
            log.error(event, controller=controller, key=str(key), exc_info=error)

    return observe
