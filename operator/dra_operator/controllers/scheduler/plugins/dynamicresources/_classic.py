"""DynamicResources' older paths: classic DRA (1.27-1.31) and 1.30's named resources.

A pod with unallocated classic claims is never placed by the walk alone: its PodSchedulingContext
is published for the drivers (the `_classic` protocol of the scheduler package) and the pod waits
for their answer, with the texts of the server's release. A pod with unallocated v1alpha2 claims
of a structured ResourceClass (1.30) is placed on the first node where `_named` allocates them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dra_operator import errors
from dra_operator.controllers.scheduler._classic import (
    DEALLOCATION_DONE,
    class_problem,
    classic_problems,
    context_problem,
    deallocation_candidate,
    next_step,
)
from dra_operator.controllers.scheduler._decision import (
    ClaimWrite,
    Decision,
    Unschedulable,
    claim_key,
    placement_for,
    reservation,
)
from dra_operator.controllers.scheduler._explain import (
    fit_error,
    prefilter_error,
)
from dra_operator.controllers.scheduler._named import (
    named_claims,
    place_named,
)
from dra_operator.controllers.scheduler._state import Settings, State
from dra_operator.controllers.scheduler.plugins.dynamicresources._prefilter import Claims
from dra_operator.controllers.scheduler.plugins.dynamicresources._walk import place
from dra_operator.model import (
    AllocationResult,
    Node,
    Pod,
    named_devices,
)


def decide_named(
    pod: Pod,
    found: Claims,
    candidates: Sequence[Node],
    node_filter: Callable[[Node], list[str]],
    state: State,
    settings: Settings,
    node_count: int,
) -> Decision:
    """A pod with unallocated 1.30 structured claims: the first node where they all fit."""
    if state.named is None:
        return Unschedulable(
            prefilter_error(node_count, "structured parameters: ResourceSlices are not served")
        )
    claims = named_claims(found.named, state.claims, state.classes, state.named)
    if isinstance(claims, str):
        return Unschedulable(prefilter_error(node_count, claims))
    placed = place_named(candidates, claims, node_filter, state.ledger, state.named, settings.named)
    if isinstance(placed, list):
        return Unschedulable(
            fit_error(len(candidates) if pod.spec.node_name else node_count, placed)
        )
    node_name, named = placed
    writes = [
        ClaimWrite(
            key=claim_key(claim),
            uid=claim.metadata.uid,
            resource_version=claim.metadata.resource_version,
            allocation=AllocationResult(
                devices=named_devices(write.allocation),
                node_selector=write.allocation.available_on_nodes,
                shareable=write.allocation.shareable,
            ),
            named=write,
        )
        for claim, write in zip(found.named, named, strict=True)
    ]
    writes += [reservation(claim) for claim in found.allocated]
    return placement_for(pod, node_name, writes)


def decide_classic(
    pod: Pod,
    found: Claims,
    candidates: Sequence[Node],
    node_filter: Callable[[Node], list[str]],
    state: State,
    settings: Settings,
    node_count: int,
) -> Unschedulable:
    """A pod with unallocated classic claims: publish what the drivers need, or wait."""
    classes = state.class_map()
    context = state.context_of(pod)
    problem = class_problem(found.classic, classes) or context_problem(pod, context)
    if problem is not None:
        return Unschedulable(prefilter_error(node_count, problem))

    def classic_filter(node: Node) -> list[str]:
        return node_filter(node) or classic_problems(node, found.classic, classes, context)

    placed = place(
        candidates,
        found.unallocated,
        classic_filter,
        state,
        settings,
        every_node=not pod.spec.node_name,
        who=f"{pod.metadata.namespace}/{pod.metadata.name}",
    )
    if isinstance(placed, errors.AllocationInputError):
        return Unschedulable(prefilter_error(node_count, str(placed)))
    if isinstance(placed, list):
        message = fit_error(len(candidates) if pod.spec.node_name else node_count, placed)
        handback = deallocation_candidate(pod, found.in_place, candidates, context)
        if handback is not None:
            return Unschedulable(f"{message} {DEALLOCATION_DONE}", classic=handback)
        return Unschedulable(message)

    def passes(node: Node) -> bool:
        """Filter as a whole: the pod's structured claims must fit there too."""
        if classic_filter(node):
            return False
        if not found.unallocated or node.name == placed[0]:
            return True
        alone = place(
            [node], found.unallocated, classic_filter, state, settings, every_node=False, who=""
        )
        return isinstance(alone, tuple)

    passing = [node.name for node in candidates if passes(node)]
    publish = next_step(pod, found.classic, passing, placed[0], context)
    allocate, answer = settings.waiting
    if publish is None:
        return Unschedulable(answer)
    return Unschedulable(allocate, classic=publish)
