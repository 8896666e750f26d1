"""Controllers: work queues with workers, and the reconcile logic of each controller.

The claims, scheduler and eviction controllers live in sub-packages and never import each other;
this facade offers what they share.
"""

from dra_operator.controllers._api import (
    APIRecorder,
    counting_failures,
    record_retry,
    retry_reason,
)
from dra_operator.controllers._queue import (
    SHUTDOWN,
    Controller,
    Observer,
    Outcome,
    QueueRecorder,
    RateLimiter,
    Reconciler,
    Result,
    WorkQueue,
)

__all__ = [
    "SHUTDOWN",
    "APIRecorder",
    "Controller",
    "Observer",
    "Outcome",
    "QueueRecorder",
    "RateLimiter",
    "Reconciler",
    "Result",
    "WorkQueue",
    "counting_failures",
    "record_retry",
    "retry_reason",
]
