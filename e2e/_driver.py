"""The suite's own DRA driver: ResourceSlices and a DeviceClass, published through the API.

A real driver runs a kubelet plugin on every node and publishes the devices it finds there;
the scheduler and the claims controller see only the published slices. So the suite publishes
one slice per node it uses (pool = the node's name), each with `DEVICES_PER_NODE` devices that
carry attributes and a capacity, under a driver name unique to the test session, and a
DeviceClass selecting that driver. Objects of other drivers and sessions are never matched.
On the local real nodes the simulated driver (`dra-operator driver`) publishes the same devices
from `inventory` on every node and prepares them for the kubelets, so pods run and see their
devices. In kind no kubelet plugin answers for this driver, so bound pods wait in
ContainerCreating; the scenarios common to both assert placement and claim status, which do not
depend on that. Objects go through the newest version the server serves (v1alpha3 on 1.31,
v1beta1 on 1.32 and 1.33).
"""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from tests.support.dra_objects import device_class, in_version, resource_slice, selects_driver

from dra_operator.app import ServerInfo
from dra_operator.errors import APINotFoundError
from dra_operator.kube import Client

__all__ = [
    "DEVICES_PER_NODE",
    "MAX_NODES",
    "FakeDriver",
    "class_manifest",
    "inventory",
    "new_driver",
    "schedulable",
    "slice_manifest",
]

DEVICES_PER_NODE = 2
# A big cluster would otherwise need one pod per device in the "more pods than devices" test.
MAX_NODES = 3
MEMORY = "16Gi"  # each device's `memory` capacity
MODEL = "e2e-gpu"  # each device's `model` attribute


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FakeDriver:
    """The published driver: its name (also its DeviceClass's name) and its nodes."""

    name: str
    nodes: tuple[str, ...]
    devices_per_node: int = DEVICES_PER_NODE

    @property
    def device_count(self) -> int:
        return len(self.nodes) * self.devices_per_node

    def selector(self) -> str:
        """A CEL request selector every device of this driver passes, through its attribute
        and its capacity (so both reach the allocator, ours or upstream's, as data)."""
        return (
            f"device.attributes['{self.name}'].model == '{MODEL}' && "
            f"device.capacity['{self.name}'].memory.compareTo(quantity('8Gi')) >= 0"
        )

    async def publish(self, api: Client, served: ServerInfo, *, slices: bool = True) -> None:
        """The DeviceClass and (unless a real driver publishes them) the slices."""
        classes, resource = served.resource("deviceclasses"), served.resource("resourceslices")
        await api.create(classes, in_version(class_manifest(self.name), classes.version))
        for node in self.nodes if slices else ():
            manifest = slice_manifest(self.name, node, self.devices_per_node)
            await api.create(resource, in_version(manifest, resource.version))

    async def withdraw(self, api: Client, served: ServerInfo) -> None:
        for node in self.nodes:
            with contextlib.suppress(APINotFoundError):
                await api.delete(served.resource("resourceslices"), _slice_name(self.name, node))
        with contextlib.suppress(APINotFoundError):
            await api.delete(served.resource("deviceclasses"), self.name)


def new_driver(nodes: Sequence[str]) -> FakeDriver:
    """A driver with a name no other session uses, on (at most MAX_NODES of) `nodes`."""
    return FakeDriver(
        name=f"e2e-{uuid.uuid4().hex[:8]}.example.com", nodes=tuple(nodes[:MAX_NODES])
    )


def schedulable(node: Mapping[str, Any]) -> bool:
    """Whether a pod without tolerations may land on `node`: Ready, not cordoned, and no
    NoSchedule or NoExecute taint (kind's control-plane node has one)."""
    spec, status = node.get("spec") or {}, node.get("status") or {}
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or ()
    )
    repelling = any(
        t.get("effect") in ("NoSchedule", "NoExecute") for t in spec.get("taints") or ()
    )
    return ready and not spec.get("unschedulable") and not repelling


def _slice_name(driver: str, node: str) -> str:
    return f"{node}-{driver}"


def _devices(count: int) -> list[dict[str, Any]]:
    """`count` devices gpu-0.. with index, model and memory."""
    return [
        {
            "name": f"gpu-{i}",
            "attributes": {"index": {"int": i}, "model": {"string": MODEL}},
            "capacity": {"memory": {"value": MEMORY}},
        }
        for i in range(count)
    ]


def slice_manifest(driver: str, node: str, count: int) -> dict[str, Any]:
    """One complete pool for `node` with `count` devices."""
    return resource_slice(node, driver, _devices(count), name=_slice_name(driver, node))


def inventory(driver: str, count: int) -> dict[str, Any]:
    """The same devices as an inventory for `dra-operator driver` (docs/driver.md), which
    publishes them as the pool of whichever node it runs on."""
    return {"spec": {"driver": driver, "devices": _devices(count)}}


def class_manifest(driver: str) -> dict[str, Any]:
    """The driver's DeviceClass, named as the driver, admitting all its devices."""
    return device_class(driver, selects_driver(driver))
