"""SchedulingGates (PreEnqueue): a pod with `spec.schedulingGates` does not enter the queue.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/schedulinggates. A gated pod is never
scheduled, so none of its claims is allocated either, until the last gate is removed.
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator.controllers.scheduler.framework import SUCCESS, Handle, Status, unresolvable
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.model import Pod

NAME = "SchedulingGates"


class SchedulingGates:
    @property
    def name(self) -> str:
        return NAME

    def pre_enqueue(self, pod: Pod) -> Status:
        gates = pod.spec.scheduling_gates
        if not gates:
            return SUCCESS
        # Go's %v of a []string: "[a b]"
        return unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]").with_plugin(NAME)


def new(args: Mapping[str, object], handle: Handle) -> SchedulingGates:
    check_known(args, "args", ())
    return SchedulingGates()
