"""Extended resources backed by DRA (KEP-5004): resource name → DeviceClass, and the special claim.

A container may ask for `example.com/gpu: 2` in `resources.requests`; a DeviceClass whose
`spec.extendedResourceName` is that name (or any class, as `deviceclass.resource.kubernetes.io/
<class>`) serves it from DRA devices on nodes that do not advertise the name in
`status.allocatable`. The scheduler then allocates one claim per pod, built here as kube-scheduler
v1.36.4 builds it (`extendeddynamicresources.go`, upstream-1.37.md §6): generateName
`<pod>-extended-resources-`, the pod as controller owner, the annotation
`resource.kubernetes.io/extended-resource-claim: "true"`, one ExactCount request
`container-<i>-request-<j>` per container and resource, and the container → request mappings
that go into `pod.status.extendedResourceClaimStatus`. Pure functions of model values.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dra_operator import names
from dra_operator.model._frozen import FrozenMap
from dra_operator.model._nodeaffinity import is_label_key
from dra_operator.model._pod import Container, ContainerExtendedResourceRequest, Pod
from dra_operator.model._quantity import Quantity
from dra_operator.model._types import (
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
    ObjectMeta,
    OwnerReference,
    ResourceClaim,
)

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
"""The implicit extended resource name of every DeviceClass is this prefix plus its name."""

SPECIAL_CLAIM_NAME = "<extended-resources>"
"""The in-memory claim's name until the API server generates one (invalid on purpose)."""

_NATIVE_DOMAIN = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."
_EPOCH = datetime.datetime.min.replace(tzinfo=datetime.UTC)


def is_extended_resource_name(name: str) -> bool:
    """core/v1 helper `IsExtendedResourceName`: a domain-prefixed name outside kubernetes.io."""
    if "/" not in name or _NATIVE_DOMAIN in name or name.startswith(_REQUESTS_PREFIX):
        return False
    return is_label_key(_REQUESTS_PREFIX + name)


def is_dra_extended_resource_name(name: str) -> bool:
    """kube-scheduler's `IsDRAExtendedResourceName`: could a DeviceClass serve this name?"""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


@dataclass(frozen=True, slots=True)
class ExtendedResourceClasses:
    """Which DeviceClass serves an extended resource name (upstream's ExtendedResourceCache).

    Several classes naming the same `extendedResourceName`: the one created last wins, equal
    timestamps go to the smallest class name (the rule upstream fixed in 1.38, #141110). The
    implicit name `deviceclass.resource.kubernetes.io/<class>` always maps to its class.
    """

    by_name: FrozenMap[str, str]

    @classmethod
    def of(cls, classes: Iterable[DeviceClass]) -> ExtendedResourceClasses:
        mapping: dict[str, str] = {}
        winners: dict[str, tuple[datetime.datetime, str]] = {}
        for device_class in classes:
            meta = device_class.metadata
            implicit = DEVICE_CLASS_PREFIX + meta.name
            if is_label_key(implicit):
                mapping[implicit] = meta.name
            explicit = device_class.extended_resource_name
            if not explicit:
                continue
            created = meta.creation_timestamp or _EPOCH
            best = winners.get(explicit)
            if best is None or created > best[0] or (created == best[0] and meta.name < best[1]):
                winners[explicit] = (created, meta.name)
        mapping.update({name: winner[1] for name, winner in winners.items()})
        return cls(FrozenMap(mapping))

    def class_for(self, resource: str) -> str | None:
        return self.by_name.get(resource) if is_dra_extended_resource_name(resource) else None


def wants_extended_resources(requests: Mapping[str, Quantity]) -> bool:
    """Cheap first test: the pod asks a non-zero amount of a name a class could serve."""
    return any(q.sign > 0 and is_dra_extended_resource_name(n) for n, q in requests.items())


def dra_backed(
    requests: Mapping[str, Quantity], classes: ExtendedResourceClasses
) -> FrozenMap[str, Quantity]:
    """The pod's non-zero requests that a DeviceClass maps (PreFilter: does DRA take part?)."""
    return FrozenMap(
        {n: q for n, q in requests.items() if q.sign > 0 and classes.class_for(n) is not None}
    )


