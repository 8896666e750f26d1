"""Invariants of 1.30 named-resources allocations (`verify.check_named`).

Covers: a clean allocation passes; one instance in two claims (upstream 1.30's same-snapshot
quirk) is an over-allocation naming both; an instance no slice publishes; an allocation
without the 1.30 finalizer is a warning; classic claims (opaque `data`) are not checked.
"""

from __future__ import annotations

import dataclasses

from dra_operator.model import ObjectMeta, v1alpha2
from dra_operator.verify import Code, Severity, check_named

SLICE = v1alpha2.ResourceSlice(
    metadata=ObjectMeta(name="node-a-gpu"),
    node_name="node-a",
    driver_name="gpu.example.com",
    instances=(v1alpha2.NamedResourcesInstance(name="gpu-0"),),
)


def claim(name: str, instance: str = "gpu-0", finalizer: bool = True) -> v1alpha2.ResourceClaim:
    result = v1alpha2.DriverAllocationResult(
        named_resources=v1alpha2.NamedResourcesAllocationResult(name=instance)
    )
    handle = v1alpha2.ResourceHandle(
        driver_name="gpu.example.com",
        structured_data=v1alpha2.StructuredResourceHandle(node_name="node-a", results=(result,)),
    )
    return v1alpha2.ResourceClaim(
        metadata=ObjectMeta(
            name=name, namespace="ml", finalizers=(v1alpha2.FINALIZER,) if finalizer else ()
        ),
        spec=v1alpha2.ResourceClaimSpec(resource_class_name="gpu"),
        status=v1alpha2.ResourceClaimStatus(
            driver_name="gpu.example.com",
            allocation=v1alpha2.AllocationResult(resource_handles=(handle,)),
        ),
    )


def test_clean() -> None:
    assert check_named([claim("a")], [SLICE]) == []


def test_one_instance_in_two_claims_is_overallocated() -> None:
    [violation] = check_named([claim("a"), claim("b")], [SLICE])
    assert (violation.code, violation.name) == (
        Code.DEVICE_OVERALLOCATED,
        "node-a/gpu.example.com/gpu-0",
    )
    assert "ml/a, ml/b" in violation.message


def test_unpublished_instance() -> None:
    [violation] = check_named([claim("a", instance="gpu-7")], [SLICE])
    assert (violation.code, violation.name) == (Code.DEVICE_NOT_PUBLISHED, "ml/a")


def test_missing_finalizer_is_a_warning() -> None:
    [violation] = check_named([claim("a", finalizer=False)], [SLICE])
    assert (violation.code, violation.severity) == (Code.FINALIZER_MISSING, Severity.WARNING)


def test_classic_allocations_are_not_checked() -> None:
    classic = claim("a", finalizer=False)
    handle = v1alpha2.ResourceHandle(driver_name="classic.example.com", data="opaque")
    allocation = v1alpha2.AllocationResult(resource_handles=(handle,))
    classic = dataclasses.replace(
        classic, status=dataclasses.replace(classic.status, allocation=allocation)
    )
    assert check_named([classic, classic], []) == []
