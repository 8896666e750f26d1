"""Our allocator against upstream's Go allocator on the same scenarios, in one run.

    .venv/bin/python bench/allocator.py [--go-benchtime 2s] [--runs 20] [--min-time 2]

Scenarios are oracle "allocate" requests: the committed `bench/scenarios/*.json` (shared with
`tests/oracle`'s Go benchmark) plus the ones this script generates into a temporary folder (100
nodes × 128 devices, partitionable devices, consumable capacity, and kubernetes#131730's
adversarial backtracking); the Go benchmark reads that folder through DRA_ORACLE_SCENARIOS, so
both sides run the very same files. For each scenario it reports the median µs per claim of
`allocate()` (pool gathering + search + results, like upstream's NewAllocator + Allocate,
"full"), upstream's ns/claim from `go test -bench BenchmarkAllocate`, the ratio, and both
outcomes: upstream may hit its 10 s filter timeout on adversarial input. Prints a Markdown
table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dra_operator.allocator import CELSelectors, Features, Ledger, Node, allocate
from dra_operator.cel import SelectorCache
from dra_operator.errors import AllocationInputError
from dra_operator.model import (
    FrozenMap,
    parse_device_class,
    parse_resource_claim,
    parse_resource_slice,
)

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "bench" / "scenarios"
ORACLE = ROOT / "tests" / "oracle"
DRIVER = "gpu.example.com"
ALL_FEATURES = {
    "adminAccess": True,
    "consumableCapacity": True,
    "deviceBindingAndStatus": True,
    "deviceTaints": True,
    "partitionableDevices": True,
    "prioritizedList": True,
}
_KEYS = {
    "adminAccess": "admin_access",
    "prioritizedList": "prioritized_list",
    "partitionableDevices": "partitionable_devices",
    "deviceTaints": "device_taints",
    "deviceBindingAndStatus": "device_binding_and_status",
    "consumableCapacity": "consumable_capacity",
    "listTypeAttributes": "list_type_attributes",
}


# -- scenarios this script owns ------------------------------------------------------------------


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
    selectors: list[str] = (),
    constraints: list[Any] = (),
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


def write_scenarios(folder: Path) -> None:
    """The committed scenarios and the generated ones, side by side in `folder`."""
    for path in SCENARIOS.glob("*.json"):
        shutil.copy(path, folder / path.name)
    for name, request in owned_scenarios().items():
        (folder / f"{name}.json").write_text(json.dumps(request, separators=(",", ":")) + "\n")


# -- measuring ---------------------------------------------------------------------------------


def go_results(benchtime: str, folder: Path, scenario: str = ".*") -> dict[str, float]:
    """Upstream's ns/claim per scenario ("full" variant) from the oracle's Go benchmark."""
    env = {**os.environ, "DRA_ORACLE_SCENARIOS": str(folder)}
    done = subprocess.run(
        [
            "go",
            "test",
            "-bench",
            f"BenchmarkAllocate/{scenario}/full",
            "-run",
            "^$",
            "-benchtime",
            benchtime,
            "-timeout",
            "30m",
        ],
        cwd=ORACLE,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    found = {}
    for line in done.stdout.splitlines():
        m = re.match(
            r"BenchmarkAllocate/(\S+)/full-\d+\s+\d+\s+(\d+(?:\.\d+)?) ns/op.*?"
            r"(\d+(?:\.\d+)?) allocated\s+(\d+(?:\.\d+)?) ns/claim",
            line,
        )
        if m:
            found[m[1]] = float(m[4])
            found[m[1] + "#allocated"] = float(m[3])
    if not found:
        sys.stderr.write(done.stdout + done.stderr)
    return found


def ours(path: Path, runs: int, min_time: float) -> tuple[float, str, int]:
    """Median µs per claim, outcome and search steps of our allocator on one scenario.

    At least `runs` runs and at least `min_time` seconds (like Go's -benchtime), so a short
    burst of load on the shared machine cannot cover the whole measurement.
    """
    request = json.loads(path.read_text())
    features = Features(**{_KEYS[k]: v for k, v in request["features"].items()})
    classes = [parse_device_class(c) for c in request["classes"]]
    slices = [parse_resource_slice(s) for s in request["slices"]]
    claims = [parse_resource_claim(c) for c in request["claims"]]
    allocated = [parse_resource_claim(c) for c in request["allocated"]]
    meta = request["node"]["metadata"]
    node = Node(name=meta["name"], labels=FrozenMap(meta.get("labels") or {}))
    ledger = Ledger.from_claims(allocated, consumable_capacity=features.consumable_capacity)
    cache = SelectorCache()
    timings, outcome, steps = [], "", 0
    until = time.perf_counter() + min_time
    while len(timings) < runs or time.perf_counter() < until:
        started = time.perf_counter()
        try:
            got = allocate(
                claims,
                classes=classes,
                slices=slices,
                node=node,
                features=features,
                selectors=CELSelectors(features, cache),
                ledger=ledger,
            )
            outcome = (
                "allocated"
                if got.is_allocated
                else (got.explanation.summary if got.explanation else "no")
            )
            steps = got.steps
        except AllocationInputError as err:
            outcome = f"error: {err}"
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1e6 / max(len(claims), 1), outcome, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--go-benchtime", default="2s")
    parser.add_argument("--runs", type=int, default=20, help="at least this many runs of ours")
    parser.add_argument("--min-time", type=float, default=2.0, help="and at least this long (s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dra-bench-") as tmp:
        folder = Path(tmp)
        write_scenarios(folder)
        report(folder, args.go_benchtime, args.runs, args.min_time)


def report(folder: Path, benchtime: str, runs: int, min_time: float) -> None:
    """One row per scenario; both sides of a row are measured back to back.

    The machine is shared: measuring every Go scenario first and ours afterwards let load
    changes in between swing a row's ratio by 3×; side by side, both see about the same load.
    """
    print(
        "| scenario | ours µs/claim | upstream µs/claim | ratio (ours/upstream) | ours | upstream |"
    )
    print("|---|---:|---:|---:|---|---|")
    for path in sorted(folder.glob("*.json")):
        name = path.stem
        go = go_results(benchtime, folder, f"^{re.escape(name)}$")
        mine, outcome, steps = ours(path, runs, min_time)
        theirs = go.get(name)
        theirs_us = f"{theirs / 1000:.0f}" if theirs else "n/a"
        ratio = f"{mine / (theirs / 1000):.2f}" if theirs else "n/a"
        upstream = "n/a"
        if name + "#allocated" in go:
            upstream = "allocated" if go[name + "#allocated"] else "not allocated / timeout"
        print(
            f"| {name} | {mine:.0f} | {theirs_us} | {ratio} | {outcome} ({steps} steps) "
            f"| {upstream} |"
        )


if __name__ == "__main__":
    main()
