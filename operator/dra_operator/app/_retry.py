"""Start-up calls that must survive a busy or restarting API server.

The controllers retry through their work queues, the reflectors and the Lease elector in their
own loops, but discovery runs once, before any of them: a 429 (API Priority and Fairness
shedding load), a 5xx or a connection that fails there would end the process.
Here they are retried with client-go's exponential backoff; every other error still raises.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from dra_operator import errors, kube
from dra_operator.observability import LogEvent, get_logger

T = TypeVar("T")

_log = get_logger(__name__)

FIRST_DELAY = 0.5
MAX_DELAY = 30.0


async def until_answered(call: Callable[[], Awaitable[T]], what: str) -> T:
    """`await call()` until the server answers: 429, 5xx and transport errors (an
    `APIServerError` of status 0) are retried after 0.5 s, doubling up to 30 s."""
    backoff = kube.Backoff(FIRST_DELAY, MAX_DELAY)
    while True:
        try:
            return await call()
        except (errors.APITooManyRequestsError, errors.APIServerError) as exc:
            _log.warning(LogEvent.API_RETRYING, call=what, error=str(exc), delay=backoff.delay)
            await backoff.wait()
