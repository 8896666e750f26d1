"""Invariants of 1.30's named-resources allocations (resource.k8s.io/v1alpha2).

An instance is `(node, driver, name)`, taken by each `structuredData` result naming it. 1.30
has no sharing of instances: two results naming one instance (in one claim or two) are a
double allocation, which upstream's 1.30 scheduler could produce for two claims of one pod and
`allocator.allocate_named` never does. Every allocated instance must be published by a slice
of that node and driver. A structured allocation without 1.30's `dra.k8s.io/delete-protection`
finalizer is a warning (the claim could be deleted while in use).
"""

from __future__ import annotations

import collections
from collections.abc import Iterable

from dra_operator.model import v1alpha2
from dra_operator.verify._state import Code, Severity, Violation

__all__ = ["check_named"]

_Instance = tuple[str, str, str]


def _name(claim: v1alpha2.ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def _uses(claim: v1alpha2.ResourceClaim) -> list[_Instance]:
    allocation = claim.status.allocation
    found: list[_Instance] = []
    for handle in allocation.resource_handles if allocation else ():
        data = handle.structured_data
        for result in data.results if data else ():
            if data is not None and result.named_resources is not None:
                found.append((data.node_name, handle.driver_name, result.named_resources.name))
    return found


def check_named(
    claims: Iterable[v1alpha2.ResourceClaim], slices: Iterable[v1alpha2.ResourceSlice]
) -> list[Violation]:
    """The violations among v1alpha2 claims and slices (see the module docstring)."""
    published = {(s.node_name, s.driver_name, i.name) for s in slices for i in (s.instances or ())}
    holders: dict[_Instance, list[str]] = collections.defaultdict(list)
    violations: list[Violation] = []
    for claim in claims:
        uses = _uses(claim)
        for instance in uses:
            holders[instance].append(_name(claim))
            if instance not in published:
                violations.append(
                    Violation(
                        code=Code.DEVICE_NOT_PUBLISHED,
                        kind="ResourceClaim",
                        name=_name(claim),
                        message=f"instance {'/'.join(instance)} is published by no slice",
                    )
                )
        if uses and v1alpha2.FINALIZER not in claim.metadata.finalizers:
            violations.append(
                Violation(
                    code=Code.FINALIZER_MISSING,
                    kind="ResourceClaim",
                    name=_name(claim),
                    message=f"allocated without the {v1alpha2.FINALIZER} finalizer",
                    severity=Severity.WARNING,
                )
            )
    for instance, names in sorted(holders.items()):
        if len(names) > 1:
            violations.append(
                Violation(
                    code=Code.DEVICE_OVERALLOCATED,
                    kind="Device",
                    name="/".join(instance),
                    message=f"allocated {len(names)} times, to {', '.join(sorted(names))}",
                )
            )
    return violations
