"""Writes another scheduler or claims controller made: the after-the-fact sign of two.

The routing policies (docs/coexistence.md) keep kube-scheduler away from pods with claims; a
claim that nevertheless gets its `status.allocation` from another field manager while our
scheduler runs shows a second allocator at work (kube-scheduler under a Lease name we do not
watch, a third scheduler, a policy removed). The operator says so (log, metric, Event): it
cannot undo a collision that may already have happened, and it does not refuse the pools, since
routing, not a guard, is what makes double allocation impossible.

Who wrote the allocation is read from `metadata.managedFields`: the entry that owns
`f:status` → `f:allocation`. kube-scheduler writes as `kube-scheduler` (its user agent).

Likewise a claim generated for a pod (annotation `resource.kubernetes.io/pod-claim-name`) that
another field manager created shows another claims controller: kube-controller-manager under a
Lease name we do not watch, or without leader election. The operator then pauses its own
(`claim_creator`), whatever the Leases say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra_operator import names

__all__ = ["allocated_pools", "allocation_manager", "claim_creator", "is_foreign_allocation"]

_POD_CLAIM_FIELD = f"f:{names.POD_CLAIM_NAME_ANNOTATION}"


def allocation_manager(raw: Mapping[str, Any]) -> str | None:
    """The field manager that owns `status.allocation`, or None when none does."""
    for entry in (raw.get("metadata") or {}).get("managedFields") or ():
        status = ((entry.get("fieldsV1") or {}).get("f:status")) or {}
        if "f:allocation" in status:
            return str(entry.get("manager") or "")
    return None


def is_foreign_allocation(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> str | None:
    """The other field manager that just allocated this claim (absent before, present now),
    or None when nothing was allocated now or we did it."""
    if old is None or _allocation(old) or not _allocation(new):
        return None
    if _not_ours_to_allocate(_allocation(new)):
        return None  # a classic driver allocates its own claims (docs/classic.md)
    manager = allocation_manager(new)
    if manager is None or manager == names.OPERATOR_FIELD_MANAGER:
        return None
    return manager


def _not_ours_to_allocate(allocation: Mapping[str, Any]) -> bool:
    """1.31's `allocation.controller`, or a v1alpha2 allocation without 1.30's
    `structuredData`: a classic driver's, which allocates its own claims (docs/classic.md)."""
    if allocation.get("controller"):
        return True
    return "devices" not in allocation and not _named_handles(allocation)


def _named_handles(allocation: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """1.30's named-resources handles (`structuredData`), which a scheduler allocates."""
    handles = allocation.get("resourceHandles") or ()
    return [h for h in handles if h.get("structuredData") is not None]


def claim_creator(raw: Mapping[str, Any]) -> str | None:
    """The field manager that set the pod-claim-name annotation of a generated claim (its
    creator), or None for a claim not generated for a pod."""
    for entry in (raw.get("metadata") or {}).get("managedFields") or ():
        metadata = ((entry.get("fieldsV1") or {}).get("f:metadata")) or {}
        if _POD_CLAIM_FIELD in (metadata.get("f:annotations") or {}):
            return str(entry.get("manager") or "")
    return None


def allocated_pools(raw: Mapping[str, Any]) -> list[str]:
    """`driver/pool` of every device result (1.30: `driver/node`), sorted, each once."""
    allocation = _allocation(raw)
    results = (allocation.get("devices") or {}).get("results") or ()
    pools = {f"{r.get('driver')}/{r.get('pool')}" for r in results}
    for handle in _named_handles(allocation):
        pools.add(f"{handle.get('driverName')}/{handle['structuredData'].get('nodeName')}")
    return sorted(pools)


def _allocation(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    return (raw.get("status") or {}).get("allocation") or {}
