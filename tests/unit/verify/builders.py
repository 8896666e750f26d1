"""Small constructors of model objects for the invariant checks' tables.

Everything lives in namespace `ns` on driver `gpu.example.com` unless told otherwise; UIDs are
derived from names (`uid-<name>`) so a test can break one on purpose.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence

from dra_operator.model import (
    AllocationResult,
    CounterSet,
    Device,
    DeviceAllocationResult,
    DeviceCapacity,
    DeviceCounterConsumption,
    DeviceRequestAllocationResult,
    FrozenMap,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodExtendedResourceClaimStatus,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    PodStatus,
    Quantity,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
    ResourcePool,
    ResourceSlice,
)
from dra_operator.names import DELETE_PROTECTION_FINALIZER, POD_CLAIM_NAME_ANNOTATION

DRIVER = "gpu.example.com"
NS = "ns"
DELETED = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def q(text: str) -> Quantity:
    return Quantity.parse(text)


def device(
    name: str,
    *,
    multi: bool | None = None,
    capacity: Mapping[str, str] | None = None,
    counters: Mapping[str, Mapping[str, str]] | None = None,
) -> Device:
    return Device(
        name=name,
        allow_multiple_allocations=multi,
        capacity=FrozenMap(
            {f"{DRIVER}/{k}": DeviceCapacity(value=q(v)) for k, v in (capacity or {}).items()}
        ),
        consumes_counters=tuple(
            DeviceCounterConsumption(
                counter_set=set_name,
                counters=FrozenMap({k: q(v) for k, v in amounts.items()}),
            )
            for set_name, amounts in (counters or {}).items()
        ),
    )


def resource_slice(
    name: str,
    devices: Sequence[Device] = (),
    *,
    pool: str = "pool",
    generation: int = 1,
    count: int = 1,
    counter_sets: Mapping[str, Mapping[str, str]] | None = None,
    driver: str = DRIVER,
) -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=name, uid=f"uid-{name}"),
        driver=driver,
        pool=ResourcePool(name=pool, generation=generation, resource_slice_count=count),
        all_nodes=True,
        devices=tuple(devices),
        shared_counters=tuple(
            CounterSet(name=set_name, counters=FrozenMap({k: q(v) for k, v in amounts.items()}))
            for set_name, amounts in (counter_sets or {}).items()
        ),
    )


def result(
    device_name: str,
    *,
    pool: str = "pool",
    request: str = "req",
    admin: bool | None = None,
    share: str | None = None,
    consumed: Mapping[str, str] | None = None,
) -> DeviceRequestAllocationResult:
    return DeviceRequestAllocationResult(
        request=request,
        driver=DRIVER,
        pool=pool,
        device=device_name,
        admin_access=admin,
        share_id=share,
        consumed_capacity=FrozenMap({k: q(v) for k, v in (consumed or {}).items()}),
    )


def on_node(name: str) -> NodeSelector:
    """The node selector the allocator writes for node-local devices."""
    return NodeSelector(
        node_selector_terms=(
            NodeSelectorTerm(
                match_fields=(
                    NodeSelectorRequirement(key="metadata.name", operator="In", values=(name,)),
                )
            ),
        )
    )


def ref(pod_name: str, uid: str | None = None) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference(
        resource="pods", name=pod_name, uid=uid or f"uid-{pod_name}"
    )


def claim(
    name: str,
    results: Sequence[DeviceRequestAllocationResult] | None = None,
    *,
    reserved: Sequence[ResourceClaimConsumerReference] = (),
    node_selector: NodeSelector | None = None,
    finalizer: bool = True,
    owner: str | None = None,
    owner_uid: str | None = None,
    deleting: bool = False,
    annotations: Mapping[str, str] | None = None,
) -> ResourceClaim:
    """A claim; `results` None means unallocated, `owner` makes it generated for that pod."""
    allocation = (
        None
        if results is None
        else AllocationResult(
            devices=DeviceAllocationResult(results=tuple(results)), node_selector=node_selector
        )
    )
    return ResourceClaim(
        metadata=ObjectMeta(
            name=name,
            namespace=NS,
            uid=f"uid-{name}",
            finalizers=(DELETE_PROTECTION_FINALIZER,) if finalizer and results is not None else (),
            annotations=FrozenMap(
                annotations or ({POD_CLAIM_NAME_ANNOTATION: "gpu"} if owner else {})
            ),
            owner_references=(
                (
                    OwnerReference(
                        api_version="v1",
                        kind="Pod",
                        name=owner,
                        uid=owner_uid or f"uid-{owner}",
                        controller=True,
                    ),
                )
                if owner
                else ()
            ),
            deletion_timestamp=DELETED if deleting else None,
        ),
        status=ResourceClaimStatus(allocation=allocation, reserved_for=tuple(reserved)),
    )


def pod(
    name: str,
    *,
    claims: Mapping[str, str] | None = None,
    templates: Mapping[str, str] | None = None,
    generated: Mapping[str, str | None] | None = None,
    extended: str | None = None,
    node: str = "",
    phase: str = "Pending",
    uid: str | None = None,
    deleting: bool = False,
) -> Pod:
    """A pod using claims directly (`claims`: pod claim -> claim) or from templates.

    `templates` maps pod claim names to templates, `generated` the same names to the claim the
    controller recorded in `status.resourceClaimStatuses` (None: not needed).
    """
    entries = [
        PodResourceClaim(name=k, resource_claim_name=v) for k, v in (claims or {}).items()
    ] + [
        PodResourceClaim(name=k, resource_claim_template_name=v)
        for k, v in (templates or {}).items()
    ]
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace=NS,
            uid=uid or f"uid-{name}",
            deletion_timestamp=DELETED if deleting else None,
        ),
        spec=PodSpec(node_name=node, resource_claims=tuple(entries)),
        status=PodStatus(
            phase=phase,
            resource_claim_statuses=tuple(
                PodResourceClaimStatus(name=k, resource_claim_name=v)
                for k, v in (generated or {}).items()
            ),
            extended_resource_claim_status=(
                PodExtendedResourceClaimStatus(request_mappings=(), resource_claim_name=extended)
                if extended
                else None
            ),
        ),
    )


def node(name: str, **labels: str) -> Node:
    return Node(
        metadata=ObjectMeta(name=name, uid=f"uid-{name}", labels=FrozenMap(labels)), ready=True
    )
