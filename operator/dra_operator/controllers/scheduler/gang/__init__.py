"""Gang scheduling: a PodGroup's pods placed all or none, in one cycle (docs/workloads.md).

`run_cycle` is the pure rule over a gang (`gang_of`) and a `place` function; `PendingClaims`
shows the claims a cycle allocated to the members after; `Gangs` runs it in the live
scheduler and writes the placements only when the whole gang fits.
"""

from dra_operator.controllers.scheduler.gang._cycle import (
    NOT_ENOUGH_PODS,
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
from dra_operator.controllers.scheduler.gang._status import condition_patch

__all__ = [
    "COMPOSITE_NOT_SUPPORTED",
    "NOT_ENOUGH_PODS",
    "TOPOLOGY_NOT_SUPPORTED",
    "Gang",
    "Gangs",
    "GroupWriter",
    "KubeGroupWriter",
    "Outcome",
    "PendingClaims",
    "cannot_be_satisfied",
    "condition_patch",
    "decide_gang",
    "gang_of",
    "no_group",
    "queue_order",
    "reserve",
    "revert",
    "run_cycle",
]
