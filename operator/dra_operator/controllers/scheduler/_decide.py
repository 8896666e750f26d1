"""One scheduling decision, sans I/O: kube-scheduler's cycle from PreFilter to Reserve.

`decide_pod` resolves the pod's claims (upstream-dra.md §3.3, §3.5), filters the nodes (§3.6 plus
the scheduling framework's PreFilter and Filter plugins, `_profile`, on the NodeInfo cache), runs
the allocator for the claims still unallocated on the nodes left (`_place`: for FirstFit
without framework scores until the first node by name that fits, else on up to
`nodes_to_score` fitting nodes; nodes whose `Verdicts` are known are not asked again), and picks
the node with the best sum of the policy's score and the framework's weighted Score total,
ties to the smallest name. `decide_claim` does the same
for a standalone claim asking for immediate allocation. Both read the caches through `State`
and return a `Placement` (what to write), a `Wait` (nothing to say yet: a generated claim does
not exist, or another decision's allocation of a shared claim is still being written) or an
`Unschedulable` with the FailedScheduling message. Nothing here writes or awaits, and the only
state changed is the decision's memory in `State` (verdicts, where scored policies start):
the caller reserves the placement in the ledger before the next decision (rule 8), and runs
the framework's Reserve, Permit, PreBind and Unreserve on the `Cycle` a pod's placement
carries. Each allocator call is reported to `Settings.metrics` (an observation, not a change
of state). On a 1.30 server, v1alpha2 claims of a structured ResourceClass are placed by `_named`.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field

from dra_operator import errors, names
from dra_operator.allocator import (
    Budget,
    Explanation,
    Features,
    FirstFit,
    NamedAllocator,
    Policy,
    SelectionMemo,
    SelectorEvaluator,
    allocate,
)
from dra_operator.allocator import Node as AllocatorNode
from dra_operator.cluster import (
    SLICES_BY_NODE,
    SLICES_BY_POOL,
    DeviceLedger,
    ObjectKey,
    PoolKey,
    Store,
)
from dra_operator.controllers.scheduler._classes_handle import ClassesHandle
from dra_operator.controllers.scheduler._classic import (
    DEALLOCATION_DONE,
    ClassicWrite,
    PendingClaim,
    class_problem,
    classic_problems,
    context_problem,
    deallocation_candidate,
    next_step,
    v1alpha2_problem,
    waiting_texts,
)
from dra_operator.controllers.scheduler._explain import (
    NOT_AVAILABLE_ON_NODE,
    claim_failure,
    fit_error,
    prefilter_error,
    renamed_reason,
)
from dra_operator.controllers.scheduler._extended import (
    STALE_CLAIM,
    ExtendedWrite,
    Need,
    need_of,
)
from dra_operator.controllers.scheduler._metrics import SchedulerMetrics, record_attempt
from dra_operator.controllers.scheduler._named import (
    NamedInventory,
    NamedWrite,
    named_claims,
    place_named,
)
from dra_operator.controllers.scheduler._nodealloc_fit import (
    allocated_by_uid,
    node_allocatable_fit,
)
from dra_operator.controllers.scheduler._profile import default_framework
from dra_operator.controllers.scheduler._taints import TaintedSlices
from dra_operator.controllers.scheduler._verdicts import (
    Fits,
    Rejected,
    Verdict,
    Verdicts,
    shape_of,
)
from dra_operator.controllers.scheduler.framework import (
    CycleState,
    Framework,
    NodeInfoCache,
    Snapshot,
    Status,
    node_info,
)
from dra_operator.hooks import HookPolicy
from dra_operator.model import (
    AllocationResult,
    Device,
    DeviceClass,
    ExtendedClaim,
    Node,
    NodeAllocatableClaimStatus,
    NodeSelector,
    Pod,
    PodSchedulingContext,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceSlice,
    UnresolvedClaim,
    is_for_pod,
    named_devices,
    node_matches,
    resolve_claim,
    tolerates,
)
from dra_operator.observability import LogEvent, get_logger

MAX_RESERVED_FOR = 256
"""`status.reservedFor` holds at most this many consumers (API validation)."""

_MIN_NODES_TO_SCORE = 100
_MIN_PERCENTAGE_TO_SCORE = 5

_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")

OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"
"""The node feature (`status.declaredFeatures`) a kubelet declares when it can skip the node
operations an allocated device's `skipNodeOperations` lists (1.37, alpha)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What a decision needs besides the caches."""

    features: Features
    policy: Policy
    selectors: SelectorEvaluator
    budget: Budget = field(default_factory=Budget)
    metrics: SchedulerMetrics | None = None
    selection: SelectionMemo = field(default_factory=SelectionMemo)  # across decisions
    extended_resources: bool = True  # DRAExtendedResource: DRA serves mapped extended resources
    percentage_to_score: int = 0  # of the nodes, for scored policies; 0: adaptive, as upstream
    named: NamedAllocator = field(default_factory=NamedAllocator)  # 1.30's named resources
    waiting: tuple[str, str] = waiting_texts(37)  # the server's texts for classic waits


