"""DynamicResources: kube-scheduler v1.37.2's DRA plugin, one module per extension point.

Upstream's plugin (pkg/scheduler/framework/plugins/dynamicresources) and where each of its
extension points is here:

* PreEnqueue: a pod whose generated claim does not exist yet is not decided
  (`_prefilter.resolve_claims` answers a `Wait`, and the claim's creation queues the pod again).
* PreFilter: `_prefilter.resolve_claims`, the pod's claims sorted into `Claims` or the text that
  fails the pod.
* Filter: `_filter`, an allocated claim's node selector and the allocator on the node against
  the ledger's snapshot; run node by node by `_walk.place` after the framework's own Filter.
* PostFilter: upstream deallocates a pod's claims allocated for a node it could not use; here
  no claim is allocated before a node is chosen, so there is nothing to undo, except for classic
  claims, whose deallocation is asked for through the PodSchedulingContext (`_classic`).
* Score: `_score`, the AllocationPolicy's score of a node's allocation, weight 2.
* Reserve and Unreserve: `reserve` below, the allocation held in the ledger as in flight until
  the write is seen, and rolled back by the scheduler's writer when a write fails.
* PreBind: the claims' `status.allocation` and `reservedFor` (the `ClaimWrite`s of a
  `Placement`), written by the scheduler's writer.

Every function is pure over the scheduler's `State` and `Settings` except `reserve`, which
changes the ledger and the NodeInfo cache, as upstream's Reserve changes its assume cache.
"""

from __future__ import annotations

from dra_operator.controllers.scheduler._decision import Placement
from dra_operator.controllers.scheduler._state import State
from dra_operator.controllers.scheduler.plugins.dynamicresources._classic import (
    decide_classic,
    decide_named,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources._filter import (
    OPTIONAL_NODE_OPERATIONS,
    allocate_on,
    allocated_claims_problem,
    miss_reason,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources._prefilter import (
    MAX_RESERVED_FOR,
    Claims,
    claims_to_allocate,
    in_flight,
    resolve_claims,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources._score import (
    DYNAMIC_RESOURCES_WEIGHT,
    Scorer,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources._walk import (
    nodes_to_score,
    place,
)


def reserve(placement: Placement, state: State) -> None:
    """Reserve: hold the placement's allocations in the ledger as in flight (so the next
    decision cannot hand their devices out) and assume the pod on its node."""
    for write in placement.claims:
        if write.allocation is not None:
            state.ledger.reserve(write.uid, write.allocation)
    if placement.extended is not None:
        state.ledger.reserve(placement.extended.uid, placement.extended.allocation)
    if placement.bind and placement.pod is not None:
        pod = state.pods.get(placement.pod)
        if pod is not None:
            state.node_infos.assume(pod.obj, placement.node)


__all__ = [
    "DYNAMIC_RESOURCES_WEIGHT",
    "MAX_RESERVED_FOR",
    "OPTIONAL_NODE_OPERATIONS",
    "Claims",
    "Scorer",
    "allocate_on",
    "allocated_claims_problem",
    "claims_to_allocate",
    "decide_classic",
    "decide_named",
    "in_flight",
    "miss_reason",
    "nodes_to_score",
    "place",
    "reserve",
    "resolve_claims",
]
