"""Whether a scheduling decision's cost grows with the cluster: CPU µs per pod by node count.

    .venv/bin/python -m bench.decision_scaling [--sizes 20,500,2000,5000] [--prefill 80]
        [--profile | --memory]

No API server: the operator's caches (`app.Caches`, fed raw objects as the watch would) and the
live scheduler's `State` (NodeInfo cache, verdicts, the default profile's framework) for each
size, with the steady-state workload's objects (workload `s`: 8 devices per node in one slice,
one DeviceClass, one claim template). Then, per pod, what the operator does in process:
the claims controller's generated claim and the pod reach the caches, `decide_pod` (PreFilter,
Filter, the allocator, Score), the reservation in the DeviceLedger and the assumed pod in the
NodeInfo cache, then the watch events of the allocated claim and the bound pod. The pods fill
the devices to 90 %, then churn: each new pod is placed in the 10 % left and the oldest churn
pod is deleted with its claim, keeping `--alive` of them at once.

Prints, per size and phase, CPU µs per pod for the decision alone and for the whole cycle
(decision plus the cache updates), and each one's ratio to the smallest size; `--profile` adds
a cProfile top 15 of each size's fill and churn. CPU time is the process's (`time.process_time`),
so other load on the machine inflates it less than wall time; still, compare ratios of one run.
`--prefill P` places the first P % of the pods as bound, without deciding them, so that a
large size's fill measured is its last stretch (what a shared machine can afford).
`--memory` measures instead how much the Python heap grows per node, per pod of the fill and
per churn pod (tracemalloc; a churn pod that comes and goes should leave nothing behind).
"""

from __future__ import annotations

import argparse
import collections
import copy
import cProfile
import gc
import io
import pstats
import time
import tracemalloc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bench.scheduling import build
from bench.scheduling._workloads import CHURN_DEVICES, CLAIM_FINALIZER, DRIVER, Workload

from dra_operator.allocator import CELSelectors, Features, FirstFit
from dra_operator.app import DRA_KINDS, Caches, Kind
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import Placement, Settings, State, Verdicts, decide_pod
from dra_operator.controllers.scheduler.framework import NodeInfoCache

NAMESPACE = "bench"
SCHEDULER = "dra-operator"
FILL_PERCENT = 90
Raw = dict[str, Any]


@dataclass(slots=True)
class Phase:
    """What one phase of one size cost: pods, CPU seconds of decisions and of whole cycles."""

    pods: int = 0
    decide: float = 0.0
    cycle: float = 0.0

    def per_pod(self) -> tuple[float, float]:
        """µs per pod: (decision, cycle)."""
        return self.decide / self.pods * 1e6, self.cycle / self.pods * 1e6


@dataclass(slots=True)
class Outcome:
    """One size's phases, and the probe whose caches they left behind."""

    nodes: int
    probe: Probe
    fill: Phase = field(default_factory=Phase)
    churn: Phase = field(default_factory=Phase)
    profiles: dict[str, str] = field(default_factory=dict)


