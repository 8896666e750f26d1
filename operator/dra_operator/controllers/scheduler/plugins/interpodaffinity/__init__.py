"""InterPodAffinity: required and preferred pod affinity and anti-affinity.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/interpodaffinity: PreFilter (with
AddPod/RemovePod for preemption), Filter, PreScore, Score and NormalizeScore. Args:
`hardPodAffinityWeight` (0-100, default 1) and `ignorePreferredTermsOfExistingPods` (default
false). A term's `namespaceSelector` is read through `Handle.namespace_labels`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    NodeScore,
    PodInfo,
    PreFilterResult,
    Status,
)
from dra_operator.controllers.scheduler.plugins._args import PluginArgsError, check_known
from dra_operator.controllers.scheduler.plugins.interpodaffinity import _filtering, _scoring
from dra_operator.controllers.scheduler.plugins.interpodaffinity._filtering import (
    ERR_AFFINITY,
    ERR_ANTI_AFFINITY,
    ERR_EXISTING_ANTI_AFFINITY,
    NAME,
)
from dra_operator.controllers.scheduler.plugins.interpodaffinity._scoring import ScoreArgs
from dra_operator.controllers.scheduler.plugins.interpodaffinity._terms import NamespaceLabels
from dra_operator.model import Pod

__all__ = [
    "ERR_AFFINITY",
    "ERR_ANTI_AFFINITY",
    "ERR_EXISTING_ANTI_AFFINITY",
    "NAME",
    "InterPodAffinity",
    "new",
]

_ARGS = ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods")


class InterPodAffinity:
    """PreFilter, Filter, PreScore and Score (with NormalizeScore); see the module docstring."""

    def __init__(self, args: ScoreArgs, handle: Handle) -> None:
        self._args = args
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def _labels_of(self) -> NamespaceLabels:
        """Namespace labels for one cycle, each namespace asked once."""
        return functools.lru_cache(maxsize=None)(self._handle.namespace_labels)

    # -- PreFilter / Filter ------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        status = _filtering.pre_filter(state, pod, nodes, self._handle.snapshot, self._labels_of())
        return None, status

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node: NodeInfo) -> Status:
        return self._update(state, pod_to_add, node, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        return self._update(state, pod_to_remove, node, -1)

    def _update(self, state: CycleState, info: PodInfo, node: NodeInfo, delta: int) -> Status:
        s = _filtering.read_state(state)
        if isinstance(s, Status):
            return s
        s.update(info, node.node, delta)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        s = _filtering.read_state(state)
        if isinstance(s, Status):
            return s
        return _filtering.filter_node(s, node)

    # -- PreScore / Score --------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return _scoring.pre_score(state, pod, self._handle.snapshot, self._args, self._labels_of())

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        s = _scoring.read_state(state)
        if isinstance(s, Status):
            return 0, s
        return _scoring.score_node(s, node), SUCCESS

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        s = _scoring.read_state(state)
        if isinstance(s, Status):
            return s
        _scoring.normalize(s, scores)
        return SUCCESS


def parse_args(args: Mapping[str, object]) -> ScoreArgs:
    """InterPodAffinityArgs with upstream's defaults and validation; PluginArgsError if not."""
    check_known(args, "args", _ARGS)
    weight = args.get("hardPodAffinityWeight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int):
        raise PluginArgsError("args.hardPodAffinityWeight: expected an integer")
    if not 0 <= weight <= 100:
        raise PluginArgsError(
            f"args.hardPodAffinityWeight: Invalid value: {weight}: not in valid range [0-100]"
        )
    ignore = args.get("ignorePreferredTermsOfExistingPods", False)
    if not isinstance(ignore, bool):
        raise PluginArgsError("args.ignorePreferredTermsOfExistingPods: expected a boolean")
    return ScoreArgs(weight, ignore)


def new(args: Mapping[str, object], handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(parse_args(args), handle)
