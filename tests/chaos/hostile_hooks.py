"""Hooks that misbehave, loaded by the hostile-input scenario with `--hook`.

`Hanging.before_allocate` never answers (its 0.5 s timeout must end it); `Raising` raises from
every allocation-time point. With `failure_mode = "ignore"` both count as "go ahead" and the
operator must keep scheduling.
"""

from __future__ import annotations

import asyncio
from typing import Any


class Hanging:
    timeout = 0.5

    async def before_allocate(self, claim: Any) -> str | None:
        await asyncio.Event().wait()
        return None


class Raising:
    def score_node(self, view: Any) -> float:
        raise RuntimeError("score_node is broken on purpose")

    def filter_device(self, info: Any) -> bool:
        raise RuntimeError("filter_device is broken on purpose")
