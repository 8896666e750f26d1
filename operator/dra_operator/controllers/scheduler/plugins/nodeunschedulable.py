"""NodeUnschedulable (Filter): a cordoned node takes only pods that tolerate the cordon.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/nodeunschedulable. `spec.unschedulable`
is checked as the taint `node.kubernetes.io/unschedulable:NoSchedule`, so a pod tolerating that
taint still fits. Upstream's PreFilter only says Skip for resize-deferred pods (an alpha gate
that is off), so it is not implemented here.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    Status,
    unresolvable,
)
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.model import Pod, Taint, tolerates_node_taint

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
_REJECT = unresolvable(ERR_REASON_UNSCHEDULABLE).with_plugin(NAME)


class NodeUnschedulable:
    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable:
        return pod.spec.tolerations

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if not node.node.unschedulable:
            return SUCCESS
        tolerated = any(tolerates_node_taint(t, UNSCHEDULABLE_TAINT) for t in pod.spec.tolerations)
        return SUCCESS if tolerated else _REJECT


def new(args: Mapping[str, object], handle: Handle) -> NodeUnschedulable:
    check_known(args, "args", ())
    return NodeUnschedulable()