class Probe:
    """The operator's caches and the scheduler's state for one cluster, fed as the watch would."""

    def __init__(self, workload: Workload) -> None:
        self.workload = workload
        self.caches = Caches(dict.fromkeys(DRA_KINDS, "v1"))
        caches = self.caches
        self.state = State(
            pods=caches.pods,
            claims=caches.claims,
            classes=caches.classes,
            slices=caches.slices,
            nodes=caches.nodes,
            ledger=caches.ledger,
            node_infos=NodeInfoCache(),
            verdicts=Verdicts(),
        )
        features = Features.for_kubernetes("1.37")
        self.settings = Settings(
            features=features, policy=FirstFit(), selectors=CELSelectors(features)
        )
        self._version = 0
        self.taken: dict[str, tuple[str, str]] = {}  # claim uid -> (pool, device) it holds
        for name in workload.nodes:
            self._apply(Kind.NODES, "ADDED", _node(name))
        for piece in workload.slices:
            self._apply(Kind.SLICES, "ADDED", _with_uid(piece))
        for manifest in workload.classes:
            self._apply(Kind.CLASSES, "ADDED", _with_uid(manifest))
        for manifest in workload.templates:
            self._apply(Kind.TEMPLATES, "ADDED", _with_uid(manifest))

    def _apply(self, kind: Kind, event: str, raw: Raw) -> None:
        """One watch event: the stores and the ledger, then what the scheduler plugin does."""
        self._version += 1
        raw["metadata"]["resourceVersion"] = str(self._version)
        change = self.caches.apply(kind, event, raw)
        if change is None:
            return
        infos = self.state.node_infos
        if kind is Kind.PODS:
            if change.new is not None:
                infos.pod_changed(change.new.obj)
            elif change.old is not None:
                infos.forget(change.old.obj.metadata.uid)
        elif kind is Kind.NODES and change.new is not None:
            infos.node_changed(change.new.obj)
        elif kind is Kind.SLICES:
            self.state.tainted.slice_changed(change)

    def schedule(self, index: int, phase: Phase) -> None:
        """Pod `index` and its claim created, decided, reserved, written and seen bound."""
        pod, claim = _pod_and_claim(self.workload, index)
        bound, allocated = _pod_and_claim(self.workload, index)  # the watch's later dicts
        started = time.process_time()
        self._apply(Kind.CLAIMS, "ADDED", claim)
        self._apply(Kind.PODS, "ADDED", pod)
        entry = self.caches.pods.get(ObjectKey(NAMESPACE, pod["metadata"]["name"]))
        assert entry is not None
        deciding = time.process_time()
        decision = decide_pod(entry.obj, self.state, self.settings)
        decided = time.process_time()
        if not isinstance(decision, Placement):
            raise AssertionError(f"pod {index} not placed: {decision}")
        (write,) = decision.claims
        assert write.allocation is not None
        self.caches.ledger.reserve(write.uid, write.allocation)
        self.state.node_infos.assume(entry.obj, decision.node)
        self._version += 1
        self.caches.ledger.written(write.uid, str(self._version + 1))
        result = write.allocation.devices.results[0]
        self.taken[write.uid] = (result.pool, result.device)
        allocated["status"] = {
            "allocation": _allocation(decision.node, result.pool, result.device),
            "reservedFor": [
                {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
            ],
        }
        self._apply(Kind.CLAIMS, "MODIFIED", allocated)
        bound["spec"]["nodeName"] = decision.node
        self._apply(Kind.PODS, "MODIFIED", bound)
        ended = time.process_time()
        phase.pods += 1
        phase.decide += decided - deciding
        phase.cycle += ended - started

    def place(self, index: int, node: str, device: str) -> None:
        """Pod `index` as the watch shows it once bound to `node` with `device` allocated,
        without a decision (the fill below `--prefill`)."""
        pod, claim = _pod_and_claim(self.workload, index)
        claim["status"] = {
            "allocation": _allocation(node, node, device),
            "reservedFor": [
                {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
            ],
        }
        pod["spec"]["nodeName"] = node
        self._apply(Kind.CLAIMS, "ADDED", claim)
        self._apply(Kind.PODS, "ADDED", pod)
        self.taken[claim["metadata"]["uid"]] = (node, device)

    def delete(self, index: int) -> None:
        """Pod `index` and its claim deleted (the claims controller's deletion included)."""
        pod, claim = _pod_and_claim(self.workload, index)
        self._apply(Kind.PODS, "DELETED", pod)
        self._apply(Kind.CLAIMS, "DELETED", claim)
        self.taken.pop(claim["metadata"]["uid"])

    def check(self) -> None:
        """Every device at most once, and the ledger agrees with the claims allocated."""
        held = collections.Counter(self.taken.values())
        twice = [device for device, count in held.items() if count > 1]
        if twice:
            raise AssertionError(f"devices allocated twice: {twice[:5]}")
        if len(self.caches.ledger.snapshot().exclusive) != len(held):
            raise AssertionError("the ledger and the claims allocated disagree")


def _node(name: str) -> Raw:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "status": {
            "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _with_uid(manifest: Mapping[str, Any]) -> Raw:
    metadata = dict(manifest["metadata"])
    metadata["uid"] = f"uid-{manifest['kind']}-{metadata['name']}"
    if manifest["kind"] == "ResourceClaimTemplate":
        metadata["namespace"] = NAMESPACE
    return {**manifest, "metadata": metadata}


def _pod_and_claim(workload: Workload, index: int) -> tuple[Raw, Raw]:
    """Pod `index` with its claim status, and the claim the claims controller generated."""
    pod = workload.pod(index, NAMESPACE, SCHEDULER)
    name = pod["metadata"]["name"]
    uid = f"pod-uid-{index:08d}"
    claim_name = f"{name}-gpu-bench"
    pod["metadata"] |= {"uid": uid, "creationTimestamp": "2026-11-27T00:00:00Z"}
    pod["status"] = {
        "phase": "Pending",
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim_name}],
    }
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": claim_name,
            "namespace": NAMESPACE,
            "uid": f"claim-uid-{index:08d}",
            "finalizers": [CLAIM_FINALIZER],
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": name,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": copy.deepcopy(workload.templates[0]["spec"]["spec"]),
        "status": {},
    }
    return pod, claim


def _allocation(node: str, pool: str, device: str) -> Raw:
    return {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": pool, "device": device}]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        },
    }


