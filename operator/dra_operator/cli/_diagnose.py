"""Why a claim or pod has no devices: the allocator run in explain mode on a cluster snapshot.

Pure: from a `verify.ClusterState` (read with its DeviceClasses) to a `Diagnosis`. Allocated
claims report their devices and node. The unallocated claims of a pod are tried together on
each candidate node (the pod's node when it is bound, else every node, else every node the
slices name), with every other allocated claim in the ledger, exactly as the scheduler would.
Each request of a node that does not fit gets its funnel: devices considered, then how many
remain after the class selector, the request selector, node selection, taints, being free
(in use, capacity, shared counters), the policy and the claim's constraints, and the stage
that blocks it.

As the scheduler would: the devices carry the taints of the DeviceTaintRules that select them
(when device taints are on), and the claims are allocated with the strategy and search budget
of the AllocationPolicy that governs them (`Policies`; the scheduler's `Governor` choice).
Hooks are not loaded here, so a policy's hooks neither run nor make it invalid; the diagnosis
names them. An unbound pod's candidate nodes first pass the scheduler's node filters, run by
the scheduler's own framework with its default profile (`default_framework`) but without the
volume plugins (the diagnosis reads no storage objects): a node that fails one is reported with
the rejecting plugin and its reason text (the one the FailedScheduling event counts) and not
tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from dra_operator.allocator import (
    Budget,
    CELSelectors,
    Explanation,
    Features,
    Ledger,
    Node,
    RequestExplanation,
    allocate,
)
from dra_operator.cli._diagnosis import (
    OPTIONAL_STAGES,
    STAGES,
    AllocatedClaim,
    Diagnosis,
    NodeVerdict,
    Policies,
    RequestFunnel,
    Stage,
)
from dra_operator.controllers.scheduler import ClassesHandle, default_framework, default_profile
from dra_operator.controllers.scheduler.framework import (
    CycleState,
    Profile,
    build_snapshot,
    evaluate,
)
from dra_operator.errors import AllocationInputError
from dra_operator.hooks import AllocationPolicy, allocator_policy, decision_policy
from dra_operator.model import (
    AllocationResult,
    ExtendedResourceClasses,
    FrozenMap,
    Pod,
    ResourceClaim,
    apply_taint_rules,
    dra_backed,
    served_by_dra,
    special_claim,
)
from dra_operator.verify import ClusterState

__all__ = [
    "Diagnosis",
    "NodeVerdict",
    "Policies",
    "RequestFunnel",
    "Stage",
    "diagnose_claim",
    "diagnose_pod",
]


def _ref(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def _find_claim(state: ClusterState, namespace: str, name: str) -> ResourceClaim | None:
    for claim in state.claims:
        if claim.metadata.namespace == namespace and claim.metadata.name == name:
            return claim
    return None


def _allocated_node(claim: ResourceClaim, result: AllocationResult, state: ClusterState) -> str:
    reserved = {ref.uid for ref in claim.status.reserved_for if ref.resource == "pods"}
    nodes = sorted({p.spec.node_name for p in state.pods if p.metadata.uid in reserved} - {""})
    if nodes:
        return ", ".join(nodes)
    selector = result.node_selector
    if selector is None:
        return "(any node)"
    for term in selector.node_selector_terms:
        for match in term.match_fields:
            if match.key == "metadata.name" and match.operator == "In":
                return ", ".join(match.values)
    return "(nodes matching its node selector)"


def _allocated(claim: ResourceClaim, state: ClusterState) -> AllocatedClaim:
    result = claim.status.allocation
    assert result is not None
    return AllocatedClaim(
        claim=_ref(claim),
        node=_allocated_node(claim, result, state),
        devices=tuple(
            f"{r.request}: {r.driver}/{r.pool}/{r.device}" + (" (admin)" if r.admin_access else "")
            for r in result.devices.results
        ),
    )


def _candidate_nodes(state: ClusterState, pod: Pod | None) -> list[Node]:
    known = {
        n.name: Node(name=n.name, labels=n.labels, declared_features=frozenset(n.declared_features))
        for n in state.nodes
    }
    if pod is not None and pod.spec.node_name:
        return [known.get(pod.spec.node_name, Node(name=pod.spec.node_name))]
    if known:
        return [known[name] for name in sorted(known)]
    return [Node(name=name) for name in sorted({s.node_name for s in state.slices if s.node_name})]


def _funnel(request: RequestExplanation, constraint_summary: str) -> RequestFunnel:
    remaining = request.considered
    wanted = max(request.needed, 1)
    stages: list[Stage] = []
    blocking = ""
    if request.considered < wanted:
        blocking = f"considered: only {request.considered} devices on this node"
    for name, reasons in STAGES:
        groups = [g for g in request.rejected if g.reason in reasons]
        remaining -= sum(g.count for g in groups)
        if name in OPTIONAL_STAGES and not groups:
            continue
        stages.append(Stage(name=name, remaining=remaining, dropped=tuple(map(str, groups))))
        if not blocking and remaining < wanted:
            detail = "; ".join(map(str, groups)) or "no devices"
            blocking = f"{name}: {detail}"
    stages.append(Stage(name="constraints", remaining=remaining, dropped=()))
    if not blocking and constraint_summary:
        blocking = f"constraints: {constraint_summary}"
    return RequestFunnel(
        claim=request.claim,
        request=request.request,
        considered=request.considered,
        needed=request.needed,
        stages=tuple(stages),
        blocking=blocking,
    )


def _verdict(node: str, explanation: Explanation) -> NodeVerdict:
    combined = "" if any(r.is_short for r in explanation.requests) else explanation.summary
    return NodeVerdict(
        node=node,
        fits=False,
        summary=explanation.summary,
        requests=tuple(_funnel(r, combined) for r in explanation.requests),
        pools=tuple(str(p) for p in explanation.pools),
    )


def _blocked_nodes(state: ClusterState, pod: Pod | None) -> dict[str, tuple[str, list[str]]]:
    """The verdicts of the scheduler's framework (PreFilter, then Filter on every node) for an
    unbound pod: node -> (the rejecting plugin, its reasons)."""
    if pod is None or pod.spec.node_name:
        return {}
    # What a node serves through DRA is the special claim's to fit, not NodeResourcesFit's.
    handle = ClassesHandle(lambda: state.classes)
    snapshot = build_snapshot(state.nodes, state.pods)  # the pod is unbound: it counts nowhere
    framework = default_framework(handle=handle, profile=_without_storage(default_profile()))
    found = evaluate(framework, pod, snapshot, state=CycleState())
    if not found.prefilter.ok:
        reasons = list(found.prefilter.reasons)
        return {node.name: (found.prefilter.plugin, reasons) for node in state.nodes}
    return {
        name: (status.plugin, list(status.reasons))
        for name, status in found.filter.items()
        if not status.ok
    }


_STORAGE_PLUGINS = frozenset(
    {"VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits"}
)
"""The volume plugins, left out: a diagnosis does not read PVCs, PVs nor StorageClasses."""


def _without_storage(profile: Profile) -> Profile:
    off = profile.disabled.get("*", frozenset()) | _STORAGE_PLUGINS
    return replace(profile, disabled=FrozenMap({**profile.disabled, "*": off}))


@dataclass(frozen=True, slots=True)
class _Tried:
    nodes: tuple[NodeVerdict, ...]
    error: str
    policy: AllocationPolicy | None


def _try_nodes(
    state: ClusterState,
    claims: list[ResourceClaim],
    pod: Pod | None,
    features: Features,
    policies: Policies,
    special: _Special | None = None,
) -> _Tried:
    pending = {_ref(c) for c in claims}
    others = [c for c in state.claims if _ref(c) not in pending]
    ledger = Ledger.from_claims(others, consumable_capacity=features.consumable_capacity)
    selectors = CELSelectors(features)
    slices = state.slices
    if features.device_taints and state.rules:
        rules = sorted(state.rules, key=lambda rule: rule.metadata.name)  # as the scheduler
        slices = tuple(apply_taint_rules(slices, rules))
    known_hooks = frozenset(name for p in policies.policies for name in p.hooks)
    governing = decision_policy(policies.policies, claims, policies.labels, known_hooks)
    budget = Budget()
    if governing is not None and governing.search_steps is not None:
        budget = replace(budget, max_steps=governing.search_steps)
    if governing is not None and governing.search_timeout is not None:
        budget = replace(budget, timeout=governing.search_timeout)
    verdicts: list[NodeVerdict] = []
    blocked = _blocked_nodes(state, pod)
    for node in _candidate_nodes(state, pod):
        if node.name in blocked:
            plugin, reasons = blocked[node.name]
            problems = tuple(reasons)
            summary = "; ".join(problems)
            verdicts.append(
                NodeVerdict(
                    node=node.name,
                    fits=False,
                    summary=summary,
                    node_problems=problems,
                    plugin=plugin,
                )
            )
            continue
        extra = special(node.name) if special is not None else None
        if not claims and extra is None:
            verdicts.append(
                NodeVerdict(
                    node=node.name,
                    fits=True,
                    summary="no claim needed: the node advertises the extended resources",
                )
            )
            continue
        try:
            got = allocate(
                [*claims, extra] if extra is not None else claims,
                classes=state.classes,
                slices=slices,
                node=node,
                features=features,
                selectors=selectors,
                ledger=ledger,
                policy=allocator_policy(governing),
                budget=budget,
            )
        except AllocationInputError as exc:
            return _Tried(tuple(verdicts), str(exc), governing)
        if got.explanation is None:
            verdicts.append(
                NodeVerdict(node=node.name, fits=True, summary="the claims fit (not allocated yet)")
            )
        else:
            verdicts.append(_verdict(node.name, got.explanation))
    return _Tried(tuple(verdicts), "", governing)


def _pending(
    subject: str,
    claims: list[ResourceClaim],
    state: ClusterState,
    pod: Pod | None,
    features: Features,
    policies: Policies,
    *,
    allocated: tuple[AllocatedClaim, ...] = (),
    missing: tuple[str, ...] = (),
    extended: _Extended | None = None,
) -> Diagnosis:
    special = extended.claim_on if extended is not None else None
    tried = _try_nodes(state, claims, pod, features, policies, special)
    governing = tried.policy
    pending = [_ref(c) for c in claims]
    if extended is not None:
        pending.append(extended.ref)
    return Diagnosis(
        subject=subject,
        allocated=allocated,
        pending=tuple(pending),
        missing=missing,
        nodes=tried.nodes,
        error=tried.error,
        policy=governing.name if governing is not None else "",
        strategy=governing.strategy if governing is not None else "FirstFit",
        hooks_not_run=governing.hooks if governing is not None else (),
        extended=extended.lines if extended is not None else (),
    )


def diagnose_claim(
    state: ClusterState,
    namespace: str,
    name: str,
    features: Features,
    policies: Policies | None = None,
) -> Diagnosis | None:
    """None when the claim does not exist."""
    claim = _find_claim(state, namespace, name)
    if claim is None:
        return None
    subject = f"claim {namespace}/{name}"
    if claim.status.allocation is not None:
        return Diagnosis(subject=subject, allocated=(_allocated(claim, state),))
    if driver := _classic_driver(claim, state):
        return Diagnosis(subject=subject, classic=(f"{_ref(claim)} by {driver}",))
    if _is_named(claim, state):
        return Diagnosis(subject=subject, named=(f"{_ref(claim)} of {claim.resource_class_name}",))
    return _pending(subject, [claim], state, None, features, policies or Policies())


def _classic_driver(claim: ResourceClaim, state: ClusterState) -> str:
    """The driver of an unallocated classic claim (docs/classic.md): it decides, not the
    allocator; a v1alpha2 claim's class says which (when the snapshot has the classes)."""
    name = claim.resource_class_name
    resource_class = next((c for c in state.classes if c.metadata.name == name), None)
    return claim.classic_driver(resource_class) if name else claim.controller


