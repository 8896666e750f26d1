"""Scoring a node by its resource use: kube-scheduler's `resourceAllocationScorer`.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/noderesources (resource_allocation.go,
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go, balanced_allocation.go
and helper/shape_score.go). Integer arithmetic truncates toward zero as Go's does; the two
places upstream uses floats (RequestedToCapacityRatio's rounding, BalancedAllocation's standard
deviation) use the same double-precision operations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    EPHEMERAL_STORAGE,
    MAX_NODE_SCORE,
    MEMORY,
    NodeInfo,
    is_scalar_resource,
)
from dra_operator.model import (
    FrozenMap,
    Pod,
    Quantity,
    effective_requests,
    node_allocatable_claim_requests,
)

MAX_CUSTOM_PRIORITY_SCORE = 10
"""RequestedToCapacityRatio shape scores are 0-10, scaled by 100/10 to node scores."""
_MAX_UTILIZATION = 100

Scorer = Callable[[Sequence[int], Sequence[int], Sequence[int]], int]
"""(requested with the pod, allocated before it, allocatable) per resource → a node score."""


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int


def _div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def least_allocated(resources: Sequence[ResourceSpec]) -> Scorer:
    def score(requested: Sequence[int], _: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, cap in zip(resources, requested, allocatable, strict=True):
            if cap == 0:
                continue
            total += (0 if req > cap else (cap - req) * MAX_NODE_SCORE // cap) * spec.weight
            weights += spec.weight
        return 0 if weights == 0 else total // weights

    return score


def most_allocated(resources: Sequence[ResourceSpec]) -> Scorer:
    def score(requested: Sequence[int], _: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, cap in zip(resources, requested, allocatable, strict=True):
            if cap == 0:
                continue
            total += min(req, cap) * MAX_NODE_SCORE // cap * spec.weight
            weights += spec.weight
        return 0 if weights == 0 else total // weights

    return score


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """`helper.BuildBrokenLinearFunction` over (utilization, score) points, sorted."""

    def f(p: int) -> int:
        for i, (util, score) in enumerate(shape):
            if p <= util:
                if i == 0:
                    return score
                prev_util, prev_score = shape[i - 1]
                return prev_score + _div((score - prev_score) * (p - prev_util), util - prev_util)
        return shape[-1][1]

    return f


def requested_to_capacity_ratio(
    resources: Sequence[ResourceSpec], shape: Sequence[tuple[int, int]]
) -> Scorer:
    """`shape` as configured: utilization 0-100, score 0-10."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear([(u, s * scale) for u, s in shape])

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(_MAX_UTILIZATION)
        return raw(requested * _MAX_UTILIZATION // capacity)

    def score(requested: Sequence[int], _: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, cap in zip(resources, requested, allocatable, strict=True):
            if cap == 0:
                continue
            s = resource_score(req, cap)
            if s > 0:
                total += s * spec.weight
                weights += spec.weight
        # math.Round: half away from zero; both are non-negative here
        return 0 if weights == 0 else (2 * total + weights) // (2 * weights)

    return score


def _balance(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """100 × (1 − the standard deviation of the used fractions), truncated."""
    fractions = [min(r / a, 1.0) for r, a in zip(requested, allocatable, strict=True) if a != 0]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced(requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]) -> int:
    """How much placing the pod improves the balance, centred on 50."""
    with_pod = _balance(requested, allocatable)
    without_pod = _balance(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + _div(half + with_pod - without_pod, 2)


_NON_ZERO_DEFAULTS: FrozenMap[str, Quantity] = FrozenMap(
    {CPU: Quantity.parse(f"{DEFAULT_MILLI_CPU_REQUEST}m"), MEMORY: Quantity(DEFAULT_MEMORY_REQUEST)}
)


@dataclass(frozen=True, slots=True)
class ResourceAllocationScorer:
    """Scores with `scorer` over `resources`; `use_requested` reads requests as they are
    (BalancedAllocation), otherwise cpu and memory count as at least 100m and 200 MiB."""

    resources: tuple[ResourceSpec, ...]
    scorer: Scorer
    use_requested: bool

    def pod_request_list(self, pod: Pod) -> tuple[int, ...]:
        """The pod's request of each resource, in framework units."""
        claimed = node_allocatable_claim_requests(
            pod.status.node_allocatable_resource_claim_statuses
        )
        if self.use_requested:
            requests = effective_requests(pod.spec, claimed=claimed)
        else:
            requests = effective_requests(pod.spec, _NON_ZERO_DEFAULTS, claimed=claimed)
        values = []
        for spec in self.resources:
            q = requests.get(spec.name)
            if q is None:
                values.append(0)
            else:
                values.append(q.milli_value() if spec.name == CPU else q.int_value())
        return tuple(values)

    def _node_amounts(self, node: NodeInfo, name: str) -> tuple[int, int]:
        """(allocatable, already requested) of one resource on the node; (0, 0) to omit it."""
        requested = node.requested if self.use_requested else node.non_zero_requested
        if name in (CPU, MEMORY):
            return node.allocatable.get(name, 0), requested.get(name, 0)
        if name == EPHEMERAL_STORAGE:
            return node.allocatable.get(name, 0), node.requested.get(name, 0)
        if is_scalar_resource(name) and name in node.allocatable:
            return node.allocatable[name], node.requested.get(name, 0)
        return 0, 0

    def score(self, node: NodeInfo, pod_requests: Sequence[int]) -> int:
        n = len(self.resources)
        requested, allocated, allocatable = [0] * n, [0] * n, [0] * n
        for i, spec in enumerate(self.resources):
            if pod_requests[i] == 0 and is_scalar_resource(spec.name):
                continue
            cap, used = self._node_amounts(node, spec.name)
            if cap == 0:
                continue
            allocatable[i], allocated[i] = cap, used
            requested[i] = used + pod_requests[i]
        return self.scorer(requested, allocated, allocatable)