@dataclass(slots=True, kw_only=True)
class State:
    """The caches a decision reads (the stores are built with the cluster indexers).

    Slices are read through `tainted`, which adds the taints of DeviceTaintRules when the
    server has them in effect.
    """

    pods: Store[Pod]
    claims: Store[ResourceClaim]
    classes: Store[DeviceClass]
    slices: Store[ResourceSlice]
    nodes: Store[Node]
    ledger: DeviceLedger
    node_infos: NodeInfoCache
    contexts: Store[PodSchedulingContext] | None = None  # served only with classic DRA (1.31)
    named: NamedInventory | None = None  # 1.30's slices and parameters (v1alpha2)
    tainted: TaintedSlices = field(default_factory=TaintedSlices)
    verdicts: Verdicts | None = None  # None: ask the allocator on every node, every time
    score_start: int = 0  # where the next scored decision starts looking (upstream's rotation)
    framework: Framework | None = None  # None: the default profile over `classes`
    profiles: Mapping[str, Framework] = field(default_factory=dict)  # by schedulerName

    def __post_init__(self) -> None:
        if self.framework is None:
            classes = self.classes
            self.framework = default_framework(
                handle=ClassesHandle(lambda: (entry.obj for entry in classes))
            )

    def framework_for(self, pod: Pod) -> Framework:
        """The framework of the profile named by the pod's `schedulerName`, else the default."""
        found = self.profiles.get(pod.spec.scheduler_name, self.framework)
        assert found is not None  # set in __post_init__
        return found

    def nodes_by_name(self) -> list[Node]:
        """Every node, sorted by name (kept sorted between node changes with `verdicts`)."""
        if self.verdicts is not None:
            return self.verdicts.nodes_by_name(self.nodes)
        return [entry.obj for entry in sorted(self.nodes, key=lambda e: e.key.name)]

    def context_of(self, pod: Pod) -> PodSchedulingContext | None:
        """The PodSchedulingContext named like `pod` (classic DRA), if any."""
        if self.contexts is None:
            return None
        entry = self.contexts.get(ObjectKey(pod.metadata.namespace, pod.metadata.name))
        return entry.obj if entry is not None else None

    def class_map(self) -> dict[str, DeviceClass]:
        """Classes by name, built once per decision (not once per node)."""
        return {entry.obj.metadata.name: entry.obj for entry in self.classes}


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimWrite:
    """One claim of a placement: allocate it (with our finalizer first) and/or reserve it.

    `resource_version` is the version the decision read: the precondition of the first write.
    """

    key: ObjectKey
    uid: str
    resource_version: str
    allocation: AllocationResult | None  # None: already allocated, only reserve
    named: NamedWrite | None = None  # 1.30: `allocation` as written (the ledger reads the other)