def _is_named(claim: ResourceClaim, state: ClusterState) -> bool:
    """A 1.30 claim of a `structuredParameters` class: 1.30's own allocator places it, which
    explain does not run (docs/classic.md)."""
    name = claim.resource_class_name
    found = next((c for c in state.classes if c.metadata.name == name), None)
    return bool(name) and found is not None and found.structured_parameters


def _pod_claim_names(pod: Pod) -> list[tuple[str, str | None]]:
    """(pod claim name, ResourceClaim name or None when not created yet)."""
    generated = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    found: list[tuple[str, str | None]] = []
    for entry in pod.spec.resource_claims:
        if entry.resource_claim_name:
            found.append((entry.name, entry.resource_claim_name))
        elif entry.name in generated and generated[entry.name] is None:
            continue  # the template yields no claim for this pod
        else:
            found.append((entry.name, generated.get(entry.name)))
    return found


def diagnose_pod(
    state: ClusterState,
    namespace: str,
    name: str,
    features: Features,
    policies: Policies | None = None,
) -> Diagnosis | None:
    """None when the pod does not exist."""
    pod = next(
        (p for p in state.pods if p.metadata.namespace == namespace and p.metadata.name == name),
        None,
    )
    if pod is None:
        return None
    allocated: list[AllocatedClaim] = []
    pending: list[ResourceClaim] = []
    missing: list[str] = []
    classic: list[str] = []
    named: list[str] = []
    for entry, claim_name in _pod_claim_names(pod):
        claim = _find_claim(state, namespace, claim_name) if claim_name else None
        if claim is None:
            missing.append(claim_name or f"(from template, for {entry})")
        elif claim.status.allocation is not None:
            allocated.append(_allocated(claim, state))
        elif driver := _classic_driver(claim, state):
            classic.append(f"{_ref(claim)} by {driver}")
        elif _is_named(claim, state):
            named.append(f"{_ref(claim)} of {claim.resource_class_name}")
        else:
            pending.append(claim)
    subject = f"pod {namespace}/{name}"
    extended = _extended_of(pod, state, allocated, pending)
    if not pending and extended is None:
        return Diagnosis(
            subject=subject,
            allocated=tuple(allocated),
            missing=tuple(missing),
            classic=tuple(classic),
            named=tuple(named),
        )
    found = _pending(
        subject,
        pending,
        state,
        pod,
        features,
        policies or Policies(),
        allocated=tuple(allocated),
        missing=tuple(missing),
        extended=extended,
    )
    return replace(found, classic=tuple(classic), named=tuple(named))


