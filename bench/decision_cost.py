"""One scheduling decision's cost in process: `decide_pod` per pod on N nodes, no API server.

    .venv/bin/python -m bench.decision_cost [--nodes 20,100,500] [--pods 25] [--warm 5]

Per size: N nodes (64 CPU, 8 devices each), then `--pods` pods of workload a's shape (one
claim of one device, 100m CPU) decided one at a time, each placement reserved in the ledger and
assumed in the NodeInfo cache as the live scheduler does. The first `--warm` pods are not
timed. Two rows per size: with reused allocator verdicts (the live default) and without
(`Verdicts` off: a template's first pod, or pods whose verdicts cannot be reused), there with
one warm pod and a fifth of the pods, since each asks the allocator more. Prints the median and
90th percentile milliseconds per pod and the allocator calls per pod (docs/benchmarks.md "One
decision under the default profile").
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import itertools
import statistics
import time
from typing import Any

from tests.unit.controllers.scheduler.builders import (
    NS,
    claim,
    device_class,
    new_state,
    node,
    pod,
    resource_slice,
    settings,
)

from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import Placement, State, Verdicts, decide_pod

DEVICES_PER_NODE = 8


class _Attempts:
    """Metrics that count allocator calls and ignore everything else."""

    def __init__(self) -> None:
        self.count = 0

    def allocation_attempted(self, *_: Any, **__: Any) -> None:
        self.count += 1

    def __getattr__(self, _: str) -> Any:
        return lambda *_, **__: None


def _cluster(nodes: int, reuse: bool) -> tuple[State, Any]:
    state = new_state()
    state.verdicts = Verdicts() if reuse else None
    versions = itertools.count(1)

    def apply(kind: str, raw: dict[str, Any]) -> None:
        raw = copy.deepcopy(raw)
        raw["metadata"]["resourceVersion"] = str(next(versions))
        change = getattr(state, kind).apply("ADDED", raw)
        if kind == "claims" and change is not None:
            state.ledger.observe(change)

    apply("classes", device_class())
    for i in range(nodes):
        name = f"n{i:04d}"
        apply("nodes", node(name, allocatable={"cpu": "64", "memory": "256Gi", "pods": "110"}))
        entry = state.nodes.get(ObjectKey("", name))
        assert entry is not None
        state.node_infos.node_changed(entry.obj)
        apply("slices", resource_slice(name, DEVICES_PER_NODE))
    return state, apply


def measure(nodes: int, pods: int, warm: int, *, reuse: bool) -> tuple[float, float, float]:
    """Median and p90 ms per timed pod, and allocator calls per timed pod."""
    state, apply = _cluster(nodes, reuse)
    attempts = _Attempts()
    config = dataclasses.replace(settings(), metrics=attempts)
    times: list[float] = []
    for k in range(pods):
        apply("claims", claim(f"p{k}-gpu"))
        apply("pods", pod(f"p{k}", claims=[f"p{k}-gpu"], cpu="100m"))
        entry = state.pods.get(ObjectKey(NS, f"p{k}"))
        assert entry is not None
        if k == warm:
            attempts.count = 0
        started = time.perf_counter()
        decision = decide_pod(entry.obj, state, config)
        if k >= warm:
            times.append(time.perf_counter() - started)
        assert isinstance(decision, Placement), decision
        (write,) = decision.claims
        state.ledger.reserve(write.uid, write.allocation)
        state.node_infos.assume(entry.obj, decision.node)
    times.sort()
    p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
    return statistics.median(times) * 1000, p90 * 1000, attempts.count / len(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="20,100,500", help="comma-separated node counts")
    parser.add_argument("--pods", type=int, default=25)
    parser.add_argument("--warm", type=int, default=5)
    args = parser.parse_args()
    print("| nodes | verdicts | ms/pod median | ms/pod p90 | allocator calls/pod |")
    print("|---:|---|---:|---:|---:|")
    for size in (int(n) for n in args.nodes.split(",")):
        for reuse in (True, False):
            pods, warm = (args.pods, args.warm) if reuse else (max(args.pods // 5, 2), 1)
            median, p90, calls = measure(size, pods, warm, reuse=reuse)
            kind = "reused" if reuse else "off"
            print(f"| {size} | {kind} | {median:.1f} | {p90:.1f} | {calls:.1f} |", flush=True)


if __name__ == "__main__":
    main()
