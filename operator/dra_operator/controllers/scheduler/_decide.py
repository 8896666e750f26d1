"""One scheduling decision, sans I/O: kube-scheduler's cycle from PreFilter to Reserve.

`decide_pod` resolves the pod's claims (upstream-dra.md §3.3, §3.5), filters the nodes (§3.6 plus
`_nodes`), runs the allocator for the claims still unallocated on every node left, and picks the
node with the policy's best score, ties to the smallest name. `decide_claim` does the same for a
standalone claim asking for immediate allocation. Both read the caches through `State` and
return a `Placement` (what to write), a `Wait` (nothing to say yet: a generated claim does not
exist, or another decision's allocation of a shared claim is still being written) or an
`Unschedulable` with the FailedScheduling message. Nothing here writes, awaits or mutates: the
caller reserves the placement in the ledger before the next decision (rule 8). Each allocator
call is reported to `Settings.metrics` (an observation, not a change of state).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from dra_operator import errors, names
from dra_operator.allocator import (
    Budget,
    Features,
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
from dra_operator.controllers.scheduler._explain import (
    NOT_AVAILABLE_ON_NODE,
    claim_failure,
    fit_error,
    prefilter_error,
)
from dra_operator.controllers.scheduler._metrics import SchedulerMetrics, record_attempt
from dra_operator.controllers.scheduler._nodes import node_problems
from dra_operator.controllers.scheduler._taints import TaintedSlices
from dra_operator.controllers.scheduler._usage import NodeUsage
from dra_operator.hooks import HookPolicy
from dra_operator.model import (
    AllocationResult,
    Device,
    DeviceClass,
    Node,
    NodeSelector,
    Pod,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceSlice,
    UnresolvedClaim,
    is_for_pod,
    node_matches,
    resolve_claim,
    tolerates,
)

MAX_RESERVED_FOR = 256
"""`status.reservedFor` holds at most this many consumers (API validation)."""

_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What a decision needs besides the caches."""

    features: Features
    policy: Policy
    selectors: SelectorEvaluator
    budget: Budget = field(default_factory=Budget)
    metrics: SchedulerMetrics | None = None
    selection: SelectionMemo = field(default_factory=SelectionMemo)  # across decisions


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
    usage: NodeUsage
    tainted: TaintedSlices = field(default_factory=TaintedSlices)

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """The decision: node, claim writes, and whether the pod still has to be bound."""

    node: str
    claims: tuple[ClaimWrite, ...]
    pod: ObjectKey | None = None  # None for a claim allocated without a consumer
    pod_uid: str = ""
    consumer: ResourceClaimConsumerReference | None = None
    bind: bool = False


@dataclass(frozen=True, slots=True)
class Wait:
    """Not decidable yet and not worth an event; an event on the cause queues it again."""

    reason: str


@dataclass(frozen=True, slots=True)
class Unschedulable:
    """No node fits; `message` is the FailedScheduling text."""

    message: str


Decision = Placement | Wait | Unschedulable | None  # None: nothing to do


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


