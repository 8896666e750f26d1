"""The ResourcePoolStatusRequest controller (KEP-5677, resource.k8s.io/v1alpha3).

`PoolStatusReconciler` answers each request once with its pools' devices, allocations and
counters (`answer`, pure), through `PoolStatusWriter` (`KubePoolStatusWriter` over
`kube.Client`), and deletes expired requests (`expired`). It runs only where the API server
serves the kind (gate DRAResourcePoolStatus and v1alpha3 enabled). See docs/poolstatus.md.
"""

from dra_operator.controllers.poolstatus._answer import Answer, answer
from dra_operator.controllers.poolstatus._controller import (
    ANSWERED_TTL,
    CLEANUP_PERIOD,
    MAX_RETRIES,
    PENDING_TTL,
    QUEUE,
    PoolStatusReconciler,
    PoolStatusWriter,
    expired,
)
from dra_operator.controllers.poolstatus._kube import KubePoolStatusWriter

__all__ = [
    "ANSWERED_TTL",
    "CLEANUP_PERIOD",
    "MAX_RETRIES",
    "PENDING_TTL",
    "QUEUE",
    "Answer",
    "KubePoolStatusWriter",
    "PoolStatusReconciler",
    "PoolStatusWriter",
    "answer",
    "expired",
]
