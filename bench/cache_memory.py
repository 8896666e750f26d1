"""What the operator's caches cost in memory per 1,000 pods (and their claims), and at 500 nodes.

    .venv/bin/python -m bench.cache_memory [--nodes 500] [--pods 5000]

Feeds the operator's caches (`app.Caches`, what `Operator.handle` does with each watch event:
the stores with their indexes and what they keep of each raw object, and the device ledger)
with what the benchmark's workload a leaves behind:
`--nodes` nodes with a 10-device slice each, then `--pods` bound pods, each with its allocated
and reserved claim, as the API server serves them (managedFields included). Prints the resident
set size (VmRSS) after each step and the growth per 1,000 pods with their claims; the
benchmark's peak RSS column is the whole operator under load (imports, TLS, buffers).
"""

from __future__ import annotations

import argparse
import copy
import gc
from pathlib import Path
from typing import Any

from bench.scheduling import build

from dra_operator.app import DRA_KINDS, Caches, Kind

_MANAGED = [
    {
        "manager": "kube-apiserver",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-11-24T06:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {}}, "f:spec": {"f:containers": {}}},
    }
]


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0


def _node(name: str, version: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": str(version)},
        "status": {
            "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _bound(index: int, node: str, device: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Pod `index` bound to `node`, and its generated claim allocated `device` there."""
    workload = build("a", 1)
    pod = workload.pod(index, "bench", "dra-operator")
    name = pod["metadata"]["name"]
    claim_name = f"{name}-gpu-abcde"
    pod["metadata"] |= {
        "uid": f"pod-uid-{index:08d}",
        "resourceVersion": str(100000 + 2 * index),
        "creationTimestamp": "2026-11-24T06:00:00Z",
        "managedFields": copy.deepcopy(_MANAGED),
    }
    pod["spec"]["nodeName"] = node
    pod["status"] = {
        "phase": "Pending",
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim_name}],
    }
    template = workload.templates[0]["spec"]["spec"]
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": claim_name,
            "namespace": "bench",
            "uid": f"claim-uid-{index:08d}",
            "resourceVersion": str(100001 + 2 * index),
            "finalizers": ["resource.kubernetes.io/delete-protection"],
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": name,
                    "uid": f"pod-uid-{index:08d}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": copy.deepcopy(_MANAGED),
        },
        "spec": copy.deepcopy(template),
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": "bench.example.com",
                            "pool": node,
                            "device": device,
                        }
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": name, "uid": f"pod-uid-{index:08d}"}],
        },
    }
    return pod, claim


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.cache_memory", description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=5000)
    args = parser.parse_args(argv)
    workload = build("a", args.nodes / 20)
    caches = Caches(dict.fromkeys(DRA_KINDS, "v1"))
    gc.collect()
    start = _rss_mib()
    for version, name in enumerate(workload.nodes, start=1):
        caches.apply(Kind.NODES, "ADDED", _node(name, version))
    for version, piece in enumerate(workload.slices, start=1):
        metadata = {**piece["metadata"], "uid": str(version), "managedFields": _MANAGED}
        caches.apply(Kind.SLICES, "ADDED", {**piece, "metadata": metadata})
    gc.collect()
    cluster = _rss_mib()
    per_node = 10
    for index in range(args.pods):
        node = workload.nodes[(index // per_node) % len(workload.nodes)]
        pod, claim = _bound(index, node, f"gpu-{index % per_node}")
        caches.apply(Kind.PODS, "ADDED", pod)
        caches.apply(Kind.CLAIMS, "ADDED", claim)
    gc.collect()
    full = _rss_mib()
    print(f"{args.nodes} nodes × {per_node} devices: {cluster - start:.1f} MiB")
    print(f"{args.pods} bound pods with their claims: {full - cluster:.1f} MiB")
    print(f"per 1,000 pods with their claims: {(full - cluster) * 1000 / args.pods:.1f} MiB")
    print(f"resident set size now: {full:.0f} MiB (at start {start:.0f} MiB)")


if __name__ == "__main__":
    main()