def decide_pod(pod: Pod, state: State, settings: Settings) -> Decision:
    """Where `pod` goes and what to write for it; see the module docstring."""
    if state.usage.node_of(pod.metadata.uid) is not None and not pod.spec.node_name:
        return None  # bound by us; the watch has not shown it yet
    node_count = len(state.nodes)
    found = _resolve_claims(pod, state, settings.features)
    if isinstance(found, Wait):
        return found
    if isinstance(found, str):
        return Unschedulable(prefilter_error(node_count, found))
    if pod.spec.node_name:
        if not found.allocated and not found.unallocated:
            return None
        entry = state.nodes.get(ObjectKey("", pod.spec.node_name))
        if entry is None:
            return Wait(f"node {pod.spec.node_name} is not known yet")
        candidates: Sequence[Node] = [entry.obj]
    else:
        candidates = [entry.obj for entry in sorted(state.nodes, key=lambda e: e.key.name)]
    requests = pod.effective_requests
    classes = state.class_map()
    rejected: list[list[str]] = []
    best: tuple[float, str, tuple[AllocationResult, ...]] | None = None
    for node in candidates:
        problems = []
        if not pod.spec.node_name:
            problems = node_problems(node, pod, requests, state.usage.on_node(node.name))
        if any(not node_matches(node.name, node.labels, s) for s in found.selectors):
            problems.append(NOT_AVAILABLE_ON_NODE)
        if problems:
            rejected.append(problems)
            continue
        outcome = _allocate_on(node, found.unallocated, classes, state, settings)
        if isinstance(outcome, errors.AllocationInputError):
            return Unschedulable(prefilter_error(node_count, str(outcome)))
        if isinstance(outcome, str):
            rejected.append([outcome])
            continue
        results, score = outcome
        if best is None or score > best[0]:
            best = (score, node.name, results)
    if best is None:
        return Unschedulable(
            fit_error(len(candidates) if pod.spec.node_name else node_count, rejected)
        )
    _, node_name, results = best
    writes = [
        ClaimWrite(
            key=_key(claim),
            uid=claim.metadata.uid,
            resource_version=claim.metadata.resource_version,
            allocation=result,
        )
        for claim, result in zip(found.unallocated, results, strict=True)
    ]
    writes += [
        ClaimWrite(
            key=_key(claim),
            uid=claim.metadata.uid,
            resource_version=claim.metadata.resource_version,
            allocation=None,
        )
        for claim in found.allocated
    ]
    return Placement(
        node=node_name,
        claims=tuple(writes),
        pod=ObjectKey(pod.metadata.namespace, pod.metadata.name),
        pod_uid=pod.metadata.uid,
        consumer=consumer_of(pod),
        bind=not pod.spec.node_name,
    )


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
        candidates = [entry.obj for entry in sorted(state.nodes, key=lambda e: e.key.name)]
    classes = state.class_map()
    rejected: list[list[str]] = []
    best: tuple[float, str, AllocationResult] | None = None
    for node in candidates:
        outcome = _allocate_on(node, [claim], classes, state, settings)
        if isinstance(outcome, errors.AllocationInputError):
            return Unschedulable(str(outcome))
        if isinstance(outcome, str):
            rejected.append([outcome])
            continue
        results, score = outcome
        if best is None or score > best[0]:
            best = (score, node.name, results[0])
    if best is None:
        return Unschedulable(fit_error(len(candidates), rejected))
    write = ClaimWrite(
        key=_key(claim), uid=meta.uid, resource_version=meta.resource_version, allocation=best[2]
    )
    return Placement(node=best[1], claims=(write,))


def _key(claim: ResourceClaim) -> ObjectKey:
    return ObjectKey(claim.metadata.namespace, claim.metadata.name)


def _resolve_claims(pod: Pod, state: State, features: Features) -> _Claims | Wait | str:
    """The pod's claims by what they need, a reason to wait, or a PreFilter failure text."""
    meta = pod.metadata
    found = _Claims()
    seen: set[str] = set()
    for entry in pod.spec.resource_claims:
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
            if state.ledger.is_in_flight(claim.metadata.uid):
                return Wait(f"resource claim {_key(claim)} is in the process of being allocated")
            found.unallocated.append(claim)
            continue
        if allocation.node_selector is not None:
            found.selectors.append(allocation.node_selector)
        if not any(ref.uid == meta.uid for ref in claim.status.reserved_for):
            found.allocated.append(claim)
    return found


def _claim_problem(
    pod: Pod, claim: ResourceClaim, check_owner: bool, state: State, features: Features
) -> str | None:
    p, c = pod.metadata, claim.metadata
    if check_owner and (problem := is_for_pod(pod, claim)) is not None:
        return problem
    if c.deletion_timestamp is not None:
        return f'resourceclaim "{c.name}" is being deleted'
    status = claim.status
    if status.allocation is None or any(r.uid == p.uid for r in status.reserved_for):
        return None
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


def _allocate_on(
    node: Node,
    claims: Sequence[ResourceClaim],
    classes: Mapping[str, DeviceClass],
    state: State,
    settings: Settings,
) -> tuple[tuple[AllocationResult, ...], float] | str | errors.AllocationInputError:
    """The allocation of `claims` on `node` with the policy's score of it, the node's reason
    why not, or a fatal input error."""
    if not claims:
        return (), 0.0
    slices = [
        state.tainted.view(entry)
        for value in (node.name, None)
        for entry in state.slices.by_index(SLICES_BY_NODE, value)
    ]
    policy = settings.policy
    if isinstance(policy, HookPolicy):
        policy = policy.for_node(node.name)  # hooks see which node is being tried
    started = time.perf_counter()
    try:
        answer = allocate(
            claims,
            classes=classes,
            slices=slices,
            node=AllocatorNode(name=node.name, labels=node.labels),
            features=settings.features,
            selectors=settings.selectors,
            ledger=state.ledger.snapshot(),
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
        return claim_failure(answer.explanation)
    return answer.results, answer.score
