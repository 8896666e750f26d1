"""Gang scheduling: a PodGroup's pods placed all or none, in one cycle (docs/workloads.md).

`run_cycle` is the pure rule over a gang (`gang_of`) and a `place` function; `PendingClaims`
shows the claims a cycle allocated to the members after; `Gangs` runs it in the live
scheduler and writes the placements only when the whole gang fits. A cycle that fails runs
PodGroupPostFilter (`dynamic_resources`, `pod_group_preemption`, `chain`).
"""

from dra_operator.controllers.scheduler.gang._cycle import (
    NOT_ENOUGH_PODS,
    PERMIT_WAITING,
    Outcome,
    cannot_be_satisfied,
    no_group,
    run_cycle,
)
from dra_operator.controllers.scheduler.gang._decide_gang import decide_gang, reserve, revert
from dra_operator.controllers.scheduler.gang._kube import KubeGroupWriter
from dra_operator.controllers.scheduler.gang._live import (
    COMPOSITE_NOT_SUPPORTED,
    TOPOLOGY_NOT_SUPPORTED,
    Gangs,
    GroupWriter,
)
from dra_operator.controllers.scheduler.gang._members import Gang, gang_of, queue_order
from dra_operator.controllers.scheduler.gang._overlay import PendingClaims
from dra_operator.controllers.scheduler.gang._postfilter import (
    Action,
    ClaimAction,
    Status,
    Tried,
    chain,
    dynamic_resources,
    group_message,
    pod_group_preemption,
)
from dra_operator.controllers.scheduler.gang._status import condition_patch

__all__ = [
    "COMPOSITE_NOT_SUPPORTED",
    "NOT_ENOUGH_PODS",
    "PERMIT_WAITING",
    "TOPOLOGY_NOT_SUPPORTED",
    "Action",
    "ClaimAction",
    "Gang",
    "Gangs",
    "GroupWriter",
    "KubeGroupWriter",
    "Outcome",
    "PendingClaims",
    "Status",
    "Tried",
    "cannot_be_satisfied",
    "chain",
    "condition_patch",
    "decide_gang",
    "dynamic_resources",
    "gang_of",
    "group_message",
    "no_group",
    "pod_group_preemption",
    "queue_order",
    "reserve",
    "revert",
    "run_cycle",
]