@dataclass(frozen=True, slots=True)
class Cycle:
    """The framework's cycle of a placed pod, carried to Reserve, Permit and PreBind (which the
    scheduler runs: they change state or write) and to Unreserve when a later step fails."""

    framework: Framework
    state: CycleState
    pod: Pod


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """The decision: node, claim writes, and whether the pod still has to be bound."""

    node: str
    claims: tuple[ClaimWrite, ...]
    pod: ObjectKey | None = None  # None for a claim allocated without a consumer
    pod_uid: str = ""
    consumer: ResourceClaimConsumerReference | None = None
    bind: bool = False
    extended: ExtendedWrite | None = None  # the special claim for extended resources
    cycle: Cycle | None = field(default=None, compare=False)  # None: a bound pod, a claim
    node_allocatable: tuple[NodeAllocatableClaimStatus, ...] = ()  # PreBind's pod status


@dataclass(frozen=True, slots=True)
class Wait:
    """Not decidable yet and not worth an event; an event on the cause queues it again."""

    reason: str


@dataclass(frozen=True, slots=True)
class Unschedulable:
    """No node fits; `message` is the FailedScheduling text."""

    message: str
    stale: ResourceClaim | None = None  # an earlier attempt's special claim, to be deleted
    classic: ClassicWrite | None = None  # classic DRA: written before the event (_classic)


Decision = Placement | Wait | Unschedulable | None  # None: nothing to do

_log = get_logger("dra_operator.controllers.scheduler")
_levels = logging.getLogger("dra_operator.controllers.scheduler")  # stdlib: cached checks


def _ref(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def consumer_of(pod: Pod) -> ResourceClaimConsumerReference:
    """The `reservedFor` entry of a pod (upstream's `BindTo` without PodGroups)."""
    return ResourceClaimConsumerReference(
        resource="pods", name=pod.metadata.name, uid=pod.metadata.uid
    )


def handles(pod: Pod, scheduler_names: frozenset[str]) -> bool:
    """Whether the scheduler acts on `pod` at all: ours and unbound, or bound with claims."""
    if pod.status.phase in ("Succeeded", "Failed") or pod.metadata.deletion_timestamp:
        return False
    if pod.spec.node_name:
        return bool(pod.spec.resource_claims)
    return pod.spec.scheduler_name in scheduler_names


@dataclass(slots=True)
class _Claims:
    allocated: list[ResourceClaim] = field(default_factory=list)  # need reservation
    selectors: list[NodeSelector] = field(default_factory=list)  # of all allocated claims
    unallocated: list[ResourceClaim] = field(default_factory=list)
    skips_node_operations: bool = False  # an allocated claim's device skips node operations
    classic: list[PendingClaim] = field(default_factory=list)  # unallocated; a driver allocates
    named: list[ResourceClaim] = field(default_factory=list)  # unallocated; 1.30 structured
    in_place: list[ResourceClaim] = field(default_factory=list)  # every allocated claim


def decide_pod(pod: Pod, state: State, settings: Settings) -> Decision:
    """Where `pod` goes and what to write for it; see the module docstring."""
    if state.node_infos.node_of(pod.metadata.uid) is not None and not pod.spec.node_name:
        return None  # bound by us; the watch has not shown it yet
    node_count = len(state.nodes)
    found = _resolve_claims(pod, state, settings.features)
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
        if any(not node_matches(node.name, node.labels, s) for s in found.selectors) or (
            found.skips_node_operations and OPTIONAL_NODE_OPERATIONS not in node.declared_features
        ):
            problems.append(NOT_AVAILABLE_ON_NODE)
        if need is not None and need.stale is not None and not problems:
            problems.append(STALE_CLAIM)
        return problems

    if found.classic:
        return _decide_classic(pod, found, candidates, node_filter, state, settings, node_count)
    if found.named:
        return _decide_named(pod, found, candidates, node_filter, state, settings, node_count)
    placed = _place(
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
            key=_key(claim),
            uid=claim.metadata.uid,
            resource_version=claim.metadata.resource_version,
            allocation=result,
        )
        for claim, result in zip(found.unallocated, results, strict=True)
    ]
    writes += [_reservation(claim) for claim in found.allocated]
    placement = _placement(pod, node_name, writes, special, cycle)
    if fit is not None:  # the chosen node passed `fits`: its statuses are computed again
        chosen = state.nodes.get(ObjectKey("", node_name))
        allocated = allocated_by_uid(found.unallocated, results)
        if chosen is not None:
            statuses = fit.statuses(chosen.obj, allocated)
            placement = dataclasses.replace(placement, node_allocatable=statuses)
    return placement


