"""The parts of core/v1 Pod and Node that the DRA control plane reads.

Shaped like core/v1 (snake_case names), frozen and hashable like the DRA types. Only what the
claims controller, the scheduler and the eviction controller look at is kept; a Pod is never
written back from this view (writes are patches built from the raw object).

`effective_requests` is the scheduler's view of what a pod asks of a node (component-helpers
`resource.PodRequests` with default options): the sum over app containers and restartable
(sidecar) init containers, at least the largest plain init container plus the sidecars started
before it, pod-level cpu/memory/hugepages requests where set, plus overhead.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from dra_operator.model._frozen import FrozenMap
from dra_operator.model._nodealloc import NodeAllocatableClaimStatus, claim_requests
from dra_operator.model._pod_scheduling import PodAffinityRules, TopologySpreadConstraint
from dra_operator.model._quantity import Quantity
from dra_operator.model._storage import Volume
from dra_operator.model._types import NodeSelector, NodeSelectorTerm, ObjectMeta


@dataclass(frozen=True, slots=True, kw_only=True)
class Toleration:
    """A pod toleration (core/v1); operator "" means Equal."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Taint:
    key: str
    value: str = ""
    effect: str  # NoSchedule, PreferNoSchedule, NoExecute
    time_added: datetime.datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PodResourceClaim:
    """`spec.resourceClaims[]`: at most one of the two sources is set."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerResourceClaim:
    """`resources.claims[]`: a pod claim name and optionally one of its requests."""

    name: str
    request: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerPort:
    """A container port; NodePorts reads those with `host_port` > 0."""

    container_port: int
    host_port: int = 0
    host_ip: str = ""
    protocol: str = "TCP"  # the API's default when unset


@dataclass(frozen=True, slots=True, kw_only=True)
class Container:
    name: str
    image: str = ""
    ports: tuple[ContainerPort, ...] = ()
    requests: FrozenMap[str, Quantity] = field(default_factory=FrozenMap)
    limits: FrozenMap[str, Quantity] = field(default_factory=FrozenMap)
    claims: tuple[ContainerResourceClaim, ...] = ()
    restart_policy: str | None = None  # "Always" marks a sidecar init container


@dataclass(frozen=True, slots=True, kw_only=True)
class PreferredSchedulingTerm:
    """`preferredDuringSchedulingIgnoredDuringExecution[]`: a node term and its weight (1-100)."""

    weight: int
    preference: NodeSelectorTerm


@dataclass(frozen=True, slots=True, kw_only=True)
class PodSpec:
    node_name: str = ""
    scheduler_name: str = ""
    priority: int | None = None
    resource_claims: tuple[PodResourceClaim, ...] = ()
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    node_selector: FrozenMap[str, str] = field(default_factory=FrozenMap)
    required_node_affinity: NodeSelector | None = None
    preferred_node_affinity: tuple[PreferredSchedulingTerm, ...] = ()
    scheduling_gates: tuple[str, ...] = ()  # the gates' names
    preemption_policy: str = ""  # "" means the API default, PreemptLowerPriority
    overhead: FrozenMap[str, Quantity] = field(default_factory=FrozenMap)
    resource_requests: FrozenMap[str, Quantity] = field(default_factory=FrozenMap)  # pod-level
    volumes: tuple[Volume, ...] = ()
    pod_affinity: PodAffinityRules | None = None  # spec.affinity.podAffinity/podAntiAffinity
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    pod_group_name: str | None = None  # spec.schedulingGroup.podGroupName (1.36+ workloads)


@dataclass(frozen=True, slots=True, kw_only=True)
class PodResourceClaimStatus:
    name: str
    resource_claim_name: str | None = None  # None: no claim was needed


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerExtendedResourceRequest:
    container_name: str
    resource_name: str
    request_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PodExtendedResourceClaimStatus:
    request_mappings: tuple[ContainerExtendedResourceRequest, ...]
    resource_claim_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PodCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: datetime.datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PodStatus:
    phase: str = ""
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = ()
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None
    conditions: tuple[PodCondition, ...] = ()
    nominated_node_name: str = ""  # set by a scheduler that preempted pods for this one
    start_time: datetime.datetime | None = None  # set by the kubelet; preemption orders by it
    # DRANodeAllocatableResources: what the pod's claims amount to (part of its requests)
    node_allocatable_resource_claim_statuses: tuple[NodeAllocatableClaimStatus, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Pod:
    metadata: ObjectMeta
    spec: PodSpec = field(default_factory=PodSpec)
    status: PodStatus = field(default_factory=PodStatus)

    @property
    def effective_requests(self) -> FrozenMap[str, Quantity]:
        """What the pod needs from a node; computed on each call, so cache it if hot."""
        claimed = claim_requests(self.status.node_allocatable_resource_claim_statuses)
        return effective_requests(self.spec, claimed=claimed)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerImage:
    """`status.images[]`: one image's names (tag and digest forms) and its size."""

    names: tuple[str, ...] = ()
    size_bytes: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    metadata: ObjectMeta
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    allocatable: FrozenMap[str, Quantity] = field(default_factory=FrozenMap)
    ready: bool = False  # the Ready condition's status is "True"
    # status.declaredFeatures (NodeDeclaredFeatures): e.g. "DRAOptionalNodeOperations"
    declared_features: tuple[str, ...] = ()
    images: tuple[ContainerImage, ...] = ()  # status.images, for ImageLocality

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def labels(self) -> FrozenMap[str, str]:
        return self.metadata.labels


