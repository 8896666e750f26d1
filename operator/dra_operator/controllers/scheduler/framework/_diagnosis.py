"""Why a pod fits nowhere: each node's Filter status, and the FailedScheduling text built from them.

kube-scheduler v1.37.2 (pkg/scheduler/framework/types.go, `Diagnosis`, `NodeToStatus`,
`FitError.Error`): nodes a PreFilter result left out, or every node when PreFilter rejected the
pod, share one *absent* status; the nodes Filter rejected have their own. The message is
`0/<all nodes> nodes are available:` followed either by the PreFilter message, or by the sorted
`<count> <reason>` histogram over every status's reasons (absent nodes counted with the absent
status), and then by the PostFilter message if PostFilter ran.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from dra_operator.controllers.scheduler.framework._status import Code, Status

NO_NODE_AVAILABLE = "0/{} nodes are available"
NO_NODES = "no nodes available to schedule pods"
"""The error when the snapshot has no node at all (upstream's `ErrNoNodesAvailable`)."""


class NodeToStatus(Mapping[str, Status]):
    """Every node's status: the explicit ones, else the absent one (UnschedulableAndUnresolvable
    unless PreFilter said otherwise). Iterates over every node of the snapshot."""

    __slots__ = ("absent", "explicit", "nodes")

    def __init__(self, nodes: Sequence[str]) -> None:
        self.nodes = nodes
        self.explicit: dict[str, Status] = {}
        self.absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def __getitem__(self, node: str) -> Status:
        return self.explicit.get(node, self.absent)

    def __iter__(self) -> Iterator[str]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)


@dataclass(slots=True)
class Diagnosis:
    """What a failed cycle learned; `unschedulable_plugins` queue the pod again on their events."""

    statuses: NodeToStatus
    unschedulable_plugins: set[str] = field(default_factory=set)
    prefilter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if status.plugin and status.rejects:
            self.unschedulable_plugins.add(status.plugin)


def message(status: Status) -> str:
    """Upstream's `Status.Message`: the reasons joined by ", "."""
    return ", ".join(status.reasons)


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """The FailedScheduling text; see the module docstring."""
    text = NO_NODE_AVAILABLE.format(num_all_nodes) + ":"
    if diagnosis.prefilter_msg:
        text += f" {diagnosis.prefilter_msg}."
    else:
        histogram: Counter[str] = Counter()
        statuses = diagnosis.statuses
        for status in statuses.explicit.values():
            histogram.update(status.reasons)
        absent = num_all_nodes - len(statuses.explicit)
        if absent > 0:
            for reason in statuses.absent.reasons:
                histogram[reason] += absent
        if histogram:
            text += " " + ", ".join(sorted(f"{n} {r}" for r, n in histogram.items())) + "."
    if diagnosis.post_filter_msg:
        text += f" {diagnosis.post_filter_msg}"
    return text
