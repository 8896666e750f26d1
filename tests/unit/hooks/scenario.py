"""A small GPU node for hook tests: one pool of devices with memory, one class, the real CEL."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dra_operator.allocator import Allocation, CELSelectors, Features, Node, Policy, allocate
from dra_operator.model import (
    AllocationMode,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    DeviceSelector,
    ExactDeviceRequest,
    FrozenMap,
    ObjectMeta,
    Quantity,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)
from dra_operator.model import Device as ModelDevice

EXAMPLES = Path(__file__).parents[3] / "examples" / "hooks"
DRIVER = "gpu.example.com"
FEATURES = Features.everything()
SELECTORS = CELSelectors(FEATURES)
GPU_CLASS = DeviceClass(
    metadata=ObjectMeta(name="gpu"),
    selectors=(DeviceSelector(cel=f'device.driver == "{DRIVER}"'),),
)


def gpu(name: str, memory: str = "16Gi") -> ModelDevice:
    capacity = FrozenMap({f"{DRIVER}/memory": DeviceCapacity(value=Quantity.parse(memory))})
    return ModelDevice(name=name, capacity=capacity)


def node_slice(*devices: ModelDevice, node: str = "node-1") -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=f"{node}-gpus"),
        driver=DRIVER,
        pool=ResourcePool(name=node, generation=1, resource_slice_count=1),
        node_name=node,
        devices=devices,
    )


def gpu_claim(count: int = 1, *, all_devices: bool = False, name: str = "claim") -> ResourceClaim:
    mode = AllocationMode.ALL if all_devices else AllocationMode.EXACT_COUNT
    request = DeviceRequest(
        name="gpus",
        exactly=ExactDeviceRequest(
            device_class_name="gpu", allocation_mode=mode, count=0 if all_devices else count
        ),
    )
    return ResourceClaim(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=DeviceClaim(requests=(request,)),
    )


def run(
    claim: ResourceClaim, slices: Sequence[ResourceSlice], policy: Policy, node: str = "node-1"
) -> Allocation:
    return allocate(
        [claim],
        classes=[GPU_CLASS],
        slices=slices,
        node=Node(name=node),
        features=FEATURES,
        selectors=SELECTORS,
        policy=policy,
    )


def devices_of(got: Allocation) -> list[str]:
    assert got.results is not None, got.explanation
    return [r.device for result in got.results for r in result.devices.results]
