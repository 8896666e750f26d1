"""Pods held at Permit: each waits until every plugin that said Wait allows it, one rejects it,
or a plugin's timeout passes.

kube-scheduler v1.37.2, pkg/scheduler/framework/runtime/waiting_pods_map.go and
`WaitOnPermit`: a timeout rejects the pod as Unschedulable with "rejected due to timeout after
waiting <timeout> at plugin <name>". Used from the event loop only: `allow` and `reject` may be
called by anything holding the framework's `WaitingPods` (a plugin's event handler, a test).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping

from dra_operator.controllers.scheduler.framework._status import SUCCESS, Code, Status


def _duration(seconds: float) -> str:
    """Seconds as Go prints a `time.Duration` for whole and fractional seconds ("1m30s", "2.5s")."""
    minutes, rest = divmod(seconds, 60)
    text = f"{rest:g}s"
    if minutes:
        hours, minutes = divmod(int(minutes), 60)
        text = (f"{hours}h" if hours else "") + f"{minutes}m{text}"
    return text


class WaitingPod:
    """One pod between Permit and its binding cycle."""

    def __init__(self, uid: str, timeouts: Mapping[str, float]) -> None:
        self.uid = uid
        loop = asyncio.get_running_loop()
        self._done: asyncio.Future[Status] = loop.create_future()
        self._timers = {
            plugin: loop.call_later(
                timeout,
                self.reject,
                plugin,
                f"rejected due to timeout after waiting {_duration(timeout)} at plugin {plugin}",
            )
            for plugin, timeout in timeouts.items()
        }

    @property
    def pending_plugins(self) -> list[str]:
        return sorted(self._timers)

    def allow(self, plugin: str) -> None:
        """`plugin` lets the pod go; once every waiting plugin did, the pod is bound."""
        timer = self._timers.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if not self._timers and not self._done.done():
            self._done.set_result(SUCCESS)

    def reject(self, plugin: str, reason: str) -> bool:
        """The pod goes back to the queue; False when it was already allowed or rejected."""
        if self._done.done():
            return False
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._done.set_result(Status(Code.UNSCHEDULABLE, (reason,), plugin))
        return True

    async def wait(self) -> Status:
        return await self._done


class WaitingPods:
    """The pods held at Permit, by uid."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, uid: str, timeouts: Mapping[str, float]) -> WaitingPod:
        pod = self._pods[uid] = WaitingPod(uid, timeouts)
        return pod

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    async def wait_on_permit(self, uid: str) -> Status:
        """Success when nothing holds the pod; else what ended its wait."""
        pod = self._pods.get(uid)
        if pod is None:
            return SUCCESS
        try:
            return await pod.wait()
        finally:
            self._pods.pop(uid, None)
