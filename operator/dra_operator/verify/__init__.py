"""verify: the invariant checker behind `dra-operator verify`.

`check` is pure: from a `ClusterState` (claims, slices, pods, nodes as model values) to the
list of `Violation`s: devices allocated beyond what admin access, shares, capacity and
counters allow; allocations without a complete pool publishing the device; stale or invalid
reservations; bound pods whose claims are missing, unallocated, unreserved or pinned to other
nodes; generated claims without a live owner; allocated claims without the delete-protection
finalizer (a warning); kube-scheduler and dra-operator both placing pods with claims with no
routing policy between them, and pods another scheduler places although they ask for a
DRA-backed extended resource while routing is installed (docs/coexistence.md).
`read_cluster` is the thin I/O that builds the state through `kube`. `check_named` is the
same for 1.30's v1alpha2 named-resources allocations (instances allocated twice or not
published, finalizer missing).
"""

from dra_operator.verify._check import check
from dra_operator.verify._coexistence import unrouted_names
from dra_operator.verify._consumers import RESERVED_FOR_MAX_SIZE
from dra_operator.verify._named import check_named
from dra_operator.verify._read import newest_version, read_cluster
from dra_operator.verify._state import ClusterState, Code, Schedulers, Severity, Violation

__all__ = [
    "RESERVED_FOR_MAX_SIZE",
    "ClusterState",
    "Code",
    "Schedulers",
    "Severity",
    "Violation",
    "check",
    "check_named",
    "newest_version",
    "read_cluster",
    "unrouted_names",
]
