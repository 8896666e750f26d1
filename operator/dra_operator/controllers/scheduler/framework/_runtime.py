"""The Framework: a profile's plugins, built from a registry, run point by point as upstream does.

kube-scheduler v1.37.2, pkg/scheduler/framework/runtime/framework.go. Each `run_*` method is one
extension point with upstream's rules:

- PreFilter runs every plugin; Skip removes that plugin's Filter for this cycle; results are
  intersected, and an empty intersection rejects the pod as UnschedulableAndUnresolvable
  ("node(s) didn't satisfy plugin(s) [A B] simultaneously"); UnschedulableAndUnresolvable stops
  at once, Unschedulable is kept while the other plugins still run (preemption needs their state).
- Filter stops at the first plugin that rejects the node.
- PostFilter stops at the first plugin that succeeds or says UnschedulableAndUnresolvable.
- PreScore's Skip removes that plugin's Score; scores are normalized per plugin, checked to lie
  in [0, 100], then weighted and summed.
- Reserve stops at the first failure; Unreserve runs every plugin in reverse order.
- Permit collects Wait timeouts (at most 15 minutes) unless a plugin rejects.
- Bind tries plugins in order until one does not Skip.

Filter and Score read the same answers faster than upstream's loops would in Python: a plugin
skipped for the cycle is never called per node, and the verdicts and raw scores of plugins that
sign the pod (`SignedPlugin`) are reused for the next pod of the same shape on a node whose
NodeInfo has not changed (`_reuse`); normalization and weighting run every cycle.

A status other than Success, Skip, Wait or a rejection is an error, worded as upstream wraps it.
Plugins are built once, in the profile's order, each with its `pluginConfig` args and the
framework's handle; the same instance serves every point it implements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework._diagnosis import message
from dra_operator.controllers.scheduler.framework._handle import CycleHandle, FrameworkHandle
from dra_operator.controllers.scheduler.framework._nodeinfo import NodeInfo, PodInfo, Snapshot
from dra_operator.controllers.scheduler.framework._nominator import Nominator
from dra_operator.controllers.scheduler.framework._per_node import (
    failed,
    filter_node,
    score_columns,
)
from dra_operator.controllers.scheduler.framework._plugins import (
    BindPlugin,
    FilterPlugin,
    NodeScore,
    PermitPlugin,
    Plugin,
    PluginFactory,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    SignedPlugin,
)
from dra_operator.controllers.scheduler.framework._profile import Profile
from dra_operator.controllers.scheduler.framework._reuse import ShapeMemo, filter_plan, score_plan
from dra_operator.controllers.scheduler.framework._state import CycleState
from dra_operator.controllers.scheduler.framework._status import SKIP, SUCCESS, Code, Status
from dra_operator.model import Pod

MAX_PERMIT_TIMEOUT = 15 * 60.0
"""A Permit plugin's Wait is cut to 15 minutes (upstream's `maxTimeout`)."""


@dataclass(frozen=True, slots=True)
class PluginScore:
    name: str
    score: int


@dataclass(slots=True)
class NodePluginScores:
    """One node's weighted score from each Score plugin, and their sum."""

    name: str
    scores: tuple[PluginScore, ...]
    total: int