def served_by_dra(
    backed: Mapping[str, Quantity], allocatable: Mapping[str, Quantity]
) -> frozenset[str]:
    """The DRA-backed names this node must serve from devices: it does not advertise them.

    A node with a positive `status.allocatable` for a name serves it by its device plugin, and
    NodeResourcesFit checks it as any scalar resource (upstream `shouldDelegateResourceToDRA`).
    """
    return frozenset(n for n in backed if (q := allocatable.get(n)) is None or q.sign <= 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtendedClaim:
    """The claim one node needs for the pod's DRA-backed extended resources, and its mappings."""

    claim: ResourceClaim
    mappings: tuple[ContainerExtendedResourceRequest, ...]


def special_claim(
    pod: Pod, resources: Iterable[str], classes: ExtendedResourceClasses
) -> ExtendedClaim | None:
    """The node-specific claim for `resources` (None when no container asks for them).

    Its UID is a stand-in, unique per pod, under which the allocation is in flight until the
    API server has created the real claim.
    """
    requests, mappings = requests_and_mappings(pod, resources, classes)
    if not requests:
        return None
    meta = pod.metadata
    claim = ResourceClaim(
        metadata=ObjectMeta(
            name=SPECIAL_CLAIM_NAME,
            namespace=meta.namespace,
            uid=f"{SPECIAL_CLAIM_NAME}{meta.uid}",
            generate_name=f"{meta.name}-extended-resources-",
            annotations=FrozenMap({names.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}),
            owner_references=(
                OwnerReference(
                    api_version="v1", kind="Pod", name=meta.name, uid=meta.uid, controller=True
                ),
            ),
        ),
        spec=DeviceClaim(requests=requests),
    )
    return ExtendedClaim(claim=claim, mappings=mappings)


def is_special_claim_name(name: str) -> bool:
    """Whether `name` is the in-memory claim's (not created in the API server yet)."""
    return name == SPECIAL_CLAIM_NAME


def find_extended_claim(pod: Pod, claims: Iterable[ResourceClaim]) -> ResourceClaim | None:
    """A claim made for this pod's extended resources by an earlier attempt, if any."""
    meta = pod.metadata
    for claim in claims:
        if claim.metadata.annotations.get(names.EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        if any(
            o.controller and o.name == meta.name and o.uid == meta.uid
            for o in claim.metadata.owner_references
        ):
            return claim
    return None


def requests_and_mappings(
    pod: Pod, resources: Iterable[str], classes: ExtendedResourceClasses
) -> tuple[tuple[DeviceRequest, ...], tuple[ContainerExtendedResourceRequest, ...]]:
    """upstream `createRequestsAndMappings`: requests sorted by name, mappings per resource.

    Containers are the init containers followed by the regular ones; `i` is the index in that
    list. Regular and sidecar containers get a request each. A plain init container first reuses
    the requests of the long-lived containers at or after its index, and asks only for the rest;
    of the plain init containers' requests only the largest is kept, and all of them map to it.
    """
    containers = (*pod.spec.init_containers, *pod.spec.containers)
    first_regular = len(pod.spec.init_containers)
    long_lived = [
        i for i, c in enumerate(containers) if i >= first_regular or c.restart_policy == "Always"
    ]
    short_lived = [i for i in range(first_regular) if i not in long_lived]
    requests: list[DeviceRequest] = []
    mappings: list[ContainerExtendedResourceRequest] = []
    for resource in sorted(resources):
        class_name = classes.class_for(resource)
        if class_name is None:
            continue
        per_container: list[DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[ContainerExtendedResourceRequest] = []
        for i in long_lived:
            request, found = _container_request(i, containers[i], resource, class_name, ())
            per_container[i] = request
            long_mappings += found
        largest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[ContainerExtendedResourceRequest] = []
        for i in short_lived:
            request, found = _container_request(
                i, containers[i], resource, class_name, per_container[i:]
            )
            if request is not None:
                short_names.add(request.name)
                if largest is None or _count(largest) < _count(request):
                    largest = request
            short_mappings += found
        if largest is not None and len(short_names) > 1:
            short_mappings = [
                _renamed(m, largest.name) if m.request_name in short_names else m
                for m in short_mappings
            ]
        if largest is not None:
            requests.append(largest)
        requests += [r for r in per_container if r is not None]
        mappings += long_mappings + short_mappings
    return tuple(sorted(requests, key=lambda r: r.name)), tuple(mappings)


def _count(request: DeviceRequest) -> int:
    assert request.exactly is not None
    return request.exactly.count


def _renamed(
    mapping: ContainerExtendedResourceRequest, name: str
) -> ContainerExtendedResourceRequest:
    return ContainerExtendedResourceRequest(
        container_name=mapping.container_name,
        resource_name=mapping.resource_name,
        request_name=name,
    )


def _container_request(
    index: int,
    container: Container,
    resource: str,
    class_name: str,
    reusable: Sequence[DeviceRequest | None],
) -> tuple[DeviceRequest | None, list[ContainerExtendedResourceRequest]]:
    """upstream `createResourceRequestAndMappings` for one container and one resource."""
    quantity = container.requests.get(resource)
    if quantity is None or not quantity.is_integer() or quantity.sign <= 0:
        return None, []
    wanted = quantity.int_value()
    mappings: list[ContainerExtendedResourceRequest] = []
    covered = 0
    for other in reusable:
        if other is None:
            continue
        covered += _count(other)
        mappings.append(_mapping(container, resource, other.name))
        if covered >= wanted:
            return None, mappings
    position = sorted(container.requests).index(resource)
    name = f"container-{index}-request-{position}"
    request = DeviceRequest(
        name=name,
        exactly=ExactDeviceRequest(device_class_name=class_name, count=wanted - covered),
    )
    mappings.append(_mapping(container, resource, name))
    return request, mappings


def _mapping(container: Container, resource: str, request: str) -> ContainerExtendedResourceRequest:
    return ContainerExtendedResourceRequest(
        container_name=container.name, resource_name=resource, request_name=request
    )
