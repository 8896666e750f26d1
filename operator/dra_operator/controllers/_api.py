"""Counting the API writes that failed and will be sent again, the same way in every controller.

Each controller retries a failed write by deciding again (a 409 is never re-sent as it was):
the claims and eviction controllers through their queue's backoff, the scheduler by re-reading
the claim and deciding the key again. Each reports the failure here once, where it handles it,
so `dra_operator_api_conflicts_total` and `dra_operator_api_retries_total` mean the same for all
of them. A failure that no retry can cure (403, 404, 422) is a retry all the same when the queue
backs off on it, but is not one of the retry reasons and is not counted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Protocol

from dra_operator import errors
from dra_operator.observability import RetryReason

_TIMEOUT_REASON = "Timeout"  # what kube/ gives a request that got no answer in time


class APIRecorder(Protocol):
    """The two API-write counters of `observability.Metrics`."""

    def api_conflict(self, kind: str) -> None: ...

    def api_retried(self, kind: str, reason: RetryReason) -> None: ...


def retry_reason(exc: BaseException) -> RetryReason | None:
    """Why a failed request is worth sending again, or None when it is not."""
    if isinstance(exc, errors.APIConflictError):
        return RetryReason.CONFLICT
    if isinstance(exc, errors.APITooManyRequestsError):
        return RetryReason.TOO_MANY_REQUESTS
    if isinstance(exc, errors.APIServerError):
        if exc.status == 0 and exc.reason == _TIMEOUT_REASON:
            return RetryReason.TIMEOUT
        return RetryReason.SERVER_ERROR
    return None


def record_retry(recorder: APIRecorder | None, kind: str, exc: BaseException) -> None:
    """A write of a `kind` object failed with `exc` and will be decided and sent again."""
    if recorder is None:
        return
    if isinstance(exc, errors.APIConflictError):
        recorder.api_conflict(kind)
    reason = retry_reason(exc)
    if reason is not None:
        recorder.api_retried(kind, reason)


@contextlib.contextmanager
def counting_failures(recorder: APIRecorder | None, kind: str) -> Iterator[None]:
    """Around one write that is retried when it fails: `record_retry` on `errors.APIError`."""
    try:
        yield
    except errors.APIError as exc:
        record_retry(recorder, kind, exc)
        raise
