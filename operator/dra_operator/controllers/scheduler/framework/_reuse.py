"""Filter and Score results per pod shape and node, reused while the node's NodeInfo is unchanged.

Most pods of a workload look alike to the node-local plugins (same requests, tolerations,
affinity, host ports), and most nodes do not change between two decisions. A `SignedPlugin`
says what of a pod it reads (`sign_pod`); the signatures of the plugins one extension point
runs make the pod's shape, and a node's result for that shape holds while the node's
`NodeInfo.generation` is the one it was computed at (every change to a NodeInfo, its node object
or its images moves the generation). A NodeInfo of generation 0 (built outside the cache) is
never reused.

Only the leading signed Filter plugins are reused as one verdict (Filter stops at the first
rejection, so the order must stand); plugins that read cluster-wide state moving without the
node's generation (InterPodAffinity, PodTopologySpread, the volume plugins, ImageLocality's
spread over the node count) do not sign and run per cycle. Normalization always runs per cycle.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from dra_operator.controllers.scheduler.framework._plugins import (
    FilterPlugin,
    ScorePlugin,
    SignedPlugin,
)
from dra_operator.controllers.scheduler.framework._status import Status
from dra_operator.model import Pod

T = TypeVar("T")

MAX_SHAPES = 16
"""Pod shapes kept per extension point; the least recently used is dropped beyond. A shape
keeps one small entry per node it was tried on (every node, over the rotating samples), so at
5,000 nodes the two points' memos stay within about 20 MiB."""

NodeResults = dict[str, tuple[int, T]]
"""Per node name: the generation the result was computed at, and the result."""


class ShapeMemo(Generic[T]):
    """One extension point's results per pod shape, per node; see the module docstring."""

    __slots__ = ("_limit", "_shapes")

    def __init__(self, limit: int = MAX_SHAPES) -> None:
        self._limit = limit
        self._shapes: dict[Hashable, NodeResults[T]] = {}

    def for_shape(self, shape: Hashable) -> NodeResults[T]:
        """The results of `shape`, made the most recently used."""
        found = self._shapes.pop(shape, None)
        if found is None:
            found = {}
            if len(self._shapes) >= self._limit:
                del self._shapes[next(iter(self._shapes))]
        self._shapes[shape] = found
        return found

    def __len__(self) -> int:
        return len(self._shapes)


@dataclass(frozen=True, slots=True)
class FilterPlan:
    """One cycle's Filter plugins not skipped: the leading signed ones, whose joint verdict
    per node is reused through `memo` (None: no plugin signed), then the others."""

    reused: tuple[FilterPlugin, ...]
    rest: tuple[FilterPlugin, ...]
    memo: NodeResults[Status] | None


@dataclass(frozen=True, slots=True)
class ScorePlan:
    """One cycle's Score plugins not skipped, in profile order; of them, the signed ones,
    whose raw scores per node are reused through `memo`, and the others."""

    plugins: tuple[ScorePlugin, ...]
    signed: tuple[ScorePlugin, ...]
    others: tuple[ScorePlugin, ...]
    memo: NodeResults[tuple[int, ...]] | None


def _sign(signers: Mapping[str, SignedPlugin], name: str, pod: Pod) -> Hashable | None:
    signer = signers.get(name)
    return signer.sign_pod(pod) if signer is not None else None


def filter_plan(
    plugins: Sequence[FilterPlugin],
    signers: Mapping[str, SignedPlugin],
    skip: set[str],
    pod: Pod,
    memo: ShapeMemo[Status],
) -> FilterPlan:
    """The Filter plan of `pod`'s cycle, PreFilter's `skip` left out."""
    active = [p for p in plugins if p.name not in skip]
    shape: list[tuple[str, Hashable]] = []
    for plugin in active:
        sign = _sign(signers, plugin.name, pod)
        if sign is None:
            break
        shape.append((plugin.name, sign))
    reused = len(shape)
    results = memo.for_shape(tuple(shape)) if shape else None
    return FilterPlan(tuple(active[:reused]), tuple(active[reused:]), results)


def score_plan(
    plugins: Sequence[ScorePlugin],
    signers: Mapping[str, SignedPlugin],
    skip: set[str],
    pod: Pod,
    memo: ShapeMemo[tuple[int, ...]],
) -> ScorePlan:
    """The Score plan of `pod`'s cycle, PreScore's `skip` left out."""
    active = tuple(p for p in plugins if p.name not in skip)
    signed: list[ScorePlugin] = []
    others: list[ScorePlugin] = []
    shape: list[tuple[str, Hashable]] = []
    for plugin in active:
        sign = _sign(signers, plugin.name, pod)
        if sign is None:
            others.append(plugin)
        else:
            signed.append(plugin)
            shape.append((plugin.name, sign))
    results = memo.for_shape(tuple(shape)) if shape else None
    return ScorePlan(active, tuple(signed), tuple(others), results)
