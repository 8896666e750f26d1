"""Calling hook code safely: every call counted, timed, and contained when it fails.

A failure (an exception, or a call that ran past the hook's `timeout`) is logged once as
`hook.failed` with the hook, point and error, counted in `dra_operator_hook_failures_total`,
and turned into `Failed`; the caller then applies the hook's failure mode. Synchronous calls
(the allocator-side points) cannot be interrupted, so a late answer is discarded after the
fact; asynchronous points are cancelled at the limit (sync functions there run in a thread).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass

from dra_operator.hooks._load import LoadedHook
from dra_operator.observability import HookFailure, LogEvent, Metrics, get_logger

__all__ = ["Failed", "Guard"]

_log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Failed:
    """A hook call that raised or ran too long (already logged and counted)."""

    reason: HookFailure
    error: str


class Guard:
    """Runs hook calls for one operator; thread-safe (the allocator may run in an executor)."""

    def __init__(
        self, metrics: Metrics | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._metrics = metrics
        self._clock = clock

    def call(self, hook: LoadedHook, point: str, *args: object) -> object:
        """The hook's answer, or `Failed`."""
        self._called(hook, point)
        started = self._clock()
        try:
            value = getattr(hook.target, point)(*args)
        except Exception as exc:
            return self._failed(hook, point, HookFailure.ERROR, repr(exc))
        if self._clock() - started > hook.timeout:
            return self._failed(hook, point, HookFailure.TIMEOUT, f"took over {hook.timeout}s")
        return value

    async def call_async(self, hook: LoadedHook, point: str, *args: object) -> object:
        """The hook's answer, or `Failed`; coroutine functions are awaited, others threaded."""
        self._called(hook, point)
        method = getattr(hook.target, point)
        try:
            async with asyncio.timeout(hook.timeout) as scope:
                if inspect.iscoroutinefunction(method):
                    return await method(*args)
                return await asyncio.to_thread(method, *args)
        except TimeoutError as exc:
            if scope.expired():
                return self._failed(hook, point, HookFailure.TIMEOUT, f"took over {hook.timeout}s")
            return self._failed(hook, point, HookFailure.ERROR, repr(exc))
        except Exception as exc:
            return self._failed(hook, point, HookFailure.ERROR, repr(exc))

    def report(self, hook: LoadedHook, point: str, error: str) -> Failed:
        """Count an unusable answer (wrong type) as a failed call."""
        return self._failed(hook, point, HookFailure.ERROR, error)

    def _called(self, hook: LoadedHook, point: str) -> None:
        if self._metrics is not None:
            self._metrics.hook_called(hook.name, point)

    def _failed(self, hook: LoadedHook, point: str, reason: HookFailure, error: str) -> Failed:
        if self._metrics is not None:
            self._metrics.hook_failed(hook.name, point, reason)
        _log.warning(
            LogEvent.HOOK_FAILED,
            hook=hook.name,
            point=point,
            reason=reason.value,
            error=error,
            failure_mode=hook.failure_mode.value,
        )
        return Failed(reason, error)
