"""1.30's structured parameters: named-resources allocation for resource.k8s.io/v1alpha2.

Upstream's 1.30 scheduler (classic-dra.md §6) looks up a claim's parameters (§6.2), then per
driver walks the requests in order and takes the first free instance on the node that passes
the class filter and the request selector, without backtracking; the result is one
`resourceHandles` entry per driver with `structuredData` (§6.4). We do the same, with one
deliberate difference: upstream allocates each claim of a pod against the same snapshot, so
two claims of one pod can receive the same instance. Here the claims of one pod are allocated
in order and each sees the instances the earlier ones took, so no instance is ever handed
out twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dra_operator import cel
from dra_operator.errors import CELError, DRAOperatorError
from dra_operator.model import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    node_matches,
    v1alpha2,
)

GROUP = "resource.k8s.io"
HOSTNAME_LABEL = "kubernetes.io/hostname"
NAMED_FEATURES = cel.CELFeatures(named_resources=True)

UNSUITABLE = "resourceclaim cannot be allocated for the node (unsuitable)"

InstanceKey = tuple[str, str, str]  # (node, driver, instance name)


class NamedAllocationError(DRAOperatorError):
    """Why a claim cannot be allocated; the text is upstream's scheduler message."""


@dataclass(frozen=True, slots=True)
class NamedClaim:
    """A claim with its class and looked-up parameters, ready to allocate."""

    claim: v1alpha2.ResourceClaim
    resource_class: v1alpha2.ResourceClass
    class_parameters: v1alpha2.ResourceClassParameters | None
    claim_parameters: v1alpha2.ResourceClaimParameters


def class_parameters(
    cls: v1alpha2.ResourceClass, candidates: Iterable[v1alpha2.ResourceClassParameters]
) -> v1alpha2.ResourceClassParameters | None:
    """The class's parameters: direct (ResourceClassParameters) or generated from its ref."""
    ref = cls.parameters_ref
    if ref is None:
        return None
    found = list(candidates)
    if ref.api_group == GROUP and ref.kind == "ResourceClassParameters":
        for params in found:
            meta = params.metadata
            if meta.name == ref.name and meta.namespace == ref.namespace:
                return params
        raise NamedAllocationError(f"class parameters {ref.namespace}/{ref.name} not found")
    for params in found:
        if params.generated_from == ref:
            return params
    raise NamedAllocationError(
        f"generated class parameters for {ref.kind}.{ref.api_group} {ref.name} not found"
    )


def claim_parameters(
    claim: v1alpha2.ResourceClaim,
    cls: v1alpha2.ResourceClass,
    candidates: Iterable[v1alpha2.ResourceClaimParameters],
) -> v1alpha2.ResourceClaimParameters:
    """The claim's parameters; without a ref, one instance of the class driver, shareable."""
    ref = claim.spec.parameters_ref
    namespace = claim.metadata.namespace
    if ref is None:
        request = v1alpha2.ResourceRequest(selector="true")
        return v1alpha2.ResourceClaimParameters(
            metadata=claim.metadata,
            shareable=True,
            driver_requests=(
                v1alpha2.DriverRequests(driver_name=cls.driver_name, requests=(request,)),
            ),
        )
    in_namespace = [p for p in candidates if p.metadata.namespace == namespace]
    if ref.api_group == GROUP and ref.kind == "ResourceClaimParameters":
        for params in in_namespace:
            if params.metadata.name == ref.name:
                return params
        raise NamedAllocationError(f"claim parameters {namespace}/{ref.name} not found")
    for params in in_namespace:
        if params.generated_from == ref:
            return params
    raise NamedAllocationError(
        f"generated claim parameters for {ref.kind}.{ref.api_group} {namespace}/{ref.name} "
        "not found"
    )


def taken_instances(claims: Iterable[v1alpha2.ResourceClaim]) -> set[InstanceKey]:
    """The instances that allocated claims hold (their `structuredData` results)."""
    taken: set[InstanceKey] = set()
    for claim in claims:
        allocation = claim.status.allocation
        if allocation is None:
            continue
        for handle in allocation.resource_handles:
            data = handle.structured_data
            if data is None:
                continue
            for result in data.results:
                if result.named_resources is not None:
                    taken.add((data.node_name, handle.driver_name, result.named_resources.name))
    return taken


def _instances(
    slices: Iterable[v1alpha2.ResourceSlice], node: str, driver: str
) -> list[v1alpha2.NamedResourcesInstance]:
    found: list[v1alpha2.NamedResourcesInstance] = []
    for resource_slice in slices:
        if resource_slice.node_name == node and resource_slice.driver_name == driver:
            found.extend(resource_slice.instances or ())
    return found


