"""The asynchronous hook points the scheduler and the eviction controller await.

`before_allocate(claim)` runs before the scheduler tries to allocate a claim; a non-empty
string answer refuses the allocation, and the scheduler puts the reason in the pod's
`FailedScheduling` event. `after_allocate(claim, result)` observes a written allocation.
`before_evict(pod, reasons)` runs before a pod is evicted for device taints; a positive number
of seconds delays the eviction (the eviction controller asks again after it), anything else
lets it go ahead. Hooks run in load order; the first refusal wins and the longest delay wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dra_operator.hooks._guard import Failed, Guard
from dra_operator.hooks._load import FailureMode, LoadedHook
from dra_operator.model import AllocationResult, Pod, ResourceClaim

__all__ = ["EVICTION_RETRY", "HookPoints", "Refusal"]

EVICTION_RETRY = 30.0  # seconds an eviction waits when a refusing before_evict hook failed


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A `before_allocate` hook said no; `message` is the sentence for the event."""

    hook: str
    reason: str

    @property
    def message(self) -> str:
        return f"Allocation refused by hook {self.hook}: {self.reason}."


class HookPoints:
    """The async points of one set of hooks (all loaded hooks, or a policy's selection)."""

    def __init__(self, hooks: Sequence[LoadedHook], guard: Guard) -> None:
        self._hooks = tuple(hooks)
        self._guard = guard

    async def before_allocate(self, claim: ResourceClaim) -> Refusal | None:
        for hook in self._with("before_allocate"):
            got = await self._guard.call_async(hook, "before_allocate", claim)
            if isinstance(got, Failed):
                if hook.failure_mode is FailureMode.REFUSE:
                    return Refusal(hook=hook.name, reason=f"the hook failed ({got.reason.value})")
                continue
            if isinstance(got, str) and got:
                return Refusal(hook=hook.name, reason=got)
        return None

    async def after_allocate(self, claim: ResourceClaim, result: AllocationResult) -> None:
        for hook in self._with("after_allocate"):
            await self._guard.call_async(hook, "after_allocate", claim, result)

    async def before_evict(self, pod: Pod, reasons: Sequence[str]) -> float:
        """Seconds to delay the eviction; 0 means evict now."""
        delay = 0.0
        for hook in self._with("before_evict"):
            got = await self._guard.call_async(hook, "before_evict", pod, tuple(reasons))
            if isinstance(got, Failed):
                if hook.failure_mode is FailureMode.REFUSE:
                    delay = max(delay, EVICTION_RETRY)
                continue
            if isinstance(got, int | float) and not isinstance(got, bool) and got > 0:
                delay = max(delay, float(min(got, 1e9)))
        return delay

    def _with(self, point: str) -> list[LoadedHook]:
        return [hook for hook in self._hooks if hook.has(point)]
