"""Example hook: hold the device-taint eviction of pods labelled `dra.example.com/hold=true`.

Shows `before_evict`: while the label is on the pod, each ask answers a delay of a minute, and
the eviction controller asks again after it (or at once, when the pod changes); removing the
label lets the eviction go ahead at the next ask. `reasons` name the taints that evict the pod.
"""

from __future__ import annotations

from dra_operator.model import Pod

HOLD_LABEL = "dra.example.com/hold"


class HoldLabelled:
    """before_evict: 60 s more for labelled pods; records each hold (pod, reasons)."""

    failure_mode = "ignore"  # if this hook fails, the eviction goes ahead

    def __init__(self) -> None:
        self.held: list[tuple[str, tuple[str, ...]]] = []

    async def before_evict(self, pod: Pod, reasons: tuple[str, ...]) -> float | None:
        if pod.metadata.labels.get(HOLD_LABEL) != "true":
            return None
        self.held.append((f"{pod.metadata.namespace}/{pod.metadata.name}", reasons))
        return 60.0
