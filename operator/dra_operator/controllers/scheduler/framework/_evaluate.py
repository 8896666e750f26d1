"""Every plugin's verdict on every node for one pod: what the differential test compares.

Unlike a scheduling cycle, `evaluate` does not stop Filter at enough feasible nodes nor skip
scoring a single feasible node: it runs PreFilter, Filter on every node (nodes a PreFilter
result leaves out get the absent status a cycle would record), then PreScore, Score and
NormalizeScore on the feasible ones, so that each plugin's answer can be checked against
kube-scheduler's on the same snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dra_operator.controllers.scheduler.framework._diagnosis import message
from dra_operator.controllers.scheduler.framework._nodeinfo import Snapshot
from dra_operator.controllers.scheduler.framework._runtime import Framework
from dra_operator.controllers.scheduler.framework._state import CycleState
from dra_operator.controllers.scheduler.framework._status import SUCCESS, Code, Status
from dra_operator.model import Pod


@dataclass(slots=True)
class Evaluation:
    """`filter`: Success or the first rejecting plugin's status, per node; `scores`: each Score
    plugin's normalized score per feasible node, before weight; `total`: the weighted sums.
    `score_status` is the PreScore/Score error, if any (then `scores` and `total` are empty)."""

    prefilter: Status
    filter: dict[str, Status] = field(default_factory=dict)
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    score_status: Status = SUCCESS

    @property
    def feasible(self) -> list[str]:
        return [name for name, status in self.filter.items() if status.ok]


def evaluate(
    framework: Framework, pod: Pod, snapshot: Snapshot, *, state: CycleState | None = None
) -> Evaluation:
    """See the module docstring; `state` may carry what the caller knows before PreFilter."""
    framework.start_cycle(snapshot)
    state = state if state is not None else CycleState()
    nodes = snapshot.node_infos
    result, status, narrowing = framework.run_pre_filter(state, pod, nodes)
    evaluation = Evaluation(prefilter=status)
    if not status.ok:
        return evaluation
    wanted = result.node_names if result is not None else None
    absent = Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]",),
    )
    feasible = []
    for node in nodes:
        if wanted is not None and node.name not in wanted:
            evaluation.filter[node.name] = absent
            continue
        verdict = framework.run_filter(state, pod, node)
        evaluation.filter[node.name] = verdict
        if verdict.ok:
            feasible.append(node)
    if not feasible or not framework.score_plugins:
        return evaluation
    status = framework.run_pre_score(state, pod, feasible)
    if not status.ok:
        evaluation.score_status = status
        return evaluation
    by_plugin = framework.normalized_scores(state, pod, feasible)
    if isinstance(by_plugin, Status):
        evaluation.score_status = Status(Code.ERROR, (message(by_plugin),))
        return evaluation
    evaluation.total = {node.name: 0 for node in feasible}
    for name, scores in by_plugin.items():
        evaluation.scores[name] = {entry.name: entry.score for entry in scores}
        weight = framework.weights[name]
        for entry in scores:
            evaluation.total[entry.name] += entry.score * weight
    return evaluation