_Special = Callable[[str], ResourceClaim | None]


@dataclass(frozen=True, slots=True)
class _Extended:
    """The pod's DRA-backed extended resources while its special claim does not exist yet."""

    lines: tuple[str, ...]
    claim_on: _Special  # node name -> the special claim that node would allocate
    ref: str  # how the pending claim is named: "<namespace>/<extended-resources>"


def _extended_of(
    pod: Pod, state: ClusterState, allocated: list[AllocatedClaim], pending: list[ResourceClaim]
) -> _Extended | None:
    """Extended resources backed by DRA, as the scheduler sees them (upstream-1.37.md §6).

    A special claim named in the pod status is reported like the pod's other claims (added to
    `allocated` or `pending`); for an unbound pod without one, each node gets the claim it
    would allocate (none where the node advertises every resource natively).
    """
    status = pod.status.extended_resource_claim_status
    if status is not None:
        found = _find_claim(state, pod.metadata.namespace, status.resource_claim_name)
        if found is not None:
            if found.status.allocation is not None:
                allocated.append(_allocated(found, state))
            else:
                pending.append(found)
            return None
    if pod.spec.node_name:
        return None
    classes = ExtendedResourceClasses.of(state.classes)
    backed = dra_backed(pod.effective_requests, classes)
    if not backed:
        return None
    lines = tuple(f"{n}: {q} from DeviceClass {classes.class_for(n)}" for n, q in backed.items())
    nodes = {node.name: node for node in state.nodes}

    def claim_on(node: str) -> ResourceClaim | None:
        known = nodes.get(node)
        dra = served_by_dra(backed, known.allocatable if known is not None else {})
        built = special_claim(pod, dra, classes)
        return built.claim if built is not None else None

    anywhere = special_claim(pod, backed, classes)  # the claim as it is named before creation
    if anywhere is None:
        return None
    ref = _ref(anywhere.claim)
    return _Extended(lines=tuple(sorted(lines)), claim_on=claim_on, ref=ref)
