"""NodeName (PreFilter, Filter): a pod that names its node fits that node only.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/nodename. PreFilter narrows the nodes
to the named one, so the others are not even filtered.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    PreFilterResult,
    Status,
    unresolvable,
)
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.model import Pod

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"

_REJECT = unresolvable(ERR_REASON).with_plugin(NAME)


class NodeName:
    @property
    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        if pod.spec.node_name:
            return PreFilterResult(frozenset({pod.spec.node_name})), SUCCESS
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def sign_pod(self, pod: Pod) -> Hashable:
        return pod.spec.node_name

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        wanted = pod.spec.node_name
        return SUCCESS if not wanted or wanted == node.name else _REJECT


def new(args: Mapping[str, object], handle: Handle) -> NodeName:
    check_known(args, "args", ())
    return NodeName()
