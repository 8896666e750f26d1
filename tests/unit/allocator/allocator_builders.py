"""Short builders for allocator scenarios, named after upstream's test helpers.

Rows in the scenario tables stay one screen long: `claim("claim-0", request("req-0", "class-a"))`,
`slice_with_devices("slice-1", NODE1, "pool-1", "driver-a", device("device-1"))`. Scenario
rows run with the real CEL engine (`CELSelectors`); a small fake evaluator that understands the
few CEL forms the generated scenarios use serves the property tests, where it is much faster
and the engine is not what is being tested.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from dra_operator.allocator import Allocation, CELSelectors, Features, Ledger, Node, allocate
from dra_operator.errors import AllocationInputError, CELCompileError, CELRuntimeError
from dra_operator.model import (
    AllocationMode,
    AllocationResult,
    AttributeKind,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CapacityRequirements,
    ConfigSource,
    CounterSet,
    Device,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    FrozenMap,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OpaqueDeviceConfiguration,
    Quantity,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)

NODE1, NODE2 = "node-1", "node-2"
REGION1, REGION2 = "region-1", "region-2"
ALL_NODES = "nodeSelectionAll"
PER_DEVICE = "nodeSelectionPerDevice"
SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
ALL = AllocationMode.ALL
EVERYTHING = Features.everything()
V136 = Features.for_kubernetes("1.36")


def q(text: str | int) -> Quantity:
    return Quantity.parse(str(text))


def node(name: str = NODE1, region: str = REGION1) -> Node:
    return Node(name=name, labels=FrozenMap({"region": region, "planet": "earth"}))


def device_class(
    name: str,
    driver: str,
    *,
    config: str = "",
    multi: bool | None = None,
    selectors: Sequence[str] = (),
) -> DeviceClass:
    expression = f'device.driver == "{driver}"'
    if multi is not None:
        expression += f" && device.allowMultipleAllocations == {str(multi).lower()}"
    return DeviceClass(
        metadata=ObjectMeta(name=name),
        selectors=(DeviceSelector(cel=expression), *(DeviceSelector(cel=s) for s in selectors)),
        config=(opaque(driver, config),) if config else (),
    )


def opaque(driver: str, attribute: str) -> OpaqueDeviceConfiguration:
    return OpaqueDeviceConfiguration(
        driver=driver, parameters=f'{{"{attribute}":"{attribute}Value"}}'
    )


def request(
    name: str,
    class_name: str,
    count: int = 1,
    *selectors: str,
    mode: AllocationMode | str = AllocationMode.EXACT_COUNT,
    admin: bool | None = None,
    tolerations: Sequence[DeviceToleration] = (),
    capacity: Mapping[str, str] | None = None,
    raw_selectors: Sequence[DeviceSelector] = (),
) -> DeviceRequest:
    return DeviceRequest(
        name=name,
        exactly=ExactDeviceRequest(
            device_class_name=class_name,
            selectors=(*(DeviceSelector(cel=s) for s in selectors), *raw_selectors),
            allocation_mode=mode,
            count=count if mode == AllocationMode.EXACT_COUNT else 0,
            admin_access=admin,
            tolerations=tuple(tolerations),
            capacity=_capacity(capacity),
        ),
    )


def all_request(name: str, class_name: str, *selectors: str, **kw: Any) -> DeviceRequest:
    return request(name, class_name, 0, *selectors, mode=ALL, **kw)


def _capacity(capacity: Mapping[str, str] | None) -> CapacityRequirements | None:
    if capacity is None:
        return None
    return CapacityRequirements(requests=FrozenMap({k: q(v) for k, v in capacity.items()}))


def sub_request(
    name: str,
    class_name: str,
    count: int = 1,
    *selectors: str,
    mode: AllocationMode = AllocationMode.EXACT_COUNT,
    tolerations: Sequence[DeviceToleration] = (),
    capacity: Mapping[str, str] | None = None,
) -> DeviceSubRequest:
    return DeviceSubRequest(
        name=name,
        device_class_name=class_name,
        selectors=tuple(DeviceSelector(cel=s) for s in selectors),
        allocation_mode=mode,
        count=count if mode == AllocationMode.EXACT_COUNT else 0,
        tolerations=tuple(tolerations),
        capacity=_capacity(capacity),
    )


def prioritized(name: str, *subs: DeviceSubRequest) -> DeviceRequest:
    return DeviceRequest(name=name, first_available=subs)


def claim(
    name: str,
    *requests: DeviceRequest,
    constraints: Sequence[DeviceConstraint] = (),
    config: Sequence[DeviceClaimConfiguration] = (),
    namespace: str = "",
) -> ResourceClaim:
    return ResourceClaim(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=DeviceClaim(requests=requests, constraints=tuple(constraints), config=tuple(config)),
    )


def match(attribute: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(match_attribute=attribute, requests=requests)


def distinct(attribute: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(distinct_attribute=attribute, requests=requests)


def claim_config(requests: Sequence[str], driver: str, attribute: str) -> DeviceClaimConfiguration:
    return DeviceClaimConfiguration(requests=tuple(requests), opaque=opaque(driver, attribute))


def attr(value: Any) -> DeviceAttribute:
    if isinstance(value, DeviceAttribute):
        return value
    if isinstance(value, bool):
        return DeviceAttribute(kind=AttributeKind.BOOL, value=value)
    if isinstance(value, int):
        return DeviceAttribute(kind=AttributeKind.INT, value=value)
    return DeviceAttribute(kind=AttributeKind.STRING, value=value)


def version(text: str) -> DeviceAttribute:
    return DeviceAttribute(kind=AttributeKind.VERSION, value=text)


def device(
    name: str,
    *,
    driver: str = "driver-a",
    capacity: Mapping[str, str | DeviceCapacity] | None = None,
    attributes: Mapping[str, Any] | None = None,
    taints: Sequence[DeviceTaint] = (),
    consumes: Sequence[DeviceCounterConsumption] = (),
    node_name: str | None = None,
    node_selector: NodeSelector | None = None,
    all_nodes: bool | None = None,
    binding: Sequence[str] = (),
    binding_failure: Sequence[str] = (),
    binds_to_node: bool | None = None,
    multi: bool | None = None,
) -> Device:
    """A device; unqualified attribute/capacity names are qualified with `driver`."""

    def qualify(key: str) -> str:
        return key if "/" in key else f"{driver}/{key}"

    return Device(
        name=name,
        attributes=FrozenMap({qualify(k): attr(v) for k, v in (attributes or {}).items()}),
        capacity=FrozenMap(
            {
                qualify(k): v if isinstance(v, DeviceCapacity) else DeviceCapacity(value=q(v))
                for k, v in (capacity or {}).items()
            }
        ),
        taints=tuple(taints),
        consumes_counters=tuple(consumes),
        node_name=node_name,
        node_selector=node_selector,
        all_nodes=all_nodes,
        binding_conditions=tuple(binding),
        binding_failure_conditions=tuple(binding_failure),
        binds_to_node=binds_to_node,
        allow_multiple_allocations=multi,
    )


def range_capacity(
    value: str, *, default: str = "2", low: str = "2", step: str = "2", high: str = "4"
) -> DeviceCapacity:
    return DeviceCapacity(
        value=q(value),
        request_policy=CapacityRequestPolicy(
            default=q(default),
            valid_range=CapacityRequestPolicyRange(min=q(low), step=q(step), max=q(high)),
        ),
    )


def values_capacity(value: str, default: str, *more: str) -> DeviceCapacity:
    return DeviceCapacity(
        value=q(value),
        request_policy=CapacityRequestPolicy(
            default=q(default), valid_values=(q(default), *(q(v) for v in more))
        ),
    )


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> DeviceTaint:
    return DeviceTaint(key=key, value=value, effect=effect)


def toleration(
    key: str = "", value: str = "", operator: str = "Equal", effect: str = ""
) -> DeviceToleration:
    return DeviceToleration(key=key, value=value, operator=operator, effect=effect)


def consumes(counter_set: str, **counters: str) -> DeviceCounterConsumption:
    return DeviceCounterConsumption(
        counter_set=counter_set, counters=FrozenMap({k: q(v) for k, v in counters.items()})
    )


def counter_set(name: str, **counters: str) -> CounterSet:
    return CounterSet(name=name, counters=FrozenMap({k: q(v) for k, v in counters.items()}))


def pool(name: str, count: int = 1, generation: int = 1) -> ResourcePool:
    return ResourcePool(name=name, generation=generation, resource_slice_count=count)


def slice_with_devices(
    name: str,
    selection: str | NodeSelector,
    pool_: str | ResourcePool,
    driver: str,
    *devices: Device,
    counters: Sequence[CounterSet] = (),
) -> ResourceSlice:
    placement: dict[str, Any] = {}
    if isinstance(selection, NodeSelector):
        placement["node_selector"] = selection
    elif selection == ALL_NODES:
        placement["all_nodes"] = True
    elif selection == PER_DEVICE:
        placement["per_device_node_selection"] = True
    else:
        placement["node_name"] = selection
    return ResourceSlice(
        metadata=ObjectMeta(name=name),
        driver=driver,
        pool=pool(pool_) if isinstance(pool_, str) else pool_,
        devices=devices,
        shared_counters=tuple(counters),
        **placement,
    )


def node_label_selector(key: str, *values: str) -> NodeSelector:
    requirement = NodeSelectorRequirement(key=key, operator="In", values=values)
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_expressions=(requirement,)),))


def local_node_selector(name: str = NODE1) -> NodeSelector:
    requirement = NodeSelectorRequirement(key="metadata.name", operator="In", values=(name,))
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(requirement,)),))


def result(
    request_name: str,
    driver: str,
    pool_name: str,
    device_name: str,
    *,
    admin: bool = False,
    tolerations: Sequence[DeviceToleration] = (),
    share: bool = False,
    consumed: Mapping[str, str] | None = None,
    binding: Sequence[str] = (),
    binding_failure: Sequence[str] = (),
) -> DeviceRequestAllocationResult:
    return DeviceRequestAllocationResult(
        request=request_name,
        driver=driver,
        pool=pool_name,
        device=device_name,
        admin_access=True if admin else None,
        tolerations=tuple(tolerations),
        share_id=SHARE_ID if share else None,
        consumed_capacity=FrozenMap({k: q(v) for k, v in (consumed or {}).items()}),
        binding_conditions=tuple(binding),
        binding_failure_conditions=tuple(binding_failure),
    )


def allocation(
    selector: NodeSelector | None,
    *results: DeviceRequestAllocationResult,
    config: Sequence[DeviceAllocationConfiguration] = (),
) -> AllocationResult:
    return AllocationResult(
        devices=DeviceAllocationResult(results=results, config=tuple(config)),
        node_selector=selector,
    )


def class_config(
    requests: Sequence[str], driver: str, attribute: str
) -> DeviceAllocationConfiguration:
    return DeviceAllocationConfiguration(
        source=ConfigSource.FROM_CLASS, requests=tuple(requests), opaque=opaque(driver, attribute)
    )


def from_claim(
    requests: Sequence[str], driver: str, attribute: str
) -> DeviceAllocationConfiguration:
    return DeviceAllocationConfiguration(
        source=ConfigSource.FROM_CLAIM, requests=tuple(requests), opaque=opaque(driver, attribute)
    )


def allocated_claim(*results: DeviceRequestAllocationResult) -> ResourceClaim:
    """An already-allocated claim whose devices the ledger counts as in use."""
    from dra_operator.model import ResourceClaimStatus

    return ResourceClaim(
        metadata=ObjectMeta(name="allocated"),
        status=ResourceClaimStatus(allocation=allocation(None, *results)),
    )


def with_name(piece: ResourceSlice, name: str) -> ResourceSlice:
    return replace(piece, metadata=replace(piece.metadata, name=name))


# -- a fake selector evaluator -----------------------------------------------------------------

_DRIVER = re.compile(r'^device\.driver == "([^"]*)"$')
_MULTI = re.compile(r"^device\.allowMultipleAllocations == (true|false)$")
_ATTR = re.compile(r'^device\.attributes\["([^"]+)"\]\.(\w+)(?: == (.+))?$')
_CAP = re.compile(
    r'^device\.capacity\["([^"]+)"\]\.(\w+)\.compareTo\(quantity\("([^"]+)"\)\) (>=|<=|==|<|>) 0$'
)
_LITERAL = re.compile(r'^"([^"]*)"$')


def fake_selectors(expression: str, driver: str, device: Device) -> bool:
    """A tiny stand-in for the CEL engine: `&&` of a few fixed forms."""
    return all(_atom(part.strip(), driver, device) for part in expression.split("&&"))


def _atom(text: str, driver: str, device: Device) -> bool:
    if text == "true":
        return True
    if text == "false":
        return False
    if m := _DRIVER.match(text):
        return driver == m[1]
    if m := _MULTI.match(text):
        return bool(device.allow_multiple_allocations) == (m[1] == "true")
    if m := _ATTR.match(text):
        found = device.attributes.get(f"{m[1]}/{m[2]}")
        if found is None:
            raise CELRuntimeError(f"no such key: {m[2]}")
        literal = m[3]
        if literal is None:
            if found.kind != AttributeKind.BOOL:
                raise CELRuntimeError("no such overload")
            return bool(found.value)
        if lit := _LITERAL.match(literal):
            return found.value == lit[1] and found.kind == AttributeKind.STRING
        if literal in ("true", "false"):
            return found.kind == AttributeKind.BOOL and found.value == (literal == "true")
        return found.kind == AttributeKind.INT and found.value == int(literal)
    if m := _CAP.match(text):
        capacity = device.capacity.get(f"{m[1]}/{m[2]}")
        if capacity is None:
            raise CELRuntimeError(f"no such key: {m[2]}")
        cmp = capacity.value.cmp(q(m[3]))
        return {">=": cmp >= 0, "<=": cmp <= 0, "==": cmp == 0, "<": cmp < 0, ">": cmp > 0}[m[4]]
    if text.startswith("runtime-error"):
        raise CELRuntimeError("no such key: x")
    raise CELCompileError(f"ERROR: <input>:1:1: undeclared reference to '{text}'")


# -- running a scenario ------------------------------------------------------------------------


RELEASES = (36, 37)  # allocator library releases (Features.release) every scenario runs under


@dataclass(frozen=True, kw_only=True)
class Case:
    """One upstream-style scenario: inputs, and the results (None: does not fit) or an error.

    `releases`: the upstream releases whose table holds the scenario with this outcome; it is
    checked under each (`features` with that `release`). A scenario whose outcome changed in
    1.37 is two rows: its upstream name under 1.36, and `<name>/1.37` under 1.37."""

    claims: Sequence[ResourceClaim]
    classes: Sequence[DeviceClass] = ()
    slices: Sequence[ResourceSlice] = ()
    node: Node | None = field(default_factory=node)
    features: Features = V136
    allocated: Sequence[ResourceClaim] = ()
    ledger: Ledger | None = None
    expect: Sequence[AllocationResult] | None = None
    error: str = ""
    explains: str = ""  # a per-node error upstream returns: in our explanation's summary
    steps: int | None = None  # our exact step count
    max_steps: int | None = None  # upstream's allocateOne invocations: never more
    releases: tuple[int, ...] = RELEASES


def run(
    case: Case,
    *,
    slices: Sequence[ResourceSlice] | None = None,
    classes: Sequence[DeviceClass] | None = None,
) -> Allocation:
    return allocate(
        case.claims,
        classes=case.classes if classes is None else classes,
        slices=case.slices if slices is None else slices,
        node=case.node,
        features=case.features,
        selectors=CELSelectors(case.features),
        ledger=case.ledger if case.ledger is not None else Ledger.from_claims(case.allocated),
        new_share_id=lambda: SHARE_ID,
    )


def check(case: Case) -> Allocation | None:
    """`check_release` under each of the case's releases; the last one's allocation."""
    got = None
    for release in case.releases:
        got = check_release(replace(case, features=replace(case.features, release=release)))
    return got


def check_release(case: Case) -> Allocation | None:
    """Run `case`, compare, and check that inputs are unchanged and input order is irrelevant."""
    before = copy.deepcopy(case)
    if case.error:
        with pytest.raises(AllocationInputError) as caught:
            run(case)
        assert case.error in str(caught.value)
        assert case == before
        return None
    got = run(case)
    assert case == before, "inputs were mutated"
    if case.expect is None:
        assert got.results is None, f"expected no allocation, got {got.results}"
        assert got.explanation is not None
        assert case.explains in got.explanation.summary
    else:
        assert got.results == tuple(case.expect)
    if case.steps is not None:
        assert got.steps == case.steps
    if case.max_steps is not None:
        assert got.steps <= case.max_steps, f"{got.steps} steps, upstream needs {case.max_steps}"
    shuffler = random.Random(42)
    for _ in range(3):
        slices, classes = _shuffled(case.slices, shuffler), list(case.classes)
        shuffler.shuffle(classes)
        again = run(case, slices=slices, classes=classes)
        assert again.results == got.results, "shuffled inputs changed the choice"
    return got


def _shuffled(slices: Sequence[ResourceSlice], shuffler: random.Random) -> list[ResourceSlice]:
    """A shuffle that keeps the relative order of slices sharing driver, pool *and* name.

    Slices in one pool are searched by name; upstream keeps input order for equal names (a
    situation only broken publishers create), so only differently named slices may move.
    """
    groups: dict[tuple[str, str, str], list[ResourceSlice]] = {}
    for piece in slices:
        groups.setdefault((piece.driver, piece.pool.name, piece.metadata.name), []).append(piece)
    keys = list(groups)
    shuffler.shuffle(keys)
    return [piece for key in keys for piece in groups[key]]
