"""Example hooks that fail, to show containment: the allocation goes on regardless.

`Broken` raises from every point; declared `ignore`, so each failure is logged
(`hook.failed`), counted (`dra_operator_hook_failures_total`) and then treated as if the hook
had not been called. `Strict` is the same with `refuse`: its failures veto devices and refuse
allocations instead. `Slow` sleeps past its 10 ms limit in `before_allocate`.
"""

from __future__ import annotations

import asyncio

from dra_operator.hooks import DeviceInfo
from dra_operator.model import ResourceClaim


class Broken:
    failure_mode = "ignore"

    def filter_device(self, info: DeviceInfo) -> bool:
        raise RuntimeError(f"cannot judge {info.id}")

    def score_device(self, info: DeviceInfo) -> float:
        raise RuntimeError("no score today")

    async def before_allocate(self, claim: ResourceClaim) -> str | None:
        raise RuntimeError("no opinion")


class Strict(Broken):
    failure_mode = "refuse"


class Slow:
    failure_mode = "refuse"
    timeout = 0.01

    async def before_allocate(self, claim: ResourceClaim) -> str | None:
        await asyncio.sleep(3600)  # cancelled at the time limit
        return None
