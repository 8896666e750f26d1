"""Building each claim's AllocationResult from the search's picks (upstream's rules per release).

Results in pick order; config: the classes' configs first (one entry set per class, listing
every request that used it, with the chosen subrequest's class), then the claim's configs that
apply. 1.36 appends a claim config once per matching request (duplicates are upstream's
behaviour in that release); 1.37 appends it once, then clears `requests` of every entry that
names all of the claim's requests (a firstAvailable request by itself or by its chosen
`<request>/<subrequest>`), "empty means all" (#139731, #139732). Node selector:
`metadata.name` of the target node as soon as one device is node-local or binds to the node,
else the merged single term of the slices' node selectors, else none.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from dra_operator.allocator._capacity import unqualify
from dra_operator.allocator._features import Features
from dra_operator.allocator._prepare import Prepared
from dra_operator.allocator._search import Pick
from dra_operator.errors import AllocationInputError
from dra_operator.model import (
    AllocationResult,
    ConfigSource,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequest,
    DeviceRequestAllocationResult,
    FrozenMap,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OpaqueDeviceConfiguration,
    Quantity,
    ResourceClaim,
)

_NONE: FrozenMap[str, Quantity] = FrozenMap()  # consumed by a device that is not shared


def build_results(
    claims: Sequence[ResourceClaim],
    picks: Sequence[Sequence[Pick]],
    prepared: Prepared,
    selected_sub: dict[tuple[int, int], int],
    node_name: str,
    features: Features,
) -> tuple[AllocationResult, ...]:
    return tuple(
        AllocationResult(
            devices=DeviceAllocationResult(
                results=tuple(_device_result(pick, features) for pick in picks[c]),
                config=_config(c, claim, prepared, selected_sub, features),
            ),
            node_selector=_node_selector(
                claim, picks[c], node_name, binds_to_node=not features.is_stable_tier
            ),
        )
        for c, claim in enumerate(claims)
    )


def _device_result(pick: Pick, features: Features) -> DeviceRequestAllocationResult:
    data, candidate = pick.request, pick.candidate
    device = candidate.device
    binding = features.device_binding_and_status
    consumed = pick.consumed
    return DeviceRequestAllocationResult(
        request=data.full_name,
        driver=candidate.driver,
        pool=candidate.pool.id.pool,
        device=device.name,
        admin_access=True if data.admin_access else None,
        tolerations=data.tolerations,
        binding_conditions=device.binding_conditions if binding else (),
        binding_failure_conditions=device.binding_failure_conditions if binding else (),
        share_id=pick.share_id,
        consumed_capacity=FrozenMap(unqualify(consumed, candidate.driver)) if consumed else _NONE,
        # only upstream's experimental tier copies the slice's list (1.37)
        skip_node_operations=(
            candidate.slice.skip_node_operations if features.is_experimental_tier else ()
        ),
    )


def _config(
    c: int,
    claim: ResourceClaim,
    prepared: Prepared,
    selected_sub: dict[tuple[int, int], int],
    features: Features,
) -> tuple[DeviceAllocationConfiguration, ...]:
    entries: list[tuple[ConfigSource, list[str], OpaqueDeviceConfiguration | None]] = []
    by_class: dict[str, range] = {}
    for r in range(len(claim.spec.requests)):
        data = prepared.requests[(c, r, selected_sub.get((c, r), 0))]
        class_name = data.device_class.metadata.name
        if class_name in by_class:
            for index in by_class[class_name]:
                entries[index][1].append(data.full_name)
            continue
        first = len(entries)
        for config in data.device_class.config:
            entries.append((ConfigSource.FROM_CLASS, [data.full_name], config))
        by_class[class_name] = range(first, len(entries))
    # Each request by the name a config may give it: itself, or its chosen subrequest.
    chosen = [
        (request.name, _chosen_name(request, selected_sub.get((c, r), 0)))
        for r, request in enumerate(claim.spec.requests)
    ]
    for claim_config in claim.spec.config:
        names = list(claim_config.requests)
        matches = sum(1 for plain, sub in chosen if plain in names or sub in names)
        if not names or (matches and features.since_137):
            matches = 1
        entries.extend(
            (ConfigSource.FROM_CLAIM, names, claim_config.opaque) for _ in range(matches)
        )
    if features.since_137:
        entries = [
            (source, [] if _names_all(names, chosen) else names, opaque)
            for source, names, opaque in entries
        ]
    return tuple(
        DeviceAllocationConfiguration(
            source=source,
            requests=tuple(requests),
            opaque=opaque,
        )
        for source, requests, opaque in entries
    )


def _chosen_name(request: DeviceRequest, sub: int) -> str | None:
    return (
        f"{request.name}/{request.first_available[sub].name}" if request.first_available else None
    )


def _names_all(names: list[str], chosen: list[tuple[str, str | None]]) -> bool:
    return bool(names) and all(plain in names or sub in names for plain, sub in chosen)


def _node_selector(
    claim: ResourceClaim, picks: Sequence[Pick], node_name: str, *, binds_to_node: bool
) -> NodeSelector | None:
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for pick in picks:
        piece, device = pick.candidate.slice, pick.candidate.device
        if piece.per_device_node_selection:
            name, selector = device.node_name, device.node_selector
        else:
            name, selector = piece.node_name, piece.node_selector
        if name is not None or (binds_to_node and device.binds_to_node):
            return _local(node_name)
        if selector is None:
            continue
        terms = selector.node_selector_terms
        if len(terms) > 1:
            raise AllocationInputError(
                f"create NodeSelector for claim {claim.metadata.name}: unsupported "
                f"ResourceSlice.NodeSelector with {len(terms)} terms"
            )
        if terms:
            _merge(terms[0].match_fields, fields)
            _merge(terms[0].match_expressions, expressions)
    if not fields and not expressions:
        return None
    term = NodeSelectorTerm(match_expressions=tuple(expressions), match_fields=tuple(fields))
    return NodeSelector(node_selector_terms=(term,))


@lru_cache(maxsize=64)
def _local(node_name: str) -> NodeSelector:
    """The node selector of a node-local allocation (immutable, so every result shares it)."""
    local = NodeSelectorRequirement(key="metadata.name", operator="In", values=(node_name,))
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(local,)),))


def _merge(source: Sequence[NodeSelectorRequirement], into: list[NodeSelectorRequirement]) -> None:
    for requirement in source:
        values = set(requirement.values)
        if not any(
            r.key == requirement.key
            and r.operator == requirement.operator
            and set(r.values) == values
            for r in into
        ):
            into.append(requirement)
