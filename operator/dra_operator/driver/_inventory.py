"""The device inventory: what the simulated driver pretends to find on its node.

The file is YAML, one or more documents shaped like examples/resourceslices.yaml: each is a
ResourceSlice (apiVersion, kind and metadata optional) whose `spec.devices` or
`spec.sharedCounters` the driver publishes as one slice of its node's pool. So GPUs with
attributes and capacity, partitionable devices consuming shared counters, multi-allocatable
devices with consumable capacity and device taints are written exactly as the API takes them.

The driver owns the rest of each slice: `driver` (a document may name it; it must then be the
driver's), `nodeName` (a document naming another node is skipped, so one file can describe a
whole cluster), `pool` (name = node, generation and slice count managed). Slices of a
node-local driver cannot use `allNodes`, `nodeSelector` or `perDeviceNodeSelection`.

Every slice is checked with the model's parser before anything is published, so a bad file
stops the driver at start-up with the path of the offending field.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from dra_operator.errors import InvalidObjectError
from dra_operator.model import Device, parse_resource_slice

__all__ = ["DEFAULT_DRIVER", "Inventory", "load_inventory", "parse_inventory"]

DEFAULT_DRIVER = "sim.dra-operator.dev"
"""The driver name when neither --driver nor the inventory names one."""

_NOT_NODE_LOCAL = ("allNodes", "nodeSelector", "perDeviceNodeSelection")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Inventory:
    """The slices one node publishes for one driver, and its devices by name."""

    driver: str
    node: str
    specs: tuple[dict[str, Any], ...]  # slice specs without `pool`, in file order
    devices: Mapping[str, Device]

    @property
    def pool(self) -> str:
        """The node's pool: upstream's kubelet plugins name it after the node too."""
        return self.node

    def slice_name(self, index: int) -> str:
        return f"{self.node}-{self.driver}-{index}"

    def manifests(self, generation: int) -> list[dict[str, Any]]:
        """The ResourceSlices to publish, all of pool generation `generation`."""
        pool = {"name": self.pool, "generation": generation, "resourceSliceCount": len(self.specs)}
        return [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": self.slice_name(i)},
                "spec": {**copy.deepcopy(spec), "pool": dict(pool)},
            }
            for i, spec in enumerate(self.specs)
        ]


def load_inventory(
    path: Path,
    *,
    node: str,
    driver: str | None = None,
    extra: Sequence[Mapping[str, Any]] = (),
) -> Inventory:
    """Read and check an inventory file, plus `extra` documents (the node-allocatable devices
    of `--node-allocatable`); InvalidObjectError names the file and the field."""
    try:
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        documents += [dict(d) for d in extra]
    except (OSError, yaml.YAMLError) as exc:
        raise InvalidObjectError("", f"cannot read inventory: {exc}", source=str(path)) from exc
    try:
        return parse_inventory(documents, node=node, driver=driver)
    except InvalidObjectError as exc:
        raise exc.at(str(path)) from exc


def parse_inventory(
    documents: Sequence[object], *, node: str, driver: str | None = None
) -> Inventory:
    """The inventory of `node` from parsed YAML documents (see the module docstring)."""
    specs: list[tuple[int, dict[str, Any]]] = []
    for number, document in enumerate(documents, start=1):
        spec = _spec(document, f"document {number}")
        if spec.get("nodeName") not in (None, node):
            continue
        specs.append((number, spec))
    if not specs:
        raise InvalidObjectError("", f"no document describes devices for node {node}")
    named = {str(spec["driver"]) for _, spec in specs if spec.get("driver")}
    if driver is None and len(named) > 1:
        raise InvalidObjectError("", f"documents name several drivers: {', '.join(sorted(named))}")
    chosen = driver or next(iter(named), DEFAULT_DRIVER)
    devices: dict[str, Device] = {}
    kept: list[dict[str, Any]] = []
    for number, spec in specs:
        where = f"document {number}"
        if spec.get("driver") not in (None, chosen):
            raise InvalidObjectError(
                f"{where}: spec.driver", f"is {spec['driver']!r}, the driver is {chosen!r}"
            )
        body = {k: v for k, v in spec.items() if k != "pool"}
        body.update(driver=chosen, nodeName=node)
        for device in _check(body, node, where):
            if device.name in devices:
                raise InvalidObjectError(
                    f"{where}: spec.devices", f"device {device.name!r} is listed twice"
                )
            devices[device.name] = device
        kept.append(body)
    return Inventory(driver=chosen, node=node, specs=tuple(kept), devices=devices)


def _spec(document: object, where: str) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise InvalidObjectError(where, "must be a mapping shaped like a ResourceSlice")
    kind = document.get("kind", "ResourceSlice")
    if kind != "ResourceSlice":
        raise InvalidObjectError(f"{where}: kind", f"is {kind!r}, want ResourceSlice")
    spec = document.get("spec")
    if not isinstance(spec, dict):
        raise InvalidObjectError(f"{where}: spec", "required: a mapping")
    for name in _NOT_NODE_LOCAL:
        if spec.get(name):
            raise InvalidObjectError(
                f"{where}: spec.{name}", "a node-local driver publishes only its node's slices"
            )
    if bool(spec.get("devices")) == bool(spec.get("sharedCounters")):
        raise InvalidObjectError(
            f"{where}: spec", "needs either devices or sharedCounters (one slice holds one kind)"
        )
    return spec


def _check(spec: dict[str, Any], node: str, where: str) -> tuple[Device, ...]:
    """The devices of one slice spec, after the model's parser accepted the whole slice."""
    manifest = {
        "metadata": {"name": "inventory"},
        "spec": {**spec, "pool": {"name": node, "generation": 0, "resourceSliceCount": 1}},
    }
    try:
        return parse_resource_slice(manifest).devices
    except InvalidObjectError as exc:
        raise InvalidObjectError(f"{where}: {exc.path}", exc.message) from exc
