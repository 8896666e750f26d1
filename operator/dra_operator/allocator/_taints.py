"""Device taints against request tolerations (upstream `ToleratesTaint`).

Only `NoSchedule` and `NoExecute` block allocation; `None` and unknown effects are ignored, and
`tolerationSeconds` matters only to eviction, never here.
"""

from __future__ import annotations

from collections.abc import Sequence

from dra_operator.model import Device, DeviceTaint, DeviceToleration

_BLOCKING = frozenset({"NoSchedule", "NoExecute"})


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def blocking_taint(device: Device, tolerations: Sequence[DeviceToleration]) -> DeviceTaint | None:
    """The first taint that prevents allocating `device` with `tolerations`, if any."""
    for taint in device.taints:
        if taint.effect in _BLOCKING and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def describe_taint(taint: DeviceTaint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"