class Framework:
    """One profile's plugins and the extension points; see the module docstring."""

    def __init__(
        self,
        profile: Profile,
        registry: Mapping[str, PluginFactory],
        *,
        handle: CycleHandle | None = None,
    ) -> None:
        self.profile = profile
        self.handle = handle if handle is not None else FrameworkHandle()
        # A handle of another kind (a test's) has no nominations and no preemption runners.
        self.nominator = Nominator()
        if isinstance(self.handle, FrameworkHandle):
            self.handle.bind_framework(self)
            self.nominator = self.handle.nominator
        self.plugins: dict[str, Plugin] = {}
        for name in dict.fromkeys(profile.multi_point):
            factory = registry.get(name)
            if factory is None:
                raise ValueError(f"profile {profile.scheduler_name}: no plugin named {name}")
            plugin = factory(profile.args.get(name, {}), self.handle)
            if plugin.name != name:
                raise ValueError(f"plugin registered as {name} calls itself {plugin.name}")
            self.plugins[name] = plugin
        at = self._at
        self.pre_enqueue_plugins = [p for p in at("preEnqueue") if isinstance(p, PreEnqueuePlugin)]
        self.queue_sort_plugins = [p for p in at("queueSort") if isinstance(p, QueueSortPlugin)]
        self.pre_filter_plugins = [p for p in at("preFilter") if isinstance(p, PreFilterPlugin)]
        self.filter_plugins = [p for p in at("filter") if isinstance(p, FilterPlugin)]
        self.post_filter_plugins = [p for p in at("postFilter") if isinstance(p, PostFilterPlugin)]
        self.pre_score_plugins = [p for p in at("preScore") if isinstance(p, PreScorePlugin)]
        self.score_plugins = [p for p in at("score") if isinstance(p, ScorePlugin)]
        self.reserve_plugins = [p for p in at("reserve") if isinstance(p, ReservePlugin)]
        self.permit_plugins = [p for p in at("permit") if isinstance(p, PermitPlugin)]
        self.pre_bind_plugins = [p for p in at("preBind") if isinstance(p, PreBindPlugin)]
        self.bind_plugins = [p for p in at("bind") if isinstance(p, BindPlugin)]
        self.weights = {p.name: profile.weight(p.name) for p in self.score_plugins}
        self.signers = {p.name: p for p in self.plugins.values() if isinstance(p, SignedPlugin)}
        self._filter_memo: ShapeMemo[Status] = ShapeMemo()
        self._score_memo: ShapeMemo[tuple[int, ...]] = ShapeMemo()
        if len(self.queue_sort_plugins) > 1:
            raise ValueError(f"profile {profile.scheduler_name}: more than one queueSort plugin")
        self.next_start_node_index = 0  # upstream's `nextStartNodeIndex`, kept across cycles

    def _at(self, point: str) -> list[Plugin]:
        """The plugins enabled at `point`; the caller keeps those implementing it."""
        return [self.plugins[name] for name in self.profile.enabled_at(point)]

    @property
    def name(self) -> str:
        return self.profile.scheduler_name

    @property
    def percentage_of_nodes_to_score(self) -> int | None:
        return self.profile.percentage_of_nodes_to_score

    def start_cycle(self, snapshot: Snapshot) -> None:
        """Make `snapshot` the one plugins read through the handle until the next cycle."""
        self.handle.set_snapshot(snapshot)

    # -- queueing ---------------------------------------------------------------------------

    def run_pre_enqueue(self, pod: Pod) -> Status:
        """Success, or the first plugin's reason to keep the pod out of the active queue."""
        for plugin in self.pre_enqueue_plugins:
            status = plugin.pre_enqueue(pod)
            if not status.ok:
                if status.rejects:
                    return status.with_plugin(plugin.name)
                return failed("running PreEnqueue plugin", plugin.name, status)
        return SUCCESS

    def less(self, a: Pod, b: Pod) -> bool | None:
        """The queueSort plugin's order, None when the profile has none."""
        if not self.queue_sort_plugins:
            return None
        return self.queue_sort_plugins[0].less(a, b)

    # -- filtering ---------------------------------------------------------------------------

    def run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, frozenset[str]]:
        """The merged result, the status, and the plugins that narrowed the nodes."""
        skip: set[str] = set()
        result: PreFilterResult | None = None
        narrowing: list[str] = []
        outcome = SUCCESS
        try:
            for plugin in self.pre_filter_plugins:
                found, status = plugin.pre_filter(state, pod, nodes)
                if status.code is Code.SKIP:
                    skip.add(plugin.name)
                    continue
                if not status.ok:
                    status = status.with_plugin(plugin.name)
                    if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        return None, status, frozenset()
                    if status.code is Code.UNSCHEDULABLE:
                        outcome = status
                        continue
                    return (
                        None,
                        failed("running PreFilter plugin", plugin.name, status),
                        frozenset(),
                    )
                if found is None or found.node_names is None:
                    continue
                narrowing.append(plugin.name)
                if result is None or result.node_names is None:
                    result = found
                else:
                    result = PreFilterResult(result.node_names & found.node_names)
                if result.node_names is not None and not result.node_names:
                    names = sorted(narrowing)
                    text = (
                        f"node(s) didn't satisfy plugin {names[0]}"
                        if len(names) == 1
                        else f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    )
                    status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (text,))
                    return result, status, frozenset(names)
            return result, outcome, frozenset(narrowing)
        finally:
            state.skip_filter = skip
            state.filter_plan = None

    def run_filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        """Success, or the status of the first plugin that rejects `node`. The leading signed
        plugins' verdict is reused for a pod of the same shape on an unchanged node
        (`_reuse`)."""
        plan = state.filter_plan
        if plan is None:
            plan = state.filter_plan = filter_plan(
                self.filter_plugins, self.signers, state.skip_filter, pod, self._filter_memo
            )
        return filter_node(plan, state, pod, node)

    def run_filter_with_nominated_pods(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        """Filter with the pods nominated to `node` of equal or higher priority counted there;
        when that passes and some were counted, Filter again without them (a pod may need them
        gone, e.g. for anti-affinity). Upstream's `RunFilterPluginsWithNominatedPods`."""
        added = self._with_nominated_pods(state, pod, node)
        if isinstance(added, Status):
            return added
        if added is None:
            return self.run_filter(state, pod, node)
        status = self.run_filter(added[0], pod, added[1])
        if not status.ok:
            return status
        return self.run_filter(state, pod, node)

    def _with_nominated_pods(
        self, state: CycleState, pod: Pod, node: NodeInfo
    ) -> tuple[CycleState, NodeInfo] | Status | None:
        """Clones of `state` and `node` with the nominated pods that count for `pod`; None
        when there are none (upstream's `addGENominatedPods`)."""
        priority = pod.spec.priority or 0
        uid = pod.metadata.uid
        nominated = [
            info
            for info in self.nominator.for_node(node.name)
            if (info.pod.spec.priority or 0) >= priority and info.pod.metadata.uid != uid
        ]
        if not nominated:
            return None
        state_out, node_out = state.clone(), node.clone()
        for info in nominated:
            node_out.add_pod(info)
            status = self.run_pre_filter_extension_add_pod(state_out, pod, info, node_out)
            if not status.ok:
                return status
        return state_out, node_out

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, to_add: PodInfo, node: NodeInfo
    ) -> Status:
        """Every PreFilter plugin's AddPod (those whose PreFilter did not Skip)."""
        return self._pre_filter_extensions("AddPod", state, pod, to_add, node)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        """Every PreFilter plugin's RemovePod (those whose PreFilter did not Skip)."""
        return self._pre_filter_extensions("RemovePod", state, pod, to_remove, node)

    def _pre_filter_extensions(
        self, operation: str, state: CycleState, pod: Pod, info: PodInfo, node: NodeInfo
    ) -> Status:
        for plugin in self.pre_filter_plugins:
            extensions = plugin.pre_filter_extensions()
            if extensions is None or plugin.name in state.skip_filter:
                continue
            if operation == "AddPod":
                status = extensions.add_pod(state, pod, info, node)
            else:
                status = extensions.remove_pod(state, pod, info, node)
            if not status.ok:
                return Status(
                    Code.ERROR,
                    (
                        f'running {operation} on PreFilter plugin "{plugin.name}": '
                        f"{message(status)}",
                    ),
                    plugin.name,
                )
        return SUCCESS

    def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """The first success, or every plugin's reasons under the first one that failed."""
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.post_filter_plugins:
            found, status = plugin.post_filter(state, pod, statuses)
            if status.ok:
                return found, status.with_plugin(plugin.name)
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return found, status.with_plugin(plugin.name)
            if not status.rejects:
                return None, Status(Code.ERROR, status.reasons, plugin.name)
            if found is not None:
                result = found
            reasons += status.reasons
            rejector = rejector or plugin.name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    # -- scoring -----------------------------------------------------------------------------

    def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        skip: set[str] = set()
        state.score_plan = None
        try:
            for plugin in self.pre_score_plugins:
                status = plugin.pre_score(state, pod, nodes)
                if status.code is Code.SKIP:
                    skip.add(plugin.name)
                elif not status.ok:
                    return failed("running PreScore plugin", plugin.name, status)
            return SUCCESS
        finally:
            state.skip_score = skip

    def normalized_scores(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> dict[str, list[NodeScore]] | Status:
        """Each Score plugin not skipped: its normalized score per node, in `nodes`' order,
        before weights; or the error."""
        columns = self._score_columns(state, pod, nodes)
        if isinstance(columns, Status):
            return columns
        names = [node.name for node in nodes]
        return {
            plugin: [NodeScore(n, score) for n, score in zip(names, column, strict=True)]
            for plugin, column in columns.items()
        }

    def _score_columns(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> dict[str, list[int]] | Status:
        """`normalized_scores` as one column of scores per plugin, in profile order. The signed
        plugins' raw scores are reused for a pod of the same shape on an unchanged node
        (`_reuse`); normalization and the range check run every time."""
        plan = state.score_plan
        if plan is None:
            plan = state.score_plan = score_plan(
                self.score_plugins, self.signers, state.skip_score, pod, self._score_memo
            )
        return score_columns(plan, state, pod, nodes)

    def run_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> list[NodePluginScores] | Status:
        """Every node's weighted scores and total, in `nodes`' order; or the error."""
        columns = self._score_columns(state, pod, nodes)
        if isinstance(columns, Status):
            return columns
        weighted = [(name, self.weights[name], column) for name, column in columns.items()]
        out: list[NodePluginScores] = []
        for at, node in enumerate(nodes):
            scores = tuple(PluginScore(name, column[at] * w) for name, w, column in weighted)
            out.append(NodePluginScores(node.name, scores, sum(p.score for p in scores)))
        return out

    def run_score_totals(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> dict[str, int] | Status:
        """Every node's weighted total, as `run_score`'s, without the per-plugin breakdown."""
        columns = self._score_columns(state, pod, nodes)
        if isinstance(columns, Status):
            return columns
        totals = [0] * len(nodes)
        for name, column in columns.items():
            weight = self.weights[name]
            totals = [total + score * weight for total, score in zip(totals, column, strict=True)]
        return {node.name: total for node, total in zip(nodes, totals, strict=True)}

    # -- reserving and binding ---------------------------------------------------------------

    def run_reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        for plugin in self.reserve_plugins:
            status = plugin.reserve(state, pod, node)
            if not status.ok:
                if status.rejects:
                    return status.with_plugin(plugin.name)
                return failed("running Reserve plugin", plugin.name, status)
        return SUCCESS

    def run_unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order (also those that never reserved)."""
        for plugin in reversed(self.reserve_plugins):
            plugin.unreserve(state, pod, node)

    def run_permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, dict[str, float]]:
        """Success; Wait with each waiting plugin's timeout in seconds; or the rejection."""
        waits: dict[str, float] = {}
        for plugin in self.permit_plugins:
            status, timeout = plugin.permit(state, pod, node)
            if status.ok:
                continue
            if status.rejects:
                return status.with_plugin(plugin.name), {}
            if status.code is Code.WAIT:
                waits[plugin.name] = min(timeout, MAX_PERMIT_TIMEOUT)
                continue
            return failed("running Permit plugin", plugin.name, status), {}
        if waits:
            reason = "one or more plugins asked to wait and no plugin rejected pod"
            return Status(Code.WAIT, (reason,)), waits
        return SUCCESS, {}

    async def run_pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        """Every PreBind plugin in order (Skip: nothing to do); stops at the first failure."""
        for plugin in self.pre_bind_plugins:
            status = await plugin.pre_bind(state, pod, node)
            if status.ok or status.code is Code.SKIP:
                continue
            if status.rejects:
                return status.with_plugin(plugin.name)
            return failed("running PreBind plugin", plugin.name, status)
        return SUCCESS

    async def run_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        """The first Bind plugin that does not Skip; Skip when none binds."""
        for plugin in self.bind_plugins:
            status = await plugin.bind(state, pod, node)
            if status.code is Code.SKIP:
                continue
            if status.ok or status.rejects:
                return status.with_plugin(plugin.name)
            return failed("running Bind plugin", plugin.name, status)
        return SKIP
