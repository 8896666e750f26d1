"""What `kubectl dra explain` reports: a diagnosis of a claim or pod, node by node and, for a
node that does not fit, request by request as a funnel of stages (built by cli/_diagnose.py,
printed by cli/_explain.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dra_operator.allocator import Reason
from dra_operator.hooks import AllocationPolicy

__all__ = [
    "OPTIONAL_STAGES",
    "STAGES",
    "AllocatedClaim",
    "Diagnosis",
    "NodeVerdict",
    "Policies",
    "RequestFunnel",
    "Stage",
]

# funnel stage -> the explanation reasons that drop devices at it, in the order they are checked
STAGES: tuple[tuple[str, frozenset[Reason]], ...] = (
    (
        "class selector",
        frozenset({Reason.BINDING_CONDITIONS, Reason.CLASS_SELECTOR, Reason.SELECTOR_ERROR}),
    ),
    ("request selector", frozenset({Reason.REQUEST_SELECTOR})),
    ("node", frozenset({Reason.NODE, Reason.NODE_OPERATIONS, Reason.PARTITIONABLE_DISABLED})),
    ("taints", frozenset({Reason.TAINT})),
    ("free", frozenset({Reason.IN_USE, Reason.CAPACITY, Reason.COUNTERS})),
    ("policy", frozenset({Reason.POLICY})),
)
OPTIONAL_STAGES = frozenset({"node", "policy"})  # shown only when they drop something


@dataclass(frozen=True, slots=True, kw_only=True)
class Stage:
    name: str
    remaining: int
    dropped: tuple[str, ...]  # the rejection groups, as sentences


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFunnel:
    claim: str
    request: str
    considered: int
    needed: int  # 0: "All" (every matching device, at least one)
    stages: tuple[Stage, ...]
    blocking: str  # "" when this request alone could be served


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeVerdict:
    node: str
    fits: bool
    summary: str
    requests: tuple[RequestFunnel, ...] = ()
    pools: tuple[str, ...] = ()
    node_problems: tuple[str, ...] = ()  # the scheduler's node filters that reject it
    plugin: str = ""  # the framework plugin whose Filter rejects it


@dataclass(frozen=True, slots=True, kw_only=True)
class AllocatedClaim:
    claim: str
    node: str
    devices: tuple[str, ...]  # "request: driver/pool/device"


@dataclass(frozen=True, slots=True, kw_only=True)
class Policies:
    """The AllocationPolicies of the cluster and the labels of the namespaces they select on."""

    policies: tuple[AllocationPolicy, ...] = ()
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def labels(self, namespace: str) -> Mapping[str, str]:
        return self.namespace_labels.get(namespace, {})


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnosis:
    subject: str  # "claim ns/name" or "pod ns/name"
    allocated: tuple[AllocatedClaim, ...] = ()
    pending: tuple[str, ...] = ()  # claims of the unallocated set
    missing: tuple[str, ...] = ()  # pod claims that do not exist (yet)
    nodes: tuple[NodeVerdict, ...] = ()
    error: str = ""
    policy: str = ""  # the AllocationPolicy the pending claims were tried with; "" when none
    strategy: str = ""  # its strategy, or FirstFit; "" when nothing was tried
    hooks_not_run: tuple[str, ...] = ()  # the policy's hooks, which explain does not load
    extended: tuple[str, ...] = ()  # "<resource>: <count> from DeviceClass <class>"
    classic: tuple[str, ...] = ()  # "ns/claim by <driver>": a classic driver allocates them
    named: tuple[str, ...] = ()  # "ns/claim of <class>": 1.30 named resources, not explained

    @property
    def is_allocated(self) -> bool:
        waiting = self.pending or self.missing or self.classic or self.named
        return not waiting and not self.error
