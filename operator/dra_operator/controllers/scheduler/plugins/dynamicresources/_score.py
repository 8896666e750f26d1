"""DynamicResources' Score beside the framework's: the policy's score of a node's allocation.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/dynamicresources (Score, weight 2 in the
default profile) ranks nodes by the prioritized-list subrequest allocated there; here the
AllocationPolicy's score of the allocation plays that part (FirstFit scores nothing, as upstream
without `firstAvailable`), rescaled over the fitting nodes to [0, 100] as NormalizeScore would,
weighted, and added to the framework's weighted Score totals; ties go to the smallest name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from dra_operator.allocator import (
    FirstFit,
    Policy,
)
from dra_operator.model import (
    AllocationResult,
    ExtendedClaim,
    ResourceClaim,
)

Scorer = Callable[[Sequence[str]], Mapping[str, int]]
"""The framework's weighted Score totals of the nodes named (PreScore, Score, NormalizeScore)."""


Fit = tuple[float, str, tuple[AllocationResult, ...] | None, ExtendedClaim | None]
"""A fitting node: the policy's score, the node, its allocation (None: not made yet) and the
special claim allocated with it."""


def scores_alike(claims: Sequence[ResourceClaim], policy: Policy) -> bool:
    """Whether DynamicResources' Score gives every node the same score for `claims`: FirstFit
    scores nothing and, without a prioritized list (`firstAvailable`, which kube-scheduler
    v1.37.2's Score ranks by the subrequest allocated), neither does upstream."""
    return isinstance(policy, FirstFit) and not any(
        request.first_available for claim in claims for request in claim.spec.requests
    )


def ranked(fitting: Sequence[Fit], scorer: Scorer | None) -> list[Fit]:
    """The fitting nodes best first: the framework's Score totals plus the policy's score
    rescaled as a Score plugin's (`as_node_score`); ties to the smallest name."""
    if scorer is not None:
        totals = scorer([f[1] for f in fitting])
        low = min(f[0] for f in fitting)
        span = max(f[0] for f in fitting) - low
        fitting = [
            (as_node_score(score, low, span) + totals.get(n, 0), n, kept, extra)
            for score, n, kept, extra in fitting
        ]
    return sorted(fitting, key=lambda f: (-f[0], f[1]))


DYNAMIC_RESOURCES_WEIGHT = 2
"""DynamicResources' Score weight in kube-scheduler's default profile."""


def as_node_score(score: float, low: float, span: float) -> float:
    """The policy's score of a node beside the framework's: rescaled over the fitting nodes to
    [0, 100] (lowest 0, highest 100; all alike: 0), then weighted as DynamicResources is."""
    if span <= 0:
        return 0.0
    return (score - low) * 100 / span * DYNAMIC_RESOURCES_WEIGHT