@contextmanager
def _profiled(outcome: Outcome, name: str, enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
        outcome.profiles[name] = text.getvalue()


def run_size(
    nodes: int, *, churn: int, alive: int, profile: bool = False, prefill: int = 0
) -> Outcome:
    """Fill `nodes` × 8 devices to 90 %, then `churn` pods with at most `alive` churn pods at
    once; every pod must be placed and no device handed out twice (AssertionError else).

    The first `prefill` % of the devices are taken by pods placed round-robin as the watch
    would show them, without decisions: the fill measured is the rest, up to 90 %.
    """
    workload = build("s", nodes / 20)
    probe = Probe(workload)
    outcome = Outcome(nodes=len(workload.nodes), probe=probe)
    devices = CHURN_DEVICES * len(workload.nodes)
    fill = max(1, devices * FILL_PERCENT // 100)
    placed = min(devices * prefill // 100, fill - 1)
    alive = max(1, min(alive, devices - fill))
    for index in range(placed):
        device, node = divmod(index, len(workload.nodes))
        probe.place(index, workload.nodes[node], f"gpu-{device}")
    with _profiled(outcome, "fill", profile):
        for index in range(placed, fill):
            probe.schedule(index, outcome.fill)
    probe.check()
    running: collections.deque[int] = collections.deque()
    with _profiled(outcome, "churn", profile):
        for index in range(fill, fill + churn):
            if len(running) == alive:
                probe.delete(running.popleft())
            probe.schedule(index, outcome.churn)
            running.append(index)
    probe.check()
    return outcome


@dataclass(frozen=True, slots=True)
class Memory:
    """Bytes the Python heap grew by (tracemalloc), per object added in each step."""

    nodes: int
    per_node: float  # the node, its slice, its NodeInfo
    per_pod: float  # a bound pod with its allocated claim: stores, ledger, NodeInfo
    per_churn_pod: float  # after each churn pod came and went: should be about 0


def measure_memory(nodes: int, *, churn: int, alive: int) -> Memory:
    """The heap's growth per node, per pod of the fill, and per churn pod (tracemalloc, which
    counts Python allocations only; the time it costs makes this a separate run)."""
    workload = build("s", nodes / 20)
    devices = CHURN_DEVICES * len(workload.nodes)
    fill = devices * FILL_PERCENT // 100
    alive = max(1, min(alive, devices - fill))
    phase = Phase()
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    probe = Probe(workload)
    gc.collect()
    cluster = tracemalloc.get_traced_memory()[0]
    for index in range(fill):
        probe.schedule(index, phase)
    gc.collect()
    filled = tracemalloc.get_traced_memory()[0]
    running: collections.deque[int] = collections.deque(range(fill, fill + alive))
    for index in running:
        probe.schedule(index, phase)
    gc.collect()
    steady = tracemalloc.get_traced_memory()[0]
    for index in range(fill + alive, fill + alive + churn):
        probe.delete(running.popleft())
        probe.schedule(index, phase)
        running.append(index)
    gc.collect()
    churned = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return Memory(
        nodes=len(workload.nodes),
        per_node=(cluster - start) / len(workload.nodes),
        per_pod=(filled - cluster) / fill,
        per_churn_pod=(churned - steady) / max(churn, 1),
    )


def table(outcomes: list[Outcome]) -> str:
    """The markdown table: µs per pod and the ratio to the first size, per phase."""
    lines = [
        "| nodes | fill pods | fill decision µs/pod | fill cycle µs/pod | ratio | "
        "churn pods | churn decision µs/pod | churn cycle µs/pod | ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = outcomes[0]
    for o in outcomes:
        fill, churn = o.fill.per_pod(), o.churn.per_pod()
        fill_ratio = fill[1] / base.fill.per_pod()[1]
        churn_ratio = churn[1] / base.churn.per_pod()[1] if o.churn.pods else 0.0
        lines.append(
            f"| {o.nodes:,} | {o.fill.pods:,} | {fill[0]:.0f} | {fill[1]:.0f} | "
            f"{fill_ratio:.2f} | {o.churn.pods:,} | {churn[0]:.0f} | {churn[1]:.0f} | "
            f"{churn_ratio:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.decision_scaling", description=__doc__)
    parser.add_argument("--sizes", default="20,500,2000,5000", help="node counts, ascending")
    parser.add_argument("--churn", type=int, default=2000, help="churn pods per size")
    parser.add_argument("--alive", type=int, default=150, help="churn pods running at once")
    parser.add_argument("--profile", action="store_true", help="cProfile top 15 per size")
    parser.add_argument(
        "--prefill", type=int, default=0, help="%% of devices taken before the fill measured"
    )
    parser.add_argument(
        "--memory", action="store_true", help="heap bytes per node, pod and churn pod instead"
    )
    args = parser.parse_args(argv)
    if args.memory:
        print("| nodes | bytes per node | bytes per pod | bytes per churn pod |")
        print("|---:|---:|---:|---:|")
        for size in (int(s) for s in args.sizes.split(",")):
            m = measure_memory(size, churn=args.churn, alive=args.alive)
            print(
                f"| {m.nodes:,} | {m.per_node:,.0f} | {m.per_pod:,.0f} | {m.per_churn_pod:,.0f} |"
            )
        return
    run_size(20, churn=50, alive=args.alive)  # warm-up: imports, CEL compilation, memos
    outcomes = []
    for size in (int(s) for s in args.sizes.split(",")):
        outcome = run_size(
            size, churn=args.churn, alive=args.alive, profile=args.profile, prefill=args.prefill
        )
        outcomes.append(outcome)
        for phase, text in outcome.profiles.items():
            print(f"## {outcome.nodes} nodes, {phase}\n{text}", flush=True)
    print(table(outcomes))


if __name__ == "__main__":
    main()
