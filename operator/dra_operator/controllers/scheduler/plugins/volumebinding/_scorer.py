"""VolumeBinding's Score: how full the PVs chosen on a node would be, per storage class.

kube-scheduler v1.37.2, volumebinding/scorer.go and helper.BuildBrokenLinearFunction, enabled
by the StorageCapacityScoring feature (beta and on by default in 1.37). The default shape
(utilization 0 → score 10, 100 → 0, times 10) prefers the node whose PVs leave the least
unused: with it, a 1 Gi claim scores higher on a node offering a 1 Gi PV than a 10 Gi one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10
"""`config.MaxCustomPriorityScore`: shape scores are given in 0..10 and scaled to 0..100."""


@dataclass(frozen=True, slots=True)
class ShapePoint:
    utilization: int
    score: int  # already scaled to 0..MAX_NODE_SCORE


DEFAULT_SHAPE = (ShapePoint(0, 100), ShapePoint(100, 0))


@dataclass(slots=True)
class StorageResource:
    requested: int = 0
    capacity: int = 0


def _go_div(a: int, b: int) -> int:
    """Go's integer division truncates toward zero; Python's floors."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def broken_linear(shape: Sequence[ShapePoint], p: int) -> int:
    """`helper.BuildBrokenLinearFunction`: linear between the points, flat outside them."""
    for i, point in enumerate(shape):
        if p <= point.utilization:
            if i == 0:
                return shape[0].score
            prev = shape[i - 1]
            return prev.score + _go_div(
                (point.score - prev.score) * (p - prev.utilization),
                point.utilization - prev.utilization,
            )
    return shape[-1].score


def score(shape: Sequence[ShapePoint], by_class: Mapping[str, StorageResource]) -> int:
    """The mean over classes of each class's score, rounded half away from zero."""
    if not by_class:
        return 0
    total = 0
    for resource in by_class.values():
        if resource.capacity == 0 or resource.requested > resource.capacity:
            total += broken_linear(shape, MAX_UTILIZATION)
        else:
            utilization = resource.requested * MAX_UTILIZATION // resource.capacity
            total += broken_linear(shape, utilization)
    return (2 * total + len(by_class)) // (2 * len(by_class))
