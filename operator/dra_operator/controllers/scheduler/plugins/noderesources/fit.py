"""NodeResourcesFit (PreFilter, Filter, PreScore, Score): the node has room for the pod.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/noderesources/fit.go. PreFilter computes
the pod's requests once (`resource.PodRequests`); Filter compares them with what the node has
left, reporting upstream's texts ("Too many pods", "Insufficient cpu", "Insufficient <name>"),
Unschedulable, or UnschedulableAndUnresolvable when the request exceeds the node's whole
allocatable. Extended resources named in `ignoredResources` or whose domain is in
`ignoredResourceGroups` are not checked, nor are those a DeviceClass serves on a node that does
not advertise them (DRAExtendedResource, GA in 1.37): DynamicResources allocates those. Score
uses the configured strategy (LeastAllocated by default, MostAllocated, RequestedToCapacityRatio).

Differences: upstream iterates the extended resources in map order, so with several
insufficient ones its reasons come in any order; here they come sorted by name. Scoring does not
count DRA-served extended resources as node capacity (upstream does when the strategy's
resources name one; the default cpu and memory are unaffected).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Protocol, cast, runtime_checkable

from dra_operator.controllers.scheduler.framework import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    SUCCESS,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PreFilterResult,
    Status,
    error,
    is_scalar_resource,
    pod_requests,
)
from dra_operator.controllers.scheduler.plugins.noderesources._args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    FitArgs,
    fit_args,
)
from dra_operator.controllers.scheduler.plugins.noderesources._scoring import (
    ResourceAllocationScorer,
    Scorer,
    least_allocated,
    most_allocated,
    requested_to_capacity_ratio,
)
from dra_operator.model import ExtendedResourceClasses, Pod, is_extended_resource_name

NAME = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"

_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_NATIVE = (CPU, MEMORY, EPHEMERAL_STORAGE)


@runtime_checkable
class ExtendedResourceHandle(Protocol):
    """A Handle that knows which extended resources DeviceClasses serve (DRA-backed ones)."""

    @property
    def extended_resource_classes(self) -> ExtendedResourceClasses: ...


def insufficient(
    requests: Mapping[str, int],
    node: NodeInfo,
    *,
    ignored: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
    classes: ExtendedResourceClasses | None = None,
) -> tuple[list[str], bool]:
    """`fitsRequest`: the reasons the pod does not fit, and whether one is unresolvable."""
    reasons: list[str] = []
    unresolvable = False
    if len(node.pods) + 1 > node.allocatable.get(PODS, 0):
        reasons.append(TOO_MANY_PODS)
    if not any(requests.get(n, 0) for n in _NATIVE) and not any(
        is_scalar_resource(n) for n in requests
    ):
        return reasons, unresolvable
    for name in _NATIVE:
        want = requests.get(name, 0)
        cap = node.allocatable.get(name, 0)
        if want > 0 and want > cap - node.requested.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or want > cap
    for name in sorted(n for n in requests if n not in _NATIVE):
        want = requests[name]
        if want == 0:
            continue
        if is_extended_resource_name(name) and (
            name in ignored or name.split("/", 1)[0] in ignored_groups
        ):
            continue
        cap = node.allocatable.get(name, 0)
        if classes is not None and cap <= 0 and classes.class_for(name) is not None:
            continue  # DynamicResources serves it from devices
        if want > cap - node.requested.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or want > cap
    return reasons, unresolvable


def _scorer(args: FitArgs) -> Scorer:
    if args.strategy == LEAST_ALLOCATED:
        return least_allocated(args.resources)
    if args.strategy == MOST_ALLOCATED:
        return most_allocated(args.resources)
    return requested_to_capacity_ratio(args.resources, args.shape)


class NodeResourcesFit:
    def __init__(self, args: FitArgs, handle: Handle) -> None:
        self._args = args
        self._handle = handle
        # Whether the handle serves DRA-backed extended resources, known once: a runtime
        # Protocol check costs more than the rest of a node's Filter.
        self._extended = isinstance(handle, ExtendedResourceHandle)
        self._scoring = ResourceAllocationScorer(args.resources, _scorer(args), use_requested=False)

    @property
    def name(self) -> str:
        return NAME

    @property
    def strategy(self) -> str:
        return self._args.strategy

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """The pod's requests as Filter and Score read them; None with any request beyond
        cpu, memory and ephemeral-storage, whose fit may turn on DeviceClasses (the handle's
        `extended_resource_classes`)."""
        requests = pod_requests(pod)
        if any(name not in _NATIVE for name in requests):
            return None
        return tuple(sorted(requests.items())), self._scoring.pod_request_list(pod)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        state.write(_PRE_FILTER_KEY, pod_requests(pod))
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        requests = state.get(_PRE_FILTER_KEY)
        if not isinstance(requests, dict):
            return error(f"error reading {_PRE_FILTER_KEY!r} from cycleState").with_plugin(NAME)
        handle = self._handle
        classes = (
            cast(ExtendedResourceHandle, handle).extended_resource_classes
            if self._extended
            else None
        )
        reasons, unresolvable = insufficient(
            requests,
            node,
            ignored=self._args.ignored_resources,
            ignored_groups=self._args.ignored_resource_groups,
            classes=classes,
        )
        if not reasons:
            return SUCCESS
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return Status(code, tuple(reasons), NAME)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        state.write(_PRE_SCORE_KEY, self._scoring.pod_request_list(pod))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        requests = state.get(_PRE_SCORE_KEY)
        if not isinstance(requests, tuple):
            requests = self._scoring.pod_request_list(pod)
        if not self._scoring.resources:
            return 0, error("resources not found").with_plugin(NAME)
        return self._scoring.score(node, requests), SUCCESS

    def score_extensions(self) -> None:
        return None


def new(args: Mapping[str, object], handle: Handle) -> NodeResourcesFit:
    """NodeResourcesFitArgs: ignoredResources, ignoredResourceGroups, scoringStrategy."""
    return NodeResourcesFit(fit_args(args), handle)
