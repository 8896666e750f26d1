"""PodTopologySpread: a pod's `topologySpreadConstraints`, or the profile's defaults.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/podtopologyspread: PreFilter (with
AddPod/RemovePod for preemption) and Filter for DoNotSchedule constraints, PreScore, Score and
NormalizeScore for ScheduleAnyway ones; minDomains, nodeAffinityPolicy, nodeTaintsPolicy and
matchLabelKeys as upstream (all their feature gates on). Args: `defaultingType` System (default:
hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway) or List with `defaultConstraints`.
Default constraints select with the pod's workload selector, which only a Handle implementing
`SpreadSelectors` provides (see `_common`).
"""

from __future__ import annotations

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
    error,
)
from dra_operator.controllers.scheduler.plugins._args import PluginArgsError, check_known
from dra_operator.controllers.scheduler.plugins.podtopologyspread import _filtering, _scoring
from dra_operator.controllers.scheduler.plugins.podtopologyspread._common import (
    DO_NOT_SCHEDULE,
    NAME,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    SpreadSelectors,
    build_constraints,
)
from dra_operator.controllers.scheduler.plugins.podtopologyspread._filtering import (
    ERR_CONSTRAINTS_NOT_MATCH,
    ERR_NODE_LABEL_NOT_MATCH,
)
from dra_operator.errors import InvalidObjectError
from dra_operator.model import (
    Pod,
    SelectorError,
    TopologySpreadConstraint,
    parse_topology_spread_constraint,
)

__all__ = [
    "ERR_CONSTRAINTS_NOT_MATCH",
    "ERR_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "SpreadSelectors",
    "new",
]


class PodTopologySpread:
    """PreFilter, Filter, PreScore and Score (with NormalizeScore); see the module docstring."""

    def __init__(
        self,
        handle: Handle,
        defaults: tuple[TopologySpreadConstraint, ...],
        system_defaulted: bool,
    ) -> None:
        self._handle = handle
        self._defaults = defaults
        self._system_defaulted = system_defaulted
        self._counted = _filtering.CountMemo()  # PreFilter's per-node counts, across cycles

    @property
    def name(self) -> str:
        return NAME

    def _constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """The pod's constraints of kind `action`, or the defaults'; SelectorError if invalid."""
        labels = pod.metadata.labels
        if pod.spec.topology_spread_constraints:
            return build_constraints(pod.spec.topology_spread_constraints, labels, action)
        constraints = build_constraints(self._defaults, labels, action)
        if not constraints or not isinstance(self._handle, SpreadSelectors):
            return []
        selector = self._handle.default_spread_selector(pod)
        if selector.everything or selector.nothing:
            return []
        return [
            Constraint(
                c.max_skew,
                c.topology_key,
                selector,
                c.min_domains,
                c.node_affinity_policy,
                c.node_taints_policy,
            )
            for c in constraints
        ]

    # -- PreFilter / Filter ------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        try:
            constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError as e:
            return None, error(
                f"get constraints from pod: obtaining pod's hard topology spread constraints: {e}"
            )
        return None, _filtering.pre_filter(state, pod, nodes, constraints, self._counted)

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node: NodeInfo) -> Status:
        return _filtering.update(state, pod, pod_to_add, node, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        return _filtering.update(state, pod, pod_to_remove, node, -1)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        s = _filtering.read_state(state)
        if isinstance(s, Status):
            return s
        return _filtering.filter_node(s, node)

    # -- PreScore / Score --------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        try:
            constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        except SelectorError as e:
            return error(
                f"calculating preScoreState: obtaining pod's soft topology spread constraints: {e}"
            )
        require_all = bool(pod.spec.topology_spread_constraints) or not self._system_defaulted
        return _scoring.pre_score(
            state, pod, nodes, self._handle.snapshot, constraints, require_all
        )

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        s = _scoring.read_state(state)
        if isinstance(s, Status):
            return 0, s
        return _scoring.score_node(s, pod, node), SUCCESS

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        s = _scoring.read_state(state)
        if isinstance(s, Status):
            return s
        _scoring.normalize(s, scores)
        return SUCCESS


_ARGS = ("defaultingType", "defaultConstraints")


def _default_constraints(raw: object) -> tuple[TopologySpreadConstraint, ...]:
    if not isinstance(raw, list):
        raise PluginArgsError("args.defaultConstraints: expected a list")
    try:
        parsed = tuple(
            parse_topology_spread_constraint(c, f"args.defaultConstraints[{i}]")
            for i, c in enumerate(raw)
        )
    except InvalidObjectError as e:
        raise PluginArgsError(str(e)) from e
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(parsed):
        where = f"args.defaultConstraints[{i}]"
        if c.max_skew <= 0:
            raise PluginArgsError(
                f"{where}.maxSkew: Invalid value: {c.max_skew}: must be greater than zero"
            )
        if not c.topology_key:
            raise PluginArgsError(f"{where}.topologyKey: Required value: can not be empty")
        if c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise PluginArgsError(
                f"{where}.whenUnsatisfiable: Unsupported value: {c.when_unsatisfiable!r}"
            )
        if c.label_selector is not None:
            raise PluginArgsError(
                f"{where}.labelSelector: Forbidden: constraint must not define a selector, "
                "as they deduced for each pod"
            )
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            raise PluginArgsError(f"{where}: Duplicate value: {pair}")
        seen.add(pair)
    return parsed


def parse_args(args: Mapping[str, object]) -> tuple[tuple[TopologySpreadConstraint, ...], bool]:
    """PodTopologySpreadArgs: the default constraints and whether they are the system's."""
    check_known(args, "args", _ARGS)
    defaulting = args.get("defaultingType", "System")
    listed = _default_constraints(args.get("defaultConstraints", []))
    if defaulting == "System":
        if listed:
            raise PluginArgsError(
                'args.defaultConstraints: Invalid value: when .defaultingType is "System", '
                ".defaultConstraints must be empty"
            )
        return SYSTEM_DEFAULT_CONSTRAINTS, True
    if defaulting == "List":
        return listed, False
    raise PluginArgsError(
        f'args.defaultingType: Unsupported value: {defaulting!r}: "List", "System"'
    )


def new(args: Mapping[str, object], handle: Handle) -> PodTopologySpread:
    defaults, system = parse_args(args)
    return PodTopologySpread(handle, defaults, system)
