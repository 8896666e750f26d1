"""A pod's requests in framework units, as kube-scheduler's `framework.Resource` holds them.

`cpu` becomes millicores, every other resource whole units rounded up (`Quantity.Value()`).
Only the resources upstream keeps are kept: cpu, memory, ephemeral-storage and the scalar
resources (extended `domain/name`, `hugepages-*`, `attachable-volumes-*`, prefixed native);
anything else a pod names (e.g. `pods`, or a plain unknown name) is dropped, as
`Resource.SetMaxResource` drops it.
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator.controllers.scheduler.framework._nodeinfo import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
)
from dra_operator.model import (
    FrozenMap,
    Pod,
    Quantity,
    effective_requests,
    node_allocatable_claim_requests,
)

EPHEMERAL_STORAGE = "ephemeral-storage"
_NATIVE = frozenset({CPU, MEMORY, EPHEMERAL_STORAGE})
_SCALAR_PREFIXES = ("hugepages-", "attachable-volumes-")
_NON_ZERO_DEFAULTS = FrozenMap(
    {
        CPU: Quantity.parse(f"{DEFAULT_MILLI_CPU_REQUEST}m"),
        MEMORY: Quantity(DEFAULT_MEMORY_REQUEST),
    }
)


def is_scalar_resource(name: str) -> bool:
    """`IsScalarResourceName`: extended, hugepages, attachable volumes or prefixed native."""
    if name.startswith(_SCALAR_PREFIXES):
        return True
    return "/" in name and not name.startswith("requests.")


def to_units(requests: Mapping[str, Quantity]) -> dict[str, int]:
    """Quantities in framework units, without the resources upstream does not track."""
    units: dict[str, int] = {}
    for name, q in requests.items():
        if name == CPU:
            units[name] = q.milli_value()
        elif name in _NATIVE or is_scalar_resource(name):
            units[name] = q.int_value()
    return units


def pod_requests(pod: Pod) -> dict[str, int]:
    """What NodeResourcesFit's PreFilter computes: `resource.PodRequests`, in units, with
    what the pod's claims amount to in node-allocatable resources (DRANodeAllocatableResources:
    `pod.status.nodeAllocatableResourceClaimStatuses`, present only with the gate on)."""
    return to_units(pod.effective_requests)


def non_zero_requests(pod: Pod) -> dict[str, int]:
    """cpu and memory as scored: a container naming neither asks 100m and 200 MiB."""
    claimed = node_allocatable_claim_requests(pod.status.node_allocatable_resource_claim_statuses)
    requests = to_units(effective_requests(pod.spec, _NON_ZERO_DEFAULTS, claimed=claimed))
    return {CPU: requests.get(CPU, 0), MEMORY: requests.get(MEMORY, 0)}
