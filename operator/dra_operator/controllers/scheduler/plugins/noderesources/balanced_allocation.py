"""NodeResourcesBalancedAllocation (PreScore, Score): prefer nodes whose use stays balanced.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go.
Scores how much the pod would even out the used fractions of the configured resources (cpu
and memory by default, weights fixed at 1), from the plain requests. A pod requesting none of
them is skipped. Like NodeResourcesFit it does not count DRA-served extended resources.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    Status,
    error,
)
from dra_operator.controllers.scheduler.plugins.noderesources._args import (
    balanced_allocation_resources,
)
from dra_operator.controllers.scheduler.plugins.noderesources._scoring import (
    ResourceAllocationScorer,
    ResourceSpec,
    balanced,
)
from dra_operator.model import Pod

NAME = "NodeResourcesBalancedAllocation"

_PRE_SCORE_KEY = "PreScore" + NAME


class NodeResourcesBalancedAllocation:
    def __init__(self, resources: tuple[ResourceSpec, ...]) -> None:
        self._scoring = ResourceAllocationScorer(resources, balanced, use_requested=True)

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable:
        return self._scoring.pod_request_list(pod)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        requests = self._scoring.pod_request_list(pod)
        if not any(requests):
            return SKIP
        state.write(_PRE_SCORE_KEY, requests)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        requests = state.get(_PRE_SCORE_KEY)
        if not isinstance(requests, tuple):
            requests = self._scoring.pod_request_list(pod)
            if not any(requests):
                return 0, SUCCESS
        if not self._scoring.resources:
            return 0, error("resources not found").with_plugin(NAME)
        return self._scoring.score(node, requests), SUCCESS

    def score_extensions(self) -> None:
        return None


def new(args: Mapping[str, object], handle: Handle) -> NodeResourcesBalancedAllocation:
    """NodeResourcesBalancedAllocationArgs: `resources`, each with weight 1."""
    return NodeResourcesBalancedAllocation(balanced_allocation_resources(args))
