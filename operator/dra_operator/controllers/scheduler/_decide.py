"""One scheduling decision, sans I/O: kube-scheduler's cycle from PreFilter to the chosen node.

`decide_pod` reads as one pass over the extension points, kube-scheduler v1.37.2's
`schedulingCycle` (pkg/scheduler/schedule_one.go): DynamicResources' PreFilter
(`plugins.dynamicresources.resolve_claims`: the pod's claims, or the text that fails it), the
framework's PreFilter (`_framework_filter`), then the node walk (`dynamicresources.place`), which
runs per node the framework's Filter, the node-allocatable and extended-resource checks, and
DynamicResources' Filter (the allocator on that node), then Score: the framework's weighted
totals plus DynamicResources' own, the best node winning, ties to the smallest name. Classic
and 1.30 named claims take DynamicResources' older paths. `decide_claim` does the same for a
standalone claim asking for immediate allocation.

Both read the caches through `State` and return a `Placement` (what to write), a `Wait`
(nothing to say yet: a generated claim does not exist, or another decision's allocation of a
shared claim is still being written) or an `Unschedulable` with the FailedScheduling message.
Nothing here writes or awaits, and the only state changed is the decision's memory in `State`
(verdicts, where scored policies start): the caller runs Reserve
(`dynamicresources.reserve`, then the framework's Reserve and Permit on the placement's
`Cycle`), PreBind and Bind, and Unreserve when a later step fails. Each allocator call is
reported to `Settings.metrics` (an observation, not a change of state).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from dra_operator import errors, names
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler._classic import (
    DEALLOCATION_DONE,
    deallocation_candidate,
)
from dra_operator.controllers.scheduler._decision import (
    ClaimWrite,
    Cycle,
    Decision,
    Placement,
    Unschedulable,
    Wait,
    claim_key,
    placement_for,
    reservation,
)
from dra_operator.controllers.scheduler._explain import (
    fit_error,
    prefilter_error,
)
from dra_operator.controllers.scheduler._extended import (
    STALE_CLAIM,
    ExtendedWrite,
    Need,
    need_of,
)
from dra_operator.controllers.scheduler._nodealloc_fit import (
    allocated_by_uid,
    node_allocatable_fit,
)
from dra_operator.controllers.scheduler._state import Settings, State
from dra_operator.controllers.scheduler.framework import (
    CycleState,
    Snapshot,
    Status,
    node_info,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources import (
    Scorer,
    allocated_claims_problem,
    decide_classic,
    decide_named,
    in_flight,
    place,
    resolve_claims,
)
from dra_operator.model import (
    Node,
    Pod,
    ResourceClaim,
)


def _ref(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def handles(pod: Pod, scheduler_names: frozenset[str]) -> bool:
    """Whether the scheduler acts on `pod` at all: ours and unbound, or bound with claims."""
    if pod.status.phase in ("Succeeded", "Failed") or pod.metadata.deletion_timestamp:
        return False
    if pod.spec.node_name:
        return bool(pod.spec.resource_claims)
    return pod.spec.scheduler_name in scheduler_names


def decide_pod(pod: Pod, state: State, settings: Settings) -> Decision:
    """Where `pod` goes and what to write for it; see the module docstring."""
    if state.node_infos.node_of(pod.metadata.uid) is not None and not pod.spec.node_name:
        return None  # bound by us; the watch has not shown it yet
    node_count = len(state.nodes)
    found = resolve_claims(pod, state, settings.features)
    if isinstance(found, Wait):
        return found
    if isinstance(found, str):
        return Unschedulable(prefilter_error(node_count, found))
    if pod.spec.node_name:
        if not (found.allocated or found.unallocated or found.classic or found.named):
            return None
        entry = state.nodes.get(ObjectKey("", pod.spec.node_name))
        if entry is None:
            return Wait(f"node {pod.spec.node_name} is not known yet")
        candidates: Sequence[Node] = [entry.obj]
    else:
        candidates = state.nodes_by_name()
    requests = pod.effective_requests
    need: Need | None = None
    if not pod.spec.node_name and settings.extended_resources:
        need = need_of(pod, requests, state.classes, state.claims)
    node_checks: Callable[[Node], list[str]] | None = None
    scorer: Scorer | None = None
    cycle: Cycle | None = None
    if not pod.spec.node_name:
        checks = _framework_filter(pod, state)
        if isinstance(checks, str):
            return Unschedulable(prefilter_error(node_count, checks))
        node_checks, scorer, cycle = checks

    fit = node_allocatable_fit(pod, state.claims, state.slices, state.node_infos)
    unshareable = fit.sharing_problem() if fit is not None else None

    def node_filter(node: Node) -> list[str]:
        problems = node_checks(node) if node_checks is not None else []
        if unshareable is not None:
            problems.append(unshareable)
        if (elsewhere := allocated_claims_problem(found, node)) is not None:
            problems.append(elsewhere)
        if need is not None and need.stale is not None and not problems:
            problems.append(STALE_CLAIM)
        return problems

    if found.classic:
        return decide_classic(pod, found, candidates, node_filter, state, settings, node_count)
    if found.named:
        return decide_named(pod, found, candidates, node_filter, state, settings, node_count)
    placed = place(
        candidates,
        found.unallocated,
        node_filter,
        state,
        settings,
        every_node=not pod.spec.node_name,
        who=_ref(pod),
        extended_for=(lambda node: need.on_node(node, requests)[1]) if need is not None else None,
        scorer=scorer,
        percentage=cycle.framework.percentage_of_nodes_to_score if cycle is not None else None,
        fits=(
            (lambda node, results: fit.problems(node, allocated_by_uid(found.unallocated, results)))
            if fit is not None
            else None
        ),
    )
    if isinstance(placed, errors.AllocationInputError):
        return Unschedulable(prefilter_error(node_count, str(placed)))
    if isinstance(placed, list):
        message = fit_error(len(candidates) if pod.spec.node_name else node_count, placed)
        handback = deallocation_candidate(pod, found.in_place, candidates, state.context_of(pod))
        if handback is not None:
            return Unschedulable(f"{message} {DEALLOCATION_DONE}", classic=handback)
        return Unschedulable(message, stale=need.stale if need is not None else None)
    node_name, results, extended = placed
    special: ExtendedWrite | None = None
    if extended is not None:
        special = ExtendedWrite(
            claim=extended.claim, allocation=results[-1], mappings=extended.mappings
        )
        results = results[:-1]
    writes = [
        ClaimWrite(
            key=claim_key(claim),
            uid=claim.metadata.uid,
            resource_version=claim.metadata.resource_version,
            allocation=result,
        )
        for claim, result in zip(found.unallocated, results, strict=True)
    ]
    writes += [reservation(claim) for claim in found.allocated]
    placement = placement_for(pod, node_name, writes, special, cycle)
    if fit is not None:  # the chosen node passed `fits`: its statuses are computed again
        chosen = state.nodes.get(ObjectKey("", node_name))
        allocated = allocated_by_uid(found.unallocated, results)
        if chosen is not None:
            statuses = fit.statuses(chosen.obj, allocated)
            placement = dataclasses.replace(placement, node_allocatable=statuses)
    return placement


def _framework_filter(
    pod: Pod, state: State
) -> tuple[Callable[[Node], list[str]], Scorer | None, Cycle] | str:
    """The framework's PreFilter for an unbound pod, then, on the same CycleState, its Filter
    as a node's reasons, its Score plugins as a `Scorer` (None without any) and the `Cycle`
    that Reserve, Permit and PreBind continue; the PreFilter message when it rejects the pod.
    Extended resources a DeviceClass serves are NodeResourcesFit's to leave to the allocation
    (the Handle's `extended_resource_classes`)."""
    framework = state.framework_for(pod)
    snapshot: Snapshot = state.node_infos.snapshot()
    framework.start_cycle(snapshot)
    cycle = CycleState()
    result, status, narrowing = framework.run_pre_filter(cycle, pod, snapshot)
    if not status.ok:
        return ", ".join(status.reasons)
    wanted = result.node_names if result is not None else None
    outside = [f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]"]

    def problems(node: Node) -> list[str]:
        if wanted is not None and node.name not in wanted:
            return list(outside)
        info = snapshot.get(node.name)
        verdict = framework.run_filter_with_nominated_pods(
            cycle, pod, info if info is not None else node_info(node)
        )
        return [] if verdict.ok else list(verdict.reasons)

    def scores(names: Sequence[str]) -> Mapping[str, int]:
        if len(names) < 2:  # upstream does not score a single feasible node
            return {}
        infos = [info for name in names if (info := snapshot.get(name)) is not None]
        if not framework.run_pre_score(cycle, pod, infos).ok:
            return {}
        found = framework.run_score_totals(cycle, pod, infos)
        return {} if isinstance(found, Status) else found

    scorer = scores if framework.score_plugins else None
    return problems, scorer, Cycle(framework, cycle, pod)


def decide_claim(claim: ResourceClaim, state: State, settings: Settings) -> Decision:
    """Allocate a standalone claim annotated for immediate allocation, without a consumer."""
    meta = claim.metadata
    if (
        meta.annotations.get(names.ALLOCATE_ANNOTATION) != names.ALLOCATE_IMMEDIATE
        or meta.deletion_timestamp is not None
        or claim.status.allocation is not None
    ):
        return None
    if state.ledger.is_in_flight(meta.uid):
        return in_flight(claim)
    wanted = meta.annotations.get(names.NODE_ANNOTATION)
    if wanted:
        entry = state.nodes.get(ObjectKey("", wanted))
        if entry is None:
            return Unschedulable(f"node {wanted} not found")
        candidates = [entry.obj]
    else:
        candidates = state.nodes_by_name()
    placed = place(
        candidates,
        [claim],
        lambda node: [],
        state,
        settings,
        every_node=not wanted,
        who=str(claim_key(claim)),
    )
    if isinstance(placed, errors.AllocationInputError):
        return Unschedulable(str(placed))
    if isinstance(placed, list):
        return Unschedulable(fit_error(len(candidates), placed))
    node_name, (allocation,), _ = placed
    write = ClaimWrite(
        key=claim_key(claim),
        uid=meta.uid,
        resource_version=meta.resource_version,
        allocation=allocation,
    )
    return Placement(node=node_name, claims=(write,))
