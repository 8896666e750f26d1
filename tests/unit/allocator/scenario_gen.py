"""Seeded random allocation scenarios covering every allocator feature, for property and
differential tests.

One seed gives one scenario: a node, classes, slices (pools of several slices, generations,
node selection of every kind, taints, shared counters, multi-allocatable devices with request
policies, binding conditions), claims already allocated, claims to allocate (ExactCount, All,
firstAvailable, admin access, tolerations, capacity requests, constraints, configs) and a
feature set. The space is small on purpose, so that many scenarios fit and many do not, and
the search has to backtrack. Selectors use only forms the test evaluator understands, with
the driver check first, so its left-to-right `&&` agrees with CEL's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from allocator_builders import (
    ALL_NODES,
    NODE1,
    NODE2,
    PER_DEVICE,
    REGION1,
    REGION2,
    all_request,
    allocated_claim,
    attr,
    claim,
    claim_config,
    consumes,
    counter_set,
    device,
    device_class,
    distinct,
    match,
    node,
    node_label_selector,
    pool,
    prioritized,
    q,
    range_capacity,
    request,
    result,
    slice_with_devices,
    sub_request,
    taint,
    toleration,
    values_capacity,
    version,
)

from dra_operator.allocator import Features, Node
from dra_operator.model import (
    AllocationMode,
    AttributeKind,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CapacityRequirements,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClass,
    DeviceDerivedAttribute,
    DeviceRequest,
    DeviceToleration,
    FrozenMap,
    ResourceClaim,
    ResourceSlice,
)

DRIVERS = ("driver-a", "driver-b")


@dataclass
class Scenario:
    seed: int
    features: Features
    node: Node
    classes: list[DeviceClass] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    allocated: list[ResourceClaim] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)


def _features(rng: random.Random) -> Features:
    if rng.random() < 0.5:
        return Features.for_kubernetes("1.36")
    return Features(
        admin_access=rng.random() < 0.8,
        prioritized_list=rng.random() < 0.8,
        partitionable_devices=rng.random() < 0.7,
        device_taints=rng.random() < 0.7,
        device_binding_and_status=rng.random() < 0.7,
        consumable_capacity=rng.random() < 0.7,
        list_type_attributes=rng.random() < 0.1,
    )


def _numa(rng: random.Random, lists: bool) -> object:
    """A NUMA attribute; with DRAListTypeAttributes sometimes a list of nodes."""
    if lists and rng.random() < 0.5:
        values = tuple(sorted(rng.sample(range(3), rng.randint(1, 2))))
        return DeviceAttribute(kind=AttributeKind.INTS, value=values)
    return rng.randrange(3)


def _device(
    rng: random.Random,
    name: str,
    driver: str,
    *,
    shared: bool,
    counter: str | None,
    lists: bool = False,
):
    capacity: dict[str, str | DeviceCapacity] = {"memory": rng.choice(["1Gi", "2Gi", "4Gi"])}
    if shared:
        capacity["slots"] = rng.choice(
            [range_capacity("4"), values_capacity("4", "1", "2", "4"), DeviceCapacity(value=q(4))]
        )
    return device(
        name,
        driver=driver,
        attributes={
            "numa": _numa(rng, lists),
            "type": rng.choice(["X", "Y"]),
            "flag": rng.random() < 0.5,
            "driverVersion": version(rng.choice(["1.0.0", "2.0.0"])),
        },
        capacity=capacity,
        taints=[
            taint("fault", rng.choice(["a", "b"]), rng.choice(["NoSchedule", "NoExecute", "None"]))
        ]
        if rng.random() < 0.1
        else [],
        consumes=[consumes(counter, memory=rng.choice(["2Gi", "4Gi"]))] if counter else [],
        binding=["Ready"] if rng.random() < 0.05 else [],
        binding_failure=["Failed"] if rng.random() < 0.03 else [],
        binds_to_node=True if rng.random() < 0.03 else None,
        multi=True if shared else None,
    )


def _placement(rng: random.Random) -> object:
    roll = rng.random()
    if roll < 0.6:
        return NODE1
    if roll < 0.7:
        return NODE2
    if roll < 0.8:
        return ALL_NODES
    if roll < 0.9:
        return node_label_selector("region", rng.choice([REGION1, REGION2]))
    return PER_DEVICE


def _pools(rng: random.Random, features: Features) -> list[ResourceSlice]:
    slices: list[ResourceSlice] = []
    serial = 0
    for driver in DRIVERS:
        for p in range(rng.randint(1, 3)):
            pool_name = f"pool-{p}"
            counters = rng.random() < 0.25
            pieces = rng.randint(1, 2)
            count = pieces + (1 if counters else 0) + (1 if rng.random() < 0.05 else 0)
            generation = rng.randint(1, 2)
            placement = _placement(rng)
            for _ in range(pieces):
                serial += 1
                devices = []
                for d in range(rng.randint(2, 5)):
                    dev = _device(
                        rng,
                        f"dev-{serial}-{d}",
                        driver,
                        shared=rng.random() < 0.2,
                        counter="set-0" if counters and rng.random() < 0.7 else None,
                        lists=features.list_type_attributes,
                    )
                    if placement == PER_DEVICE:
                        dev = _per_device(rng, dev)
                    devices.append(dev)
                slices.append(
                    slice_with_devices(
                        f"slice-{serial:02d}",
                        placement,
                        pool(pool_name, count, generation),  # type: ignore[arg-type]
                        driver,
                        *devices,
                    )
                )
            if counters:
                serial += 1
                slices.append(
                    slice_with_devices(
                        f"slice-{serial:02d}",
                        NODE1 if placement == PER_DEVICE else placement,  # type: ignore[arg-type]
                        pool(pool_name, count, generation),
                        driver,
                        counters=[counter_set("set-0", memory=rng.choice(["4Gi", "8Gi"]))],
                    )
                )
            if rng.random() < 0.1:
                serial += 1
                slices.append(
                    slice_with_devices(
                        f"slice-{serial:02d}",
                        NODE1,
                        pool(pool_name, count, generation - 1),
                        driver,
                        _device(rng, "old-0", driver, shared=False, counter=None),
                    )
                )
    return slices


def _per_device(rng: random.Random, dev):  # type: ignore[no-untyped-def]
    roll = rng.random()
    if roll < 0.5:
        return replace(dev, node_name=rng.choice([NODE1, NODE2]))
    if roll < 0.75:
        return replace(dev, all_nodes=True)
    return replace(dev, node_selector=node_label_selector("region", rng.choice([REGION1, REGION2])))


SELECTORS = {
    "driver-a": [
        'device.attributes["driver-a"].type == "X"',
        'device.attributes["driver-a"].flag',
        'device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0',
        'device.attributes["driver-a"].numa == 1',
    ],
    "driver-b": [
        'device.attributes["driver-b"].type == "Y"',
        'device.capacity["driver-b"].memory.compareTo(quantity("4Gi")) >= 0',
    ],
}


def _classes(rng: random.Random) -> list[DeviceClass]:
    return [
        device_class("class-a", "driver-a", config="classA" if rng.random() < 0.3 else ""),
        device_class("class-b", "driver-b", config="classB" if rng.random() < 0.3 else ""),
        device_class(
            "class-x", "driver-a", selectors=['device.attributes["driver-a"].type == "X"']
        ),
        device_class("class-shared", "driver-a", multi=True),
    ]


def _capacity(rng: random.Random, cls: str) -> dict[str, str] | None:
    if cls == "class-shared" and rng.random() < 0.7:
        return {"slots": rng.choice(["1", "2", "3"])}
    return None


def _sub_request(rng: random.Random, name: str, tolerations: list[DeviceToleration]):  # type: ignore[no-untyped-def]
    """A firstAvailable entry: any class, sometimes `All`, a selector or a capacity request."""
    cls = rng.choice(["class-a", "class-b", "class-x", "class-shared"])
    driver = "driver-b" if cls == "class-b" else "driver-a"
    selectors = [rng.choice(SELECTORS[driver])] if rng.random() < 0.2 else []
    mode = AllocationMode.ALL if rng.random() < 0.15 else AllocationMode.EXACT_COUNT
    return sub_request(
        name,
        cls,
        rng.choice([1, 1, 2, 3]),
        *selectors,
        mode=mode,
        tolerations=tolerations,
        capacity=_capacity(rng, cls),
    )


def _request(rng: random.Random, name: str, features: Features) -> DeviceRequest:
    cls = rng.choice(["class-a", "class-a", "class-b", "class-x", "class-shared"])
    driver = "driver-b" if cls == "class-b" else "driver-a"
    selectors = [rng.choice(SELECTORS[driver])] if rng.random() < 0.3 else []
    tolerations = [toleration("fault", operator="Exists")] if rng.random() < 0.2 else []
    capacity = _capacity(rng, cls)
    roll = rng.random()
    if roll < (0.25 if cls == "class-shared" else 0.1):
        return all_request(name, cls, *selectors, tolerations=tolerations, capacity=capacity)
    if roll < 0.35:
        subs = [_sub_request(rng, f"sub-{i}", tolerations) for i in range(rng.randint(1, 3))]
        return prioritized(name, *subs)
    admin = True if rng.random() < 0.08 else None
    return request(
        name,
        cls,
        rng.choice([1, 1, 1, 2, 3]),
        *selectors,
        admin=admin,
        tolerations=tolerations,
        capacity=capacity,
    )


def _constrained(rng: random.Random, requests: list[DeviceRequest]) -> list[str]:
    """Request names a constraint applies to: some parents, some single subrequests."""
    names = []
    for r in rng.sample(requests, rng.randint(0, len(requests))):
        if r.first_available and rng.random() < 0.5:
            names.append(f"{r.name}/{rng.choice(r.first_available).name}")
        else:
            names.append(r.name)
    return names


def _claims(rng: random.Random, features: Features) -> list[ResourceClaim]:
    claims = []
    for c in range(rng.choice([1, 1, 2, 3])):
        requests = [_request(rng, f"req-{r}", features) for r in range(rng.choice([1, 1, 2, 3]))]
        names = [r.name for r in requests]
        constraints = []
        if rng.random() < 0.3:
            attribute = rng.choice(["driver-a/numa", "driver-a/numa", "driver-a/driverVersion"])
            constraints.append(match(attribute, *_constrained(rng, requests)))
        if rng.random() < 0.15:
            attribute = rng.choice(["driver-a/type", "driver-a/numa"])
            constraints.append(distinct(attribute, *_constrained(rng, requests)))
        config = (
            [claim_config([rng.choice(names)], "driver-a", "claimAttr")]
            if rng.random() < 0.2
            else []
        )
        claims.append(
            claim(
                f"claim-{c}", *requests, constraints=constraints, config=config, namespace="default"
            )
        )
    return claims


def _allocated(rng: random.Random, slices: list[ResourceSlice]) -> list[ResourceClaim]:
    devices = [(s, d) for s in slices for d in s.devices]
    used = []
    for piece, dev in rng.sample(devices, min(len(devices), rng.randint(0, 3))):
        if dev.allow_multiple_allocations:
            used.append(
                result(
                    "req-0",
                    piece.driver,
                    piece.pool.name,
                    dev.name,
                    share=True,
                    consumed={"slots": "1", "memory": "0"},
                )
            )
        else:
            used.append(result("req-0", piece.driver, piece.pool.name, dev.name))
    return [allocated_claim(*used)] if used else []


def generate(seed: int) -> Scenario:
    rng = random.Random(seed)
    features = _features(rng)
    slices = _pools(rng, features)
    return Scenario(
        seed=seed,
        features=features,
        node=node(NODE1, REGION1),
        classes=_classes(rng),
        slices=slices,
        allocated=_allocated(rng, slices),
        claims=_claims(rng, features),
    )


# -- the 1.37 allocator gates ---------------------------------------------------------------

DERIVED_EXPRESSIONS = (
    "device.attributes[device.driver].numa",
    "device.attributes[device.driver].numa % 2",
    "device.attributes[device.driver].type",
    "device.attributes[device.driver].flag",
    "device.attributes[device.driver].driverVersion",
    'device.attributes[device.driver].type + "-" + device.driver',
    "device.attributes[device.driver].missing",  # a runtime error that aborts
)
GROUPS = ("mig", "vgpu", "tpu")


def generate_137(seed: int) -> Scenario:
    """`generate(seed)` under 1.37, with the four 1.37 gates drawn and their inputs added:
    compatibility groups on counter consumptions, slices that skip node operations (and a node
    that may declare the feature), requests with derived attributes and constraints on them,
    fractional capacity ranges and requests. Inputs appear with their gate off too."""
    base = generate(seed)
    rng = random.Random(f"1.37-{seed}")
    features = replace(
        base.features,
        release=37,
        compatibility_groups=rng.random() < 0.6,
        derived_attributes=rng.random() < 0.6,
        optional_node_operations=rng.random() < 0.5,
        fractional_capacity_range=base.features.consumable_capacity and rng.random() < 0.5,
    )
    declared = frozenset({"DRAOptionalNodeOperations"}) if rng.random() < 0.6 else frozenset()
    slices = [_slice_137(rng, piece) for piece in base.slices]
    claims = [_claim_137(rng, c, features) for c in base.claims]
    return replace(
        base,
        features=features,
        node=replace(base.node, declared_features=declared),
        slices=slices,
        claims=claims,
    )


def _slice_137(rng: random.Random, piece: ResourceSlice) -> ResourceSlice:
    devices = tuple(_device_137(rng, d) for d in piece.devices)
    skip: tuple[str, ...] = ()
    if rng.random() < 0.15:
        skip = rng.choice([("*",), ("NodePrepareResources", "NodeUnprepareResources")])
    return replace(piece, devices=devices, skip_node_operations=skip)


def _device_137(rng: random.Random, dev: Device) -> Device:
    consumption = tuple(
        replace(c, compatibility_groups=tuple(rng.sample(GROUPS, rng.randint(0, 2))))
        if rng.random() < 0.7
        else c
        for c in dev.consumes_counters
    )
    capacity = dict(dev.capacity)
    slots = capacity.get("driver-a/slots") or capacity.get("driver-b/slots")
    if slots is not None and rng.random() < 0.4:
        fractional = DeviceCapacity(
            value=q("4"),
            request_policy=CapacityRequestPolicy(
                default=q("200m"),
                valid_range=CapacityRequestPolicyRange(
                    min=q("200m"), step=q(rng.choice(["100m", "250m", "1"])), max=q("4")
                ),
            ),
        )
        capacity = {k: fractional if k.endswith("/slots") else v for k, v in capacity.items()}
    return replace(dev, consumes_counters=consumption, capacity=FrozenMap(capacity))


def _claim_137(rng: random.Random, claim_: ResourceClaim, features: Features) -> ResourceClaim:
    spec = claim_.spec
    if rng.random() > (0.6 if features.derived_attributes else 0.1):
        return replace(claim_, spec=replace(spec, requests=tuple(_fractional(rng, spec.requests))))
    name = rng.choice(["derived/x", "driver-a/numa"])  # the second shadows a real attribute
    requests = []
    for r in _fractional(rng, spec.requests):
        if rng.random() < 0.7:
            r = _deriving(rng, r, name)
        requests.append(r)
    kind = rng.choice([match, match, distinct])
    constraint = kind(name, *rng.sample([r.name for r in requests], rng.randint(0, len(requests))))
    return replace(
        claim_,
        spec=replace(spec, requests=tuple(requests), constraints=(*spec.constraints, constraint)),
    )


def _deriving(rng: random.Random, r: DeviceRequest, name: str) -> DeviceRequest:
    def one() -> tuple[DeviceDerivedAttribute, ...]:
        missing = rng.random() < 0.08  # a runtime error that aborts the allocation
        expression = DERIVED_EXPRESSIONS[-1] if missing else rng.choice(DERIVED_EXPRESSIONS[:-1])
        return (DeviceDerivedAttribute(name=name, expression=expression),)

    if r.first_available:
        subs = tuple(replace(s, derived_attributes=one()) for s in r.first_available)
        return replace(r, first_available=subs)
    assert r.exactly is not None
    return replace(r, exactly=replace(r.exactly, derived_attributes=one()))


def _fractional(rng: random.Random, requests: tuple[DeviceRequest, ...]) -> list[DeviceRequest]:
    """Capacity requests of "slots" sometimes become fractional amounts."""
    found = []
    for r in requests:
        body = r.exactly
        if body is not None and body.capacity is not None and rng.random() < 0.4:
            if rng.random() < 0.15:  # 1.37 fails closed: above int64, or negative
                amount = q(rng.choice(["18446744073709551616", "-1"]))
            else:
                amount = q(rng.choice(["250m", "1500m", "300m", "2"]))
            capacity = CapacityRequirements(requests=FrozenMap({"slots": amount}))
            r = replace(r, exactly=replace(body, capacity=capacity))
        found.append(r)
    return found


__all__ = ["Scenario", "attr", "generate", "generate_137"]