Scorer = Callable[[Sequence[str]], Mapping[str, int]]
"""The framework's weighted Score totals of the nodes named (PreScore, Score, NormalizeScore)."""


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


def _placement(
    pod: Pod,
    node: str,
    writes: list[ClaimWrite],
    extended: ExtendedWrite | None = None,
    cycle: Cycle | None = None,
) -> Placement:
    return Placement(
        node=node,
        claims=tuple(writes),
        pod=ObjectKey(pod.metadata.namespace, pod.metadata.name),
        pod_uid=pod.metadata.uid,
        consumer=consumer_of(pod),
        bind=not pod.spec.node_name,
        extended=extended,
        cycle=cycle,
    )


def _decide_named(
    pod: Pod,
    found: _Claims,
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
            key=_key(claim),
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
    writes += [_reservation(claim) for claim in found.allocated]
    return _placement(pod, node_name, writes)


def _reservation(claim: ResourceClaim) -> ClaimWrite:
    """The write that only adds the pod to an allocated claim's `reservedFor`."""
    return ClaimWrite(
        key=_key(claim),
        uid=claim.metadata.uid,
        resource_version=claim.metadata.resource_version,
        allocation=None,
    )


def _decide_classic(
    pod: Pod,
    found: _Claims,
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

    placed = _place(
        candidates,
        found.unallocated,
        classic_filter,
        state,
        settings,
        every_node=not pod.spec.node_name,
        who=_ref(pod),
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
        alone = _place(
            [node], found.unallocated, classic_filter, state, settings, every_node=False, who=""
        )
        return isinstance(alone, tuple)

    passing = [node.name for node in candidates if passes(node)]
    publish = next_step(pod, found.classic, passing, placed[0], context)
    allocate, answer = settings.waiting
    if publish is None:
        return Unschedulable(answer)
    return Unschedulable(allocate, classic=publish)


def claims_to_allocate(pod: Pod, state: State, features: Features) -> list[ResourceClaim]:
    """The claims a decision for `pod` would allocate now (none when it would not decide)."""
    found = _resolve_claims(pod, state, features)
    return found.unallocated if isinstance(found, _Claims) else []


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
        return Wait(f"resource claim {_key(claim)} is in the process of being allocated")
    wanted = meta.annotations.get(names.NODE_ANNOTATION)
    if wanted:
        entry = state.nodes.get(ObjectKey("", wanted))
        if entry is None:
            return Unschedulable(f"node {wanted} not found")
        candidates = [entry.obj]
    else:
        candidates = state.nodes_by_name()
    placed = _place(
        candidates,
        [claim],
        lambda node: [],
        state,
        settings,
        every_node=not wanted,
        who=str(_key(claim)),
    )
    if isinstance(placed, errors.AllocationInputError):
        return Unschedulable(str(placed))
    if isinstance(placed, list):
        return Unschedulable(fit_error(len(candidates), placed))
    node_name, (allocation,), _ = placed
    write = ClaimWrite(
        key=_key(claim), uid=meta.uid, resource_version=meta.resource_version, allocation=allocation
    )
    return Placement(node=node_name, claims=(write,))


def _key(claim: ResourceClaim) -> ObjectKey:
    return ObjectKey(claim.metadata.namespace, claim.metadata.name)


def _resolve_claims(pod: Pod, state: State, features: Features) -> _Claims | Wait | str:
    """The pod's claims by what they need, a reason to wait, or a PreFilter failure text."""
    meta = pod.metadata
    found = _Claims()
    seen: set[str] = set()
    for entry in pod.spec.resource_claims:
        pod_claim = entry.name
        resolved = resolve_claim(pod, entry)
        if isinstance(resolved, UnresolvedClaim):
            return Wait(resolved.message) if resolved.not_created else resolved.message
        name, check_owner = resolved.name, resolved.must_check_owner
        if name is None:
            continue  # intentionally not created
        cached = state.claims.get(ObjectKey(meta.namespace, name))
        if cached is None:
            # A generated claim may just not be in the cache yet (the claims controller wrote
            # it); a claim the pod names itself is reported, as upstream's PreFilter does.
            message = f'resourceclaim "{name}" not found'
            return Wait(message) if check_owner else message
        claim = cached.obj
        if claim.metadata.uid in seen:
            continue  # two pod claim entries naming one claim: allocate and reserve it once
        seen.add(claim.metadata.uid)
        problem = _claim_problem(pod, claim, check_owner, state, features)
        if problem is not None:
            return problem
        allocation = claim.status.allocation
        if allocation is None:
            if claim.resource_class_name:  # v1alpha2 (1.27-1.30): the class says who allocates
                resource_class = _resource_class(state, claim)
                problem = v1alpha2_problem(claim, resource_class)
                if problem is not None:
                    return problem
                if resource_class is not None and not resource_class.classic_driver:
                    if state.ledger.is_in_flight(claim.metadata.uid):
                        return Wait(
                            f"resource claim {_key(claim)} is in the process of being allocated"
                        )
                    found.named.append(claim)
                    continue
            if claim.is_classic or claim.resource_class_name:
                found.classic.append(PendingClaim(pod_claim, claim))
                continue
            if state.ledger.is_in_flight(claim.metadata.uid):
                return Wait(f"resource claim {_key(claim)} is in the process of being allocated")
            found.unallocated.append(claim)
            continue
        found.in_place.append(claim)
        if allocation.node_selector is not None:
            found.selectors.append(allocation.node_selector)
        if features.since_137 and any(r.skip_node_operations for r in allocation.devices.results):
            found.skips_node_operations = True  # 1.37's Filter; 1.36 has no such field
        if not any(ref.uid == meta.uid for ref in claim.status.reserved_for):
            found.allocated.append(claim)
    return found


def _resource_class(state: State, claim: ResourceClaim) -> DeviceClass | None:
    entry = state.classes.get(ObjectKey("", claim.resource_class_name))
    return entry.obj if entry is not None else None


def _claim_problem(
    pod: Pod, claim: ResourceClaim, check_owner: bool, state: State, features: Features
) -> str | None:
    p, c = pod.metadata, claim.metadata
    if check_owner and (problem := is_for_pod(pod, claim)) is not None:
        return problem
    if c.deletion_timestamp is not None:
        return f'resourceclaim "{c.name}" is being deleted'
    status = claim.status
    if status.deallocation_requested:
        return "resourceclaim must be reallocated"  # its classic driver is deallocating it
    if status.allocation is None or any(r.uid == p.uid for r in status.reserved_for):
        return None
    if status.allocation.shareable is False and status.reserved_for:
        return "resourceclaim in use"  # v1alpha2: an allocation not shareable has one consumer
    if len(status.reserved_for) >= MAX_RESERVED_FOR:
        return f"resourceclaim {c.namespace}/{c.name} in use by {MAX_RESERVED_FOR} consumers"
    if features.device_taints:
        return _tainted(claim, state)
    return None


def _tainted(claim: ResourceClaim, state: State) -> str | None:
    """An allocated device now carries a NoSchedule/NoExecute taint its request does not tolerate.

    New consumers are refused (issue 6 item 5); existing ones are the eviction controller's.
    """
    allocation = claim.status.allocation
    assert allocation is not None
    for result in allocation.devices.results:
        for device in _devices_named(state, result.driver, result.pool, result.device):
            for taint in device.taints:
                if taint.effect not in _BLOCKING_EFFECTS:
                    continue
                if any(tolerates(t, taint) for t in result.tolerations):
                    continue
                return (
                    f"resourceclaim {_key(claim)}: device "
                    f"{result.driver}/{result.pool}/{result.device} has untolerated taint "
                    f"{taint.key}={taint.value}:{taint.effect}"
                )
    return None


def _devices_named(state: State, driver: str, pool: str, name: str) -> Iterator[Device]:
    for entry in state.slices.by_index(SLICES_BY_POOL, PoolKey(driver, pool)):
        for device in state.tainted.view(entry).devices:
            if device.name == name:
                yield device


def nodes_to_score(total: int, percentage: int) -> int:
    """How many fitting nodes a scored decision looks at: kube-scheduler's
    `numFeasibleNodesToFind` (all below 100 nodes; else `percentage`, or when 0 the adaptive
    50 % minus 1 % per 125 nodes, at least 5 %; never fewer than 100)."""
    if total < _MIN_NODES_TO_SCORE or percentage >= 100:
        return total
    if percentage <= 0:
        percentage = max(_MIN_PERCENTAGE_TO_SCORE, 50 - total // 125)
    return max(_MIN_NODES_TO_SCORE, total * percentage // 100)


_Fit = tuple[float, str, tuple[AllocationResult, ...] | None, ExtendedClaim | None]
"""A fitting node: the policy's score, the node, its allocation (None: not made yet) and the
special claim allocated with it."""


def _scores_alike(claims: Sequence[ResourceClaim], policy: Policy) -> bool:
    """Whether DynamicResources' Score gives every node the same score for `claims`: FirstFit
    scores nothing and, without a prioritized list (`firstAvailable`, which kube-scheduler
    v1.37.2's Score ranks by the subrequest allocated), neither does upstream."""
    return isinstance(policy, FirstFit) and not any(
        request.first_available for claim in claims for request in claim.spec.requests
    )


def _ranked(fitting: Sequence[_Fit], scorer: Scorer | None) -> list[_Fit]:
    """The fitting nodes best first: the framework's Score totals plus the policy's score
    rescaled as a Score plugin's (`_as_node_score`); ties to the smallest name."""
    if scorer is not None:
        totals = scorer([f[1] for f in fitting])
        low = min(f[0] for f in fitting)
        span = max(f[0] for f in fitting) - low
        fitting = [
            (_as_node_score(score, low, span) + totals.get(n, 0), n, kept, extra)
            for score, n, kept, extra in fitting
        ]
    return sorted(fitting, key=lambda f: (-f[0], f[1]))


def _place(
    candidates: Sequence[Node],
    claims: Sequence[ResourceClaim],
    node_filter: Callable[[Node], list[str]],
    state: State,
    settings: Settings,
    *,
    every_node: bool,
    who: str,
    extended_for: Callable[[Node], ExtendedClaim | None] | None = None,
    scorer: Scorer | None = None,
    percentage: int | None = None,
    fits: Callable[[Node, Sequence[AllocationResult]], list[str]] | None = None,
) -> (
    tuple[str, tuple[AllocationResult, ...], ExtendedClaim | None]
    | list[list[str]]
    | errors.AllocationInputError
):
    """The best node for `claims` among `candidates` (`every_node`: all nodes, by name), their
    allocation there and the special claim allocated with them (last), every rejected node's
    reasons (for the FitError), or a fatal input error.

    `extended_for` builds a node's special claim for DRA-backed extended resources (None where
    the node serves them natively); its claims differ per node, so no verdict is reused then.
    `who` names the pod or claim in the per-node debug lines (`--log-level debug`). `scorer`
    gives the framework's Score totals of the fitting nodes, added to the policy's scores
    rescaled as a Score plugin's of weight 2 (`_as_node_score`); the profile's `percentage`
    of nodes to score wins over the settings' when given. `fits`
    is the node-allocatable check of a node's allocation (`_nodealloc_fit`); no verdict is
    reused with it, since it depends on the pod and on the node's room.

    Nodes are tried in name order. When every node scores alike (FirstFit, or nothing to
    allocate) the first that fits wins, so the search stops there; a scored policy looks at
    `nodes_to_score` fitting nodes, starting where the previous decision stopped (upstream's
    `nextStartNodeIndex`), and takes the best score, ties to the smallest name. A node whose
    verdict for these claims is known (`State.verdicts`) is not handed to the allocator; over
    every node, only those not known to miss are walked at all, and the misses are explained
    only when no node fits.

    With framework scores but DRA scores alike (`_scores_alike`), allocation is lazy: the
    sample is the nodes that pass the Filters, scored first; the allocator then runs on the
    best one only. Where it fails there, the node is rejected with the allocator's reason (as
    if its Filter had failed), the walk goes on for one more node, and the sample is scored
    again; so the allocator runs about once per decision instead of once per sampled node.
    """
    policy = settings.policy
    memo = state.verdicts if claims and extended_for is None and fits is None else None
    debug = _levels.isEnabledFor(logging.DEBUG)
    shape = None
    if memo is not None:
        memo.sync(
            slices=state.slices,
            nodes=state.nodes,
            classes=state.classes,
            tainted=state.tainted,
            ledger=state.ledger,
        )
        shape = shape_of(claims, policy, settings.budget)
    names = tuple(claim.metadata.name for claim in claims)
    alike = (not claims or isinstance(policy, FirstFit)) and scorer is None
    share = percentage if percentage is not None else settings.percentage_to_score
    wanted = 1 if alike else nodes_to_score(len(candidates), share)
    walk: Iterable[Node] = candidates
    skips_misses = memo is not None and shape is not None and every_node
    if memo is not None and shape is not None and every_node:
        walk = memo.open_nodes(shape, state.nodes)
    rotate = not alike and wanted < len(candidates)
    start = 0
    if rotate:
        ordered = walk if isinstance(walk, Sequence) else list(walk)
        start = state.score_start % max(len(ordered), 1)
        walk = (ordered[(start + i) % len(ordered)] for i in range(len(ordered)))  # no copy
    classes = state.class_map()
    lazy = scorer is not None and bool(claims) and _scores_alike(claims, policy)
    rejected: list[list[str]] = []
    known_misses: list[tuple[Node, Verdict | None]] = []
    fitting: list[_Fit] = []
    untried: dict[str, Node] = {}  # lazily: passed the filters, the allocator not asked yet
    learned: list[tuple[str, Verdict]] = []  # recorded after the walk, which reads the memo
    visited: set[str] = set()

    def allocate_on(node: Node) -> _Fit | errors.AllocationInputError | None:
        """The node's fit, or None (rejected with the allocator's reason, recorded)."""
        extra = extended_for(node) if extended_for is not None else None
        tried = [*claims, extra.claim] if extra is not None else claims
        outcome = _allocate_on(node, tried, classes, state, settings)
        if isinstance(outcome, errors.AllocationInputError):
            return outcome
        if isinstance(outcome, Explanation):
            mapped = {m.request_name: m.resource_name for m in extra.mappings} if extra else {}
            reason = claim_failure(outcome, mapped)
            rejected.append([reason])
            if debug:
                _log.debug(LogEvent.ALLOCATION_NODE, pod=who, node=node.name, rejected=reason)
            if not outcome.aborted:
                learned.append((node.name, Rejected(reason, names)))
            return None
        results, score = outcome
        short = fits(node, results[: len(claims)]) if fits is not None else []
        if short:
            rejected.append(short)
            return None
        if debug:
            _log.debug(LogEvent.ALLOCATION_NODE, pod=who, node=node.name, fits=score)
        learned.append((node.name, Fits(score)))
        return (score, node.name, results, extra)

    def walk_on(nodes: Iterator[Node]) -> errors.AllocationInputError | None:
        """Walk until `wanted` nodes fit (lazily: may fit), or the nodes run out."""
        for node in nodes:
            visited.add(node.name)
            verdict = memo.get(node.name, shape) if memo is not None and shape is not None else None
            if isinstance(verdict, Rejected):
                known_misses.append((node, verdict))
                continue
            problems = node_filter(node)
            if problems:
                rejected.append(problems)
                if debug:
                    _log.debug(LogEvent.ALLOCATION_NODE, pod=who, node=node.name, rejected=problems)
                continue
            if isinstance(verdict, Fits):
                fitting.append((verdict.score, node.name, None, None))
            elif lazy:
                untried[node.name] = node
                fitting.append((0.0, node.name, None, None))
            else:
                fit = allocate_on(node)
                if isinstance(fit, errors.AllocationInputError):
                    return fit
                if fit is not None:
                    fitting.append(fit)
            if len(fitting) >= wanted:
                break
        return None

    nodes = iter(walk)
    failed = walk_on(nodes)
    best: _Fit | None = None
    while failed is None and fitting:
        ranked = _ranked(fitting, scorer)
        best = ranked[0]
        if best[1] not in untried:
            break
        # Lazily: the allocator on the best node not asked yet; where it fails, the walk goes
        # on for one more node and the sample is scored again, as if it had been filtered out.
        fit = allocate_on(untried.pop(best[1]))
        fitting = [f for f in fitting if f[1] != best[1]]
        if isinstance(fit, errors.AllocationInputError):
            failed = fit
        elif fit is not None:
            fitting.append(fit)
            best = (best[0], best[1], fit[2], fit[3])
            break
        else:
            best = None
            failed = walk_on(nodes)
    if failed is not None:
        return failed
    if memo is not None and shape is not None:
        for name, verdict in learned:
            memo.put(name, shape, verdict)
    if rotate:
        state.score_start = (start + len(visited)) % max(len(candidates), 1)
    if best is None:
        if skips_misses:
            known_misses += [(n, None) for n in candidates if n.name not in visited]
        for node, miss in known_misses:
            problems = node_filter(node)
            if not problems:
                why = _miss_reason(node, miss, names, claims, classes, state, settings)
                if isinstance(why, errors.AllocationInputError):
                    return why
                problems = [why]
            rejected.append(problems)
        return rejected
    _, name, kept, extra = best
    if kept is not None:
        return name, kept, extra
    # A reused verdict: allocate on the chosen node only (the allocator is deterministic).
    entry = state.nodes.get(ObjectKey("", name))
    assert entry is not None
    outcome = _allocate_on(entry.obj, claims, classes, state, settings)
    if isinstance(outcome, errors.AllocationInputError):
        return outcome
    if isinstance(outcome, Explanation):  # cannot happen while the verdict is current
        raise errors.TerminalError(f"node {name}: a reused verdict no longer holds")
    return name, outcome[0], None


DYNAMIC_RESOURCES_WEIGHT = 2
"""DynamicResources' Score weight in kube-scheduler's default profile."""


def _as_node_score(score: float, low: float, span: float) -> float:
    """The policy's score of a node beside the framework's: rescaled over the fitting nodes to
    [0, 100] (lowest 0, highest 100; all alike: 0), then weighted as DynamicResources is."""
    if span <= 0:
        return 0.0
    return (score - low) * 100 / span * DYNAMIC_RESOURCES_WEIGHT


def _miss_reason(
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
    outcome = _allocate_on(node, claims, classes, state, settings)
    if isinstance(outcome, Explanation):
        return claim_failure(outcome)
    if isinstance(outcome, errors.AllocationInputError):
        return outcome
    raise errors.TerminalError(f"node {node.name}: known not to fit, yet it fits")


def _allocate_on(
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
