"""Turning claims into the search's request table and constraint objects.

Upstream's checks before the search (`Allocate`'s loop over claims and `validateDeviceRequest`),
in upstream's order and with its texts: gated shapes (subrequests, capacity requests, admin
access), selectors without CEL, class lookup, allocation modes (an `All` request enumerates its
devices now, so an incomplete or invalid pool is fatal for it), the 32-device claim limit and
constraint shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from dra_operator.allocator._capacity import CapacityError
from dra_operator.allocator._constraints import Constraint, DistinctAttribute, MatchAttribute
from dra_operator.allocator._features import Features
from dra_operator.allocator._pools import Pool, PoolID
from dra_operator.allocator._requests import (
    MAX_RESULTS,
    Candidate,
    Eligibility,
    RequestData,
    RequestKey,
    claim_ref,
)
from dra_operator.errors import AllocationInputError
from dra_operator.model import (
    AllocationMode,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    Quantity,
    ResourceClaim,
)

CapacityCheck = Callable[[RequestData, Candidate], bool | None]


@dataclass(slots=True, kw_only=True)
class Prepared:
    requests: dict[RequestKey, RequestData]
    subrequests: dict[tuple[int, int], int]  # number of subrequests, 0 without
    constraints: list[list[Constraint]]
    derived_claims: frozenset[int] = frozenset()  # claims with derived attributes


def prepare(
    claims: Sequence[ResourceClaim],
    classes: Mapping[str, DeviceClass],
    pools: Sequence[Pool],
    candidates: Sequence[Candidate],
    features: Features,
    eligibility: Eligibility,
    capacity_check: CapacityCheck | None,
) -> Prepared:
    prepared = Prepared(requests={}, subrequests={}, constraints=[])
    for c, claim in enumerate(claims):
        ref = claim_ref(claim)
        min_devices = 0
        for r, request in enumerate(claim.spec.requests):
            _check_gates(ref, request, features)
            prepared.subrequests[(c, r)] = len(request.first_available)
            counts = []
            alternatives: Sequence[DeviceRequest | DeviceSubRequest] = request.first_available or (
                request,
            )
            for s, sub in enumerate(alternatives):
                parent = request.name if request.first_available else ""
                data = _request_data(ref, (c, r, s), sub, parent, classes, features)
                _fill_devices(ref, data, pools, candidates, eligibility, capacity_check)
                prepared.requests[(c, r, s)] = data
                counts.append(data.num_devices)
            # 1.36.5 and 1.37.1 (#141307): per request, before adding, naming the request.
            if min(counts) > MAX_RESULTS - min_devices:
                raise AllocationInputError(
                    f"claim {ref}, request {request.name}: adding {min(counts)} devices exceeds "
                    f"the claim limit of {MAX_RESULTS}, with {min_devices} already accounted for"
                )
            min_devices += min(counts)
        prepared.constraints.append(_constraints(ref, claim, features))
    _share_equal_capacities(prepared.requests.values())
    prepared.derived_claims = frozenset(key[0] for key, d in prepared.requests.items() if d.derived)
    return prepared


def _share_equal_capacities(requests: Iterable[RequestData]) -> None:
    """Make equal capacity requests one object: memos keyed by it then hit by identity."""
    seen: dict[Mapping[str, Quantity], Mapping[str, Quantity]] = {}
    for data in requests:
        if data.capacity is not None:
            data.capacity = seen.setdefault(data.capacity, data.capacity)


def _check_gates(ref: str, request: DeviceRequest, features: Features) -> None:
    if request.first_available and not features.prioritized_list:
        raise AllocationInputError(
            f"claim {ref}, request {request.name}: has subrequests, but the DRAPrioritizedList "
            "feature is disabled"
        )
    if features.consumable_capacity or features.is_stable_tier:
        return
    if request.exactly is not None and request.exactly.capacity is not None:
        raise AllocationInputError(
            f"claim {ref}, request {request.name}: has capacity requests, but the "
            "DRAConsumableCapacity feature is disabled"
        )
    for sub in request.first_available:
        if sub.capacity is not None:
            raise AllocationInputError(
                f"claim {ref}, subrequest {sub.name}: has capacity requests, but the "
                "DRAConsumableCapacity feature is disabled"
            )


def _request_data(
    ref: str,
    key: RequestKey,
    request: DeviceRequest | DeviceSubRequest,
    parent: str,
    classes: Mapping[str, DeviceClass],
    features: Features,
) -> RequestData:
    body: ExactDeviceRequest | DeviceSubRequest
    if isinstance(request, DeviceRequest):
        if request.exactly is None:
            raise AllocationInputError(
                f"claim {ref}, request {request.name}: missing device class name "
                "(unsupported request type?)"
            )
        body, admin = request.exactly, request.exactly.admin_access
    else:
        body, admin = request, None
    name = request.name
    if body.derived_attributes and not features.derived_attributes:
        raise AllocationInputError(
            f"claim {ref}, request {name}: cannot handle request with derived attributes, the "
            "feature is disabled"
        )
    selectors = body.selectors
    for index, selector in enumerate(selectors):
        if selector.cel is None:
            raise AllocationInputError(
                f"claim {ref}, request {name}, selector #{index}: CEL expression empty "
                "(unsupported selector type?)"
            )
    if admin is not None and not features.admin_access:
        raise AllocationInputError(
            f"claim {ref}, request {name}: admin access is requested, but the feature is disabled"
        )
    class_name = body.device_class_name
    if not class_name:
        raise AllocationInputError(
            f"claim {ref}, request {name}: missing device class name (unsupported request type?)"
        )
    device_class = classes.get(class_name)
    if device_class is None:
        raise AllocationInputError(
            f"claim {ref}, request {name}: could not retrieve device class {class_name}: "
            f'deviceclass.resource.k8s.io "{class_name}" not found'
        )
    mode = body.allocation_mode
    if mode not in (AllocationMode.EXACT_COUNT, AllocationMode.ALL):
        raise AllocationInputError(f"claim {ref}, request {name}: unsupported count mode {mode}")
    capacity = body.capacity
    return RequestData(
        key=key,
        name=name,
        parent=parent,
        device_class=device_class,
        selectors=selectors,
        tolerations=body.tolerations,
        admin_access=bool(admin),
        capacity=capacity.requests if capacity is not None else None,
        all_devices=mode == AllocationMode.ALL,
        num_devices=body.count if mode == AllocationMode.EXACT_COUNT else 0,
        derived={d.name: d.expression for d in body.derived_attributes},
    )


def _fill_devices(
    ref: str,
    data: RequestData,
    pools: Sequence[Pool],
    candidates: Sequence[Candidate],
    eligibility: Eligibility,
    capacity_check: CapacityCheck | None,
) -> None:
    """`All` mode: every selectable device (that fits capacity-wise) of every pool, now."""
    if not data.all_devices:
        return
    by_pool: dict[PoolID, list[Candidate]] = {}
    for candidate in candidates:
        by_pool.setdefault(candidate.pool.id, []).append(candidate)
    for pool in pools:
        if pool.is_incomplete:
            raise AllocationInputError(
                f"claim {ref}, request {data.name}: asks for all devices, but resource pool "
                f"{pool.id} is currently being updated"
            )
        if pool.is_invalid:
            raise AllocationInputError(
                f"claim {ref}, request {data.name}: asks for all devices, but resource pool "
                f"{pool.id} is currently invalid"
            )
        for candidate in by_pool.get(pool.id, ()):
            if eligibility.check(data, candidate) is not None:
                continue
            try:
                if capacity_check is not None and not capacity_check(data, candidate):
                    continue
            except CapacityError as err:
                raise AllocationInputError(
                    f"claim {ref}, request {data.name}: checking capacity for device "
                    f"{candidate.device.name}: {err}"
                ) from err
            data.devices.append(candidate)
    data.num_devices = len(data.devices)


def _constraints(ref: str, claim: ResourceClaim, features: Features) -> list[Constraint]:
    found: list[Constraint] = []
    for index, constraint in enumerate(claim.spec.constraints):
        requests = frozenset(constraint.requests)
        lists = features.list_type_attributes
        if constraint.match_attribute is not None:
            found.append(
                MatchAttribute(
                    requests=requests,
                    attribute=constraint.match_attribute,
                    list_types=lists,
                    restore=features.since_137,
                )
            )
        elif constraint.distinct_attribute is not None and not features.is_stable_tier:
            found.append(
                DistinctAttribute(
                    requests=requests,
                    attribute=constraint.distinct_attribute,
                    list_types=lists,
                    per_device=features.since_137,
                )
            )
        else:
            raise AllocationInputError(
                f"claim {ref}, constraint #{index}: empty constraint (unsupported constraint type?)"
            )
    return found
