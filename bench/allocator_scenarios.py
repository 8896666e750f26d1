"""The allocator benchmark's scenarios: oracle "allocate" requests, in files both sides read.

The committed `bench/scenarios/*.json` (shared with `tests/oracle`'s Go benchmark) plus the ones
generated here: 100 nodes × 128 devices, partitionable devices, consumable capacity, and
kubernetes#131730's adversarial backtracking.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "bench" / "scenarios"
DRIVER = "gpu.example.com"
ALL_FEATURES = {
    "adminAccess": True,
    "consumableCapacity": True,
    "deviceBindingAndStatus": True,
    "deviceTaints": True,
    "partitionableDevices": True,
    "prioritizedList": True,
}


def _class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def _slice(name: str, node: str, devices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    spec = {
        "driver": DRIVER,
        "nodeName": node,
        "pool": {"name": node, "generation": 1, "resourceSliceCount": extra.pop("count", 1)},
        "devices": devices,
        **extra,
    }
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def _claim(
    name: str,
    count: int,
    *,
    selectors: Sequence[str] = (),
    constraints: Sequence[Any] = (),
    capacity: dict[str, str] | None = None,
    cls: str = DRIVER,
) -> dict[str, Any]:
    exactly: dict[str, Any] = {
        "deviceClassName": cls,
        "allocationMode": "ExactCount",
        "count": count,
    }
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if capacity:
        exactly["capacity"] = {"requests": capacity}
    devices: dict[str, Any] = {"requests": [{"name": "gpu", "exactly": exactly}]}
    if constraints:
        devices["constraints"] = list(constraints)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": devices},
    }


def _request(
    node: str,
    slices: list[Any],
    claims: list[Any],
    classes: list[Any] | None = None,
    allocated: list[Any] | None = None,
) -> dict[str, Any]:
    return {
        "op": "allocate",
        "features": ALL_FEATURES,
        "node": {"metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}}},
        "classes": classes or [_class()],
        "slices": slices,
        "allocated": allocated or [],
        "claims": claims,
    }


def _gpu(name: str, **attributes: Any) -> dict[str, Any]:
    attrs = {"model": {"string": "a100"}, **{k: v for k, v in attributes.items()}}
    return {"name": name, "attributes": attrs, "capacity": {"memory": {"value": "80Gi"}}}


def owned_scenarios() -> dict[str, dict[str, Any]]:
    selector = f'device.attributes["{DRIVER}"].model == "a100"'
    wide = [
        _slice(
            f"node-{n}-gpus", f"node-{n}", [_gpu(f"gpu-{i}", index={"int": i}) for i in range(128)]
        )
        for n in range(100)
    ]
    partitions = []
    for g in range(8):
        partitions.append(
            {
                "name": f"gpu-{g}",
                "consumesCounters": [
                    {"counterSet": f"gpu-{g}", "counters": {"memory": {"value": "80Gi"}}}
                ],
            }
        )
        for p in range(4):
            partitions.append(
                {
                    "name": f"gpu-{g}-part-{p}",
                    "consumesCounters": [
                        {"counterSet": f"gpu-{g}", "counters": {"memory": {"value": "20Gi"}}}
                    ],
                }
            )
    counters = [{"name": f"gpu-{g}", "counters": {"memory": {"value": "80Gi"}}} for g in range(8)]
    partitionable = _request(
        "node-0",
        [
            _slice("node-0-gpus", "node-0", partitions, count=2),
            _slice("node-0-counters", "node-0", [], count=2, sharedCounters=counters),
        ],
        [_claim(f"whole-{i}", 1) for i in range(6)] + [_claim(f"part-{i}", 3) for i in range(2)],
    )
    shared = [
        {
            "name": f"nic-{i}",
            "allowMultipleAllocations": True,
            "attributes": {"model": {"string": "a100"}},
            "capacity": {
                "bandwidth": {
                    "value": "100G",
                    "requestPolicy": {
                        "default": "10G",
                        "validRange": {"min": "10G", "step": "10G"},
                    },
                }
            },
        }
        for i in range(16)
    ]
    consumable = _request(
        "node-0",
        [_slice("node-0-nics", "node-0", shared)],
        [_claim(f"share-{i}", 2, capacity={"bandwidth": "30G"}) for i in range(12)],
    )
    # kubernetes#131730: more devices asked than exist; upstream tries every subset first.
    adversarial = _request(
        "node-0",
        [_slice("node-0-gpus", "node-0", [_gpu(f"gpu-{i}") for i in range(28)])],
        [_claim("too-many", 29)],
    )
    return {
        "100-nodes-128-devices": _request(
            "node-50", wide, [_claim("one-gpu", 1, selectors=[selector])]
        ),
        "partitionable-devices": partitionable,
        "consumable-capacity": consumable,
        "adversarial-backtracking": adversarial,
    }


def write_scenarios(folder: Path) -> dict[str, Path]:
    """Every scenario, committed and generated, each alone in its own subfolder of `folder`.

    Alone, because the Go benchmark decodes and allocates every scenario of its folder once
    before it filters by name: with all of them side by side, each measurement of any
    scenario would also pay upstream's 10 s timeout on the adversarial one.
    """
    requests = {path.stem: path.read_text() for path in SCENARIOS.glob("*.json")}
    for name, request in owned_scenarios().items():
        requests[name] = json.dumps(request, separators=(",", ":")) + "\n"
    found = {}
    for name, text in sorted(requests.items()):
        path = folder / name / f"{name}.json"
        path.parent.mkdir()
        path.write_text(text)
        found[name] = path
    return found
