"""Device taints against request tolerations (the model's `tolerates`, upstream `ToleratesTaint`).

Only `NoSchedule` and `NoExecute` block allocation; `None` and unknown effects are ignored, and
`tolerationSeconds` matters only to eviction, never here.
"""

from __future__ import annotations

from collections.abc import Sequence

from dra_operator.model import Device, DeviceTaint, DeviceToleration, tolerates

_BLOCKING = frozenset({"NoSchedule", "NoExecute"})


def blocking_taint(device: Device, tolerations: Sequence[DeviceToleration]) -> DeviceTaint | None:
    """The first taint that prevents allocating `device` with `tolerations`, if any."""
    for taint in device.taints:
        if taint.effect in _BLOCKING and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def describe_taint(taint: DeviceTaint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"