class NamedAllocator:
    """Allocates v1alpha2 structured claims on one node; compiled selectors are cached."""

    def __init__(self, selectors: cel.SelectorCache | None = None) -> None:
        self._selectors = selectors or cel.SelectorCache()

    def _matches(self, expression: str, view: cel.NamedView) -> bool:
        return self._selectors.get(expression, NAMED_FEATURES).matches(view)

    def allocate(
        self,
        claims: Sequence[NamedClaim],
        *,
        node: str,
        node_labels: Mapping[str, str],
        slices: Sequence[v1alpha2.ResourceSlice],
        taken: set[InstanceKey],
    ) -> list[tuple[str, v1alpha2.AllocationResult]]:
        """(driverName, allocation) per claim, in order; raises NamedAllocationError."""
        used = set(taken)
        results = []
        for named in claims:
            suitable = named.resource_class.suitable_nodes
            if suitable is not None and not node_matches(node, node_labels, suitable):
                raise NamedAllocationError(UNSUITABLE)
            handles = [
                self._driver(named, i, node, slices, used)
                for i in range(len(named.claim_parameters.driver_requests))
            ]
            allocation = v1alpha2.AllocationResult(
                resource_handles=tuple(handles),
                available_on_nodes=_on_node(node),
                shareable=named.claim_parameters.shareable,
            )
            results.append((named.resource_class.driver_name, allocation))
        return results

    def _driver(
        self,
        named: NamedClaim,
        index: int,
        node: str,
        slices: Sequence[v1alpha2.ResourceSlice],
        used: set[InstanceKey],
    ) -> v1alpha2.ResourceHandle:
        driver_requests = named.claim_parameters.driver_requests[index]
        driver = driver_requests.driver_name
        params = named.class_parameters
        filters = {f.driver_name: f.selector for f in params.filters} if params else {}
        vendor = {v.driver_name: v.parameters for v in params.vendor_parameters} if params else {}
        class_filter = filters.get(driver)
        instances = _instances(slices, node, driver)
        results = []
        for j, request in enumerate(driver_requests.requests):
            if request.selector is None:
                meta = named.claim_parameters.metadata
                raise NamedAllocationError(
                    f"claim parameters {meta.namespace}/{meta.name}: "
                    f"driverRequersts[{index}].requests[{j}]: "
                    "no supported structured parameters found"
                )
            pick = self._first_free(instances, class_filter, request.selector, node, driver, used)
            used.add((node, driver, pick))
            results.append(
                v1alpha2.DriverAllocationResult(
                    vendor_request_parameters=request.vendor_parameters,
                    named_resources=v1alpha2.NamedResourcesAllocationResult(name=pick),
                )
            )
        return v1alpha2.ResourceHandle(
            driver_name=driver,
            structured_data=v1alpha2.StructuredResourceHandle(
                node_name=node,
                vendor_class_parameters=vendor.get(driver),
                vendor_claim_parameters=driver_requests.vendor_parameters,
                results=tuple(results),
            ),
        )

    def _first_free(
        self,
        instances: Sequence[v1alpha2.NamedResourcesInstance],
        class_filter: str | None,
        selector: str,
        node: str,
        driver: str,
        used: set[InstanceKey],
    ) -> str:
        where = (
            f'checking structured parameters failed: checking node "{node}" '
            f'and resources of driver "{driver}"'
        )
        for instance in instances:
            if (node, driver, instance.name) in used:
                continue
            view = cel.named_view(instance)
            try:
                if class_filter is not None and not self._matches(class_filter, view):
                    continue
            except CELError as err:
                raise NamedAllocationError(
                    f"{where}: evaluate filter CEL expression: {err}"
                ) from None
            try:
                if self._matches(selector, view):
                    return instance.name
            except CELError as err:
                raise NamedAllocationError(
                    f"{where}: evaluate request CEL expression: {err}"
                ) from None
        raise NamedAllocationError(UNSUITABLE)


def _on_node(node: str) -> NodeSelector:
    requirement = NodeSelectorRequirement(key=HOSTNAME_LABEL, operator="In", values=(node,))
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_expressions=(requirement,)),))


def allocate_named(
    claims: Sequence[NamedClaim],
    *,
    node: str,
    node_labels: Mapping[str, str],
    slices: Sequence[v1alpha2.ResourceSlice],
    allocated: Iterable[v1alpha2.ResourceClaim],
) -> list[tuple[str, v1alpha2.AllocationResult]]:
    """Allocate `claims` (one pod's, in order) on `node` against the allocated claims."""
    return NamedAllocator().allocate(
        claims, node=node, node_labels=node_labels, slices=slices, taken=taken_instances(allocated)
    )
