"""What the invariant checks read and what they report.

`ClusterState` is a point-in-time copy of the objects the checks need, already parsed into the
model; `Violation` is one broken invariant, named by a stable `Code` so tests and scripts can
match on it while the sentence stays free to improve.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dra_operator.model import (
    DeviceClass,
    DeviceTaintRule,
    Node,
    Pod,
    PodGroup,
    ResourceClaim,
    ResourceSlice,
    v1alpha2,
)

__all__ = ["ClusterState", "Code", "Schedulers", "Severity", "Violation"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Schedulers:
    """Who else may allocate devices: `kube_scheduler` is its Lease (namespace/name) when it
    is held, else None; `routing`: a routing policy of deploy/components is bound."""

    kube_scheduler: str | None = None
    routing: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterState:
    """Every claim, slice, pod and node of the cluster, as one consistent-enough snapshot.

    `classes` and `rules` (the DeviceTaintRules) are read only on request (see `read_cluster`);
    `schedulers` is None when it was not read (or could not be); `pod_groups` None when the
    server serves no PodGroups. On a 1.30 server the claims
    are also kept as they are (`named_claims`), with 1.30's slices, for `check_named`.
    """

    claims: tuple[ResourceClaim, ...] = ()
    slices: tuple[ResourceSlice, ...] = ()
    pods: tuple[Pod, ...] = ()
    nodes: tuple[Node, ...] = ()
    classes: tuple[DeviceClass, ...] = ()
    rules: tuple[DeviceTaintRule, ...] = ()
    schedulers: Schedulers | None = None
    pod_groups: tuple[PodGroup, ...] | None = None  # None: the server serves no PodGroups
    named_claims: tuple[v1alpha2.ResourceClaim, ...] = ()
    named_slices: tuple[v1alpha2.ResourceSlice, ...] = ()


class Severity(enum.StrEnum):
    """`error` breaks an invariant the control plane promises; `warning` is suspicious only."""

    ERROR = "error"
    WARNING = "warning"


class Code(enum.StrEnum):
    """One value per invariant; the sentence of a Violation says the details."""

    # devices
    DEVICE_OVERALLOCATED = "device-overallocated"
    SHARE_DUPLICATED = "share-duplicated"
    CAPACITY_EXCEEDED = "capacity-exceeded"
    COUNTERS_EXCEEDED = "counters-exceeded"
    DEVICE_NOT_PUBLISHED = "device-not-published"
    POOL_INCOMPLETE = "pool-incomplete"
    # reservations and consumers
    RESERVATION_STALE = "reservation-stale"
    RESERVED_FOR_INVALID = "reserved-for-invalid"
    POD_CLAIM_MISSING = "pod-claim-missing"
    POD_CLAIM_UNALLOCATED = "pod-claim-unallocated"
    POD_CLAIM_UNRESERVED = "pod-claim-unreserved"
    POD_NODE_NOT_ADMITTED = "pod-node-not-admitted"
    OWNER_MISSING = "owner-missing"
    FINALIZER_MISSING = "finalizer-missing"
    # configuration
    UNSAFE_CONFIGURATION = "unsafe-configuration"


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One broken invariant: the object it is about and a sentence a user can act on.

    `kind` is the API kind (`ResourceClaim`, `Pod`) or `Device` for a device, `name` is
    `namespace/name`, a node or slice name, or `driver/pool/device`.
    """

    code: Code
    kind: str
    name: str
    message: str
    severity: Severity = Severity.ERROR
