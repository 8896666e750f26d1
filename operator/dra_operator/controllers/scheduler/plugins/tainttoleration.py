"""TaintToleration (Filter, Score): untolerated NoSchedule/NoExecute taints keep a pod off.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/tainttoleration. Score counts the
node's PreferNoSchedule taints the pod does not tolerate (only tolerations with no effect or
PreferNoSchedule count) and normalizes reversed: the node with the fewest scores 100. The
comparison operators Gt/Lt (alpha gate TaintTolerationComparisonOperators) are off, as upstream.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    NodeScore,
    Status,
    error,
    unresolvable,
)
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.controllers.scheduler.plugins._helper import default_normalize_score
from dra_operator.model import Pod, Taint, Toleration, tolerates_node_taint

NAME = "TaintToleration"
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

_PRE_SCORE_KEY = "PreScore" + NAME
_REJECT = unresolvable(ERR_REASON_UNTOLERATED).with_plugin(NAME)
_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


def _tolerated(taint: Taint, tolerations: Sequence[Toleration], comparison: bool) -> bool:
    return any(tolerates_node_taint(t, taint, comparison_operators=comparison) for t in tolerations)


def untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], *, comparison: bool = False
) -> Taint | None:
    """The first NoSchedule or NoExecute taint the tolerations do not tolerate, if any."""
    for taint in taints:
        if taint.effect in _DO_NOT_SCHEDULE and not _tolerated(taint, tolerations, comparison):
            return taint
    return None


class TaintToleration:
    def __init__(self, *, comparison_operators: bool = False) -> None:
        """`comparison_operators`: the alpha gate TaintTolerationComparisonOperators."""
        self._comparison = comparison_operators

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable:
        return pod.spec.tolerations

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        taints, tolerations = node.node.taints, pod.spec.tolerations
        if untolerated_taint(taints, tolerations, comparison=self._comparison) is None:
            return SUCCESS
        return _REJECT

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        prefer = tuple(t for t in pod.spec.tolerations if t.effect in ("", "PreferNoSchedule"))
        state.write(_PRE_SCORE_KEY, prefer)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        tolerations = state.get(_PRE_SCORE_KEY)
        if not isinstance(tolerations, tuple):
            return 0, error(f"reading {_PRE_SCORE_KEY!r} from cycleState: not found")
        count = sum(
            1
            for taint in node.node.taints
            if taint.effect == "PreferNoSchedule"
            and not _tolerated(taint, tolerations, self._comparison)
        )
        return count, SUCCESS

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        default_normalize_score(scores, reverse=True)
        return SUCCESS


def new(args: Mapping[str, object], handle: Handle) -> TaintToleration:
    check_known(args, "args", ())
    return TaintToleration()
