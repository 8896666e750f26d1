"""DynamicResources' Filter on one node: the allocator against the ledger's snapshot.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/dynamicresources (Filter): an allocated
claim's node selector must match the node (`NOT_AVAILABLE_ON_NODE`), and so must a device that
skips node operations (the node declares `DRAOptionalNodeOperations`); the unallocated claims
are allocated on the node by the structured-parameters allocator over the node's slices and the
cluster-wide ones, with the devices the ledger holds (in flight included) counted as taken.
"Does not fit" is the allocator's `Explanation`, which `_explain.claim_failure` turns into the
node's reason. The node walk (`_walk`) calls these; preemption's simulation calls `allocate_on`
with the victims' devices freed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence, Set

from dra_operator import errors
from dra_operator.allocator import (
    Explanation,
    allocate,
)
from dra_operator.allocator import Node as AllocatorNode
from dra_operator.cluster import SLICES_BY_NODE
from dra_operator.controllers.scheduler._explain import (
    NOT_AVAILABLE_ON_NODE,
    claim_failure,
    renamed_reason,
)
from dra_operator.controllers.scheduler._metrics import record_attempt
from dra_operator.controllers.scheduler._state import Settings, State
from dra_operator.controllers.scheduler._verdicts import (
    Rejected,
    Verdict,
    shape_of,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources._prefilter import Claims
from dra_operator.hooks import HookPolicy
from dra_operator.model import (
    AllocationResult,
    DeviceClass,
    Node,
    ResourceClaim,
    node_matches,
)

OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"
"""The node feature (`status.declaredFeatures`) a kubelet declares when it can skip the node
operations an allocated device's `skipNodeOperations` lists (1.37, alpha)."""


def allocated_claims_problem(found: Claims, node: Node) -> str | None:
    """Filter for the claims allocated already: their node selectors, and the node operations
    their devices skip; None when the node passes."""
    if any(not node_matches(node.name, node.labels, s) for s in found.selectors) or (
        found.skips_node_operations and OPTIONAL_NODE_OPERATIONS not in node.declared_features
    ):
        return NOT_AVAILABLE_ON_NODE
    return None


def miss_reason(
    node: Node,
    miss: Verdict | None,
    names: tuple[str, ...],
    claims: Sequence[ResourceClaim],
    classes: Mapping[str, DeviceClass],
    state: State,
    settings: Settings,
) -> str | errors.AllocationInputError:
    """Why a node known to miss does not fit these claims: the kept reason naming these
    claims, or, where it cannot be renamed (or was not kept), the allocator's answer now."""
    if state.verdicts is not None and miss is None:
        miss = state.verdicts.get(node.name, shape_of(claims, settings.policy, settings.budget))
    if isinstance(miss, Rejected):
        reason = renamed_reason(miss.reason, miss.names, names)
        if reason is not None:
            return reason
    outcome = allocate_on(node, claims, classes, state, settings)
    if isinstance(outcome, Explanation):
        return claim_failure(outcome)
    if isinstance(outcome, errors.AllocationInputError):
        return outcome
    raise errors.TerminalError(f"node {node.name}: known not to fit, yet it fits")


def allocate_on(
    node: Node,
    claims: Sequence[ResourceClaim],
    classes: Mapping[str, DeviceClass],
    state: State,
    settings: Settings,
    *,
    freed: Set[str] = frozenset(),
) -> tuple[tuple[AllocationResult, ...], float] | Explanation | errors.AllocationInputError:
    """The allocation of `claims` on `node` with the policy's score of it, the allocator's
    explanation why not, or a fatal input error. The devices of claims `freed` (UIDs) count
    as free (preemption's simulation)."""
    if not claims:
        return (), 0.0
    slices = [
        state.tainted.view(entry)
        for value in (node.name, None)
        for entry in state.slices.by_index(SLICES_BY_NODE, value)
    ]
    pools = {(s.driver, s.pool.name) for s in slices}
    policy = settings.policy
    if isinstance(policy, HookPolicy):
        policy = policy.for_node(node.name)  # hooks see which node is being tried
    started = time.perf_counter()
    try:
        answer = allocate(
            claims,
            classes=classes,
            slices=slices,
            node=AllocatorNode(
                name=node.name,
                labels=node.labels,
                declared_features=frozenset(node.declared_features),
            ),
            features=settings.features,
            selectors=settings.selectors,
            ledger=(
                state.ledger.snapshot_without(freed, pools)
                if freed
                else state.ledger.snapshot(pools)
            ),
            policy=policy,
            budget=settings.budget,
            selection=settings.selection,
        )
    except errors.AllocationInputError as exc:
        record_attempt(settings.metrics, started, exc)
        return exc
    record_attempt(settings.metrics, started, answer)
    if answer.results is None:
        assert answer.explanation is not None
        return answer.explanation
    return answer.results, answer.score