# -- effective requests ----------------------------------------------------------------------

_POD_LEVEL = frozenset({"cpu", "memory"})
_HUGEPAGES = "hugepages-"


def _add(total: dict[str, Quantity], more: Mapping[str, Quantity]) -> None:
    for name, q in more.items():
        total[name] = total[name] + q if name in total else q


def _raise_to(total: dict[str, Quantity], other: Mapping[str, Quantity]) -> None:
    for name, q in other.items():
        if name not in total or q > total[name]:
            total[name] = q


def _with_defaults(
    requests: Mapping[str, Quantity], defaults: Mapping[str, Quantity]
) -> Mapping[str, Quantity]:
    if all(name in requests for name in defaults):
        return requests
    return {**defaults, **requests}


def _container_requests(
    containers: Iterable[Container], init: Iterable[Container], defaults: Mapping[str, Quantity]
) -> dict[str, Quantity]:
    total: dict[str, Quantity] = {}
    for c in containers:
        _add(total, _with_defaults(c.requests, defaults))
    sidecars: dict[str, Quantity] = {}
    init_peak: dict[str, Quantity] = {}
    for c in init:
        requests = _with_defaults(c.requests, defaults)
        if c.restart_policy == "Always":
            _add(total, requests)
            _add(sidecars, requests)
            _raise_to(init_peak, sidecars)
        else:
            running = dict(requests)
            _add(running, sidecars)
            _raise_to(init_peak, running)
    _raise_to(total, init_peak)
    return total


_NO_DEFAULTS: FrozenMap[str, Quantity] = FrozenMap()


def effective_requests(
    spec: PodSpec,
    missing_defaults: Mapping[str, Quantity] = _NO_DEFAULTS,
    *,
    claimed: Mapping[str, Quantity] = _NO_DEFAULTS,
) -> FrozenMap[str, Quantity]:
    """`resource.PodRequests` for a pod spec; default options unless `missing_defaults`.

    `claimed` is what the pod's claims amount to in node-allocatable resources
    (`model.node_allocatable_claim_requests` of its status), added to the containers' requests
    before the pod-level requests override them, as `AggregateContainerRequests` does.

    `missing_defaults` is the `NonMissingContainerRequests` option: a container that does not
    name one of these resources at all is taken to request the given amount (kube-scheduler
    scores a container without a cpu or memory request as asking 100m and 200Mi).
    """
    total = _container_requests(spec.containers, spec.init_containers, missing_defaults)
    _add(total, claimed)
    for name, q in spec.resource_requests.items():
        if name in _POD_LEVEL or name.startswith(_HUGEPAGES):
            total[name] = q
    _add(total, spec.overhead)
    return FrozenMap(total)
