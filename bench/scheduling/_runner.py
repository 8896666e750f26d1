"""One workload on one system: set up the objects, run the phases, measure, verify.

The bench talks to the API server as the admin with its own user agent (`dra-bench`), so the
audit log tells its requests from the component's. Pods are created concurrently (at most
`_CREATORS` requests in flight, like scheduler_perf's parallel createPods), as fast as the API
server answers or at a fixed rate (`_creator.Pacer`); a steady-state phase deletes each pod with
gracePeriodSeconds=0 (no kubelet would ever finish it) as soon as it is done and creates the
next, a churn phase deletes each pod once done. A pod's latency runs from its creation (the
create call's answer or the watch event showing it, whichever comes first: the pod's
creationTimestamp has whole seconds only) to the moment it is done (`_tracker`). A phase ends
when all its pods are done, or when none has finished for `_STALL` seconds after the last was
created (the result then shows fewer bound pods than created).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import itertools
import json
import math
import sys
import time
from collections.abc import Awaitable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.scheduling._creator import Pacer, creation_rate
from bench.scheduling._system import (
    BENCH_NAMESPACE,
    ProcessSample,
    Profiler,
    RequestCount,
    System,
    count_requests,
    etcd_db_mib,
    sample,
    started,
)
from bench.scheduling._tracker import Stamp, Tracker
from bench.scheduling._workloads import Phase, Workload, placement_faults
from bench.scheduling.limit import plan as limit_plan

from dra_operator import controlplane
from dra_operator.kube import (
    CORE_EVENTS,
    NAMESPACES,
    PODS,
    Client,
    Resource,
    dra,
    load_kubeconfig,
)

__all__ = ["PhaseResult", "exited", "percentile", "run_workload"]

NAMESPACE = BENCH_NAMESPACE
_CREATORS = 20
POD_GROUPS = Resource("scheduling.k8s.io", "v1beta1", "podgroups", namespaced=True)
_PACED_CREATORS = 100
"""At a fixed rate more requests may be in flight, so one slow answer delays no later slot."""
_SETUP_CREATORS = 50
_STALL = 30.0
_SETTLE = 60.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PhaseResult:
    """The measurements of one phase on one system."""

    phase: str
    system: str
    pods: int
    bound: int
    seconds: float
    throughput: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    requests: int
    writes: int
    cpu_seconds: float
    peak_rss_mib: float
    apiserver_cpu_seconds: float
    verify_exit: int
    verify_output: str
    note: str = ""
    """Why pods were left unbound: the newest event of one of them."""
    max_stall_ms: float = math.nan
    """Ours: the longest event-loop stall the operator logged in the phase (0: under 50 ms)."""
    rate: float = math.nan
    """The creator's fixed rate in pods/s; NaN: as fast as the API server answers."""
    created_per_s: float = math.nan
    """The creation rate reached: pods created per second, first to last."""
    setup_seconds: float = math.nan
    """Creating the nodes, slices, classes and claims before the first phase."""
    apiserver_peak_rss_mib: float = math.nan
    etcd_peak_rss_mib: float = math.nan
    process_peak_rss_mib: tuple[tuple[str, float], ...] = ()
    """Peak RSS of every process of the system under test and of the control plane."""
    etcd_db_mib: float = math.nan
    """etcd's database size after the phase (its default quota is 2 GiB)."""

    @property
    def requests_per_pod(self) -> float:
        return self.requests / self.bound if self.bound else math.nan

    @property
    def writes_per_pod(self) -> float:
        return self.writes / self.bound if self.bound else math.nan


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1); NaN without values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


async def _bounded(jobs: Iterable[Awaitable[Any]], limit: int = _CREATORS) -> None:
    """Await `jobs` in order, at most `limit` at a time: `limit` workers take the next job
    when one is done, so 36,000 pods make 36,000 coroutines one by one, not all at once."""
    source = iter(jobs)

    async def worker() -> None:
        for job in source:
            await job

    await asyncio.gather(*(worker() for _ in range(limit)))


async def _setup(api: Client, workload: Workload) -> float:
    """Create the workload's objects; the seconds it took."""
    began = time.monotonic()
    await api.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    )
    nodes = (
        controlplane.create_ready_node(api, n, labels=workload.node_labels.get(n))
        for n in workload.nodes
    )
    await _bounded(nodes, _SETUP_CREATORS)
    for manifest in workload.classes:
        await api.create(dra("deviceclasses"), manifest)
    slices = (api.create(dra("resourceslices"), s) for s in workload.slices)
    await _bounded(slices, _SETUP_CREATORS)
    for manifest in workload.templates:
        await api.create(dra("resourceclaimtemplates"), manifest, namespace=NAMESPACE)
    await _bounded(
        api.create(dra("resourceclaims"), c, namespace=NAMESPACE) for c in workload.claims
    )
    groups = workload.pod_groups(sum(p.pods for p in workload.phases), NAMESPACE)
    await _bounded(api.create(POD_GROUPS, g, namespace=NAMESPACE) for g in groups)
    return time.monotonic() - began


async def _preallocate(api: Client, workload: Workload, indices: range) -> None:
    async def one(index: int) -> None:
        claim, status = workload.preallocated_claim(index, NAMESPACE)
        await api.create(dra("resourceclaims"), claim, namespace=NAMESPACE)
        name = claim["metadata"]["name"]
        await api.patch(
            dra("resourceclaims"), name, status, namespace=NAMESPACE, subresource="status"
        )

    await _bounded(one(i) for i in indices)


_CONTROL_PLANE = ("kube-apiserver", "etcd")


def _samples(system: System) -> dict[str, ProcessSample]:
    found = {name: sample(pid) for name, pid in system.component_pids.items()}
    found["kube-apiserver"] = sample(system.apiserver_pid)
    found["etcd"] = sample(system.etcd_pid)
    return found


async def _verify(system: System) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("dra-operator")),
        "verify",
        f"--kubeconfig={system.state.admin_kubeconfig}",
        f"--namespace={NAMESPACE}",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode(errors="replace").strip()


async def _run_phase(
    api: Client,
    tracker: Tracker,
    system: System,
    workload: Workload,
    phase: Phase,
    first: int,
    profile: Path | None,
    rate: float | None,
) -> PhaseResult:
    names = {f"pod-{i:05d}" for i in range(first, first + phase.pods)}
    pending = iter(range(first, first + phase.pods))
    finished: list[str] = []
    background: set[asyncio.Task[Any]] = set()
    progress = [time.monotonic()]
    pacer = Pacer(phase.rate or rate)

    async def create(index: int) -> None:
        await pacer.wait()
        pod = workload.pod(index, NAMESPACE, system.scheduler_name)
        await api.create(PODS, pod)
        tracker.stamp_created(pod["metadata"]["name"])

    async def replace(name: str) -> None:
        await api.delete(PODS, name, namespace=NAMESPACE, grace_period_seconds=0)
        index = next(pending, None)
        if index is not None:
            await create(index)

    def spawn(job: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(job)
        background.add(task)
        task.add_done_callback(background.discard)

    def done(name: str) -> None:
        if name not in names:
            return
        finished.append(name)
        progress[0] = time.monotonic()
        if phase.churn:
            spawn(api.delete(PODS, name, namespace=NAMESPACE, grace_period_seconds=0))
        elif phase.in_flight is not None and len(finished) + phase.in_flight <= phase.pods:
            spawn(replace(name))

    profiler = None
    if profile is not None and system.is_ours():
        profiler = Profiler(system.component_pids["dra-operator"], profile / f"{phase.name}.txt")
    before = _samples(system)
    start = Stamp.now()
    tracker.on_done = done
    first_batch = phase.pods if phase.in_flight is None else phase.in_flight
    creators = _CREATORS if pacer.rate is None else _PACED_CREATORS
    await _bounded((create(i) for i in itertools.islice(pending, first_batch)), creators)
    progress[0] = max(progress[0], time.monotonic())  # a long creation is no stall
    await tracker.wait(
        lambda: len(finished) == phase.pods or time.monotonic() - progress[0] > _STALL,
        timeout=math.inf,
    )
    tracker.on_done = lambda _: None
    await asyncio.gather(*background)
    after = _samples(system)
    db_mib = await asyncio.to_thread(etcd_db_mib, system.state.etcd_url)
    if profiler is not None:
        await asyncio.to_thread(profiler.stop)
    created = [tracker.created[n] for n in names if n in tracker.created]
    ended = [tracker.done[n] for n in finished]
    first_seen = min((c.mono for c in created), default=start.mono)
    last_done = max((d.mono for d in ended), default=time.monotonic())
    seconds = max(last_done - first_seen, 1e-9)
    end_wall = max((d.wall for d in ended), default=time.time())
    latencies = [(tracker.done[n].mono - tracker.created[n].mono) * 1000 for n in finished]
    requests = await asyncio.to_thread(
        _count_requests, system.audit_log, system.runs_as_operator(), start.wall, end_wall
    )
    note = ""
    unbound = sorted(n for n in names if n not in tracker.done)
    if unbound:
        note = f"{len(unbound)} not done, e.g. {unbound[0]}: {await _last_event(api, unbound[0])}"
    if gone := exited(after):
        note = f"{', '.join(gone)} exited during the phase; {note}"
    if workload.group_size:
        partial = partial_groups(workload, finished, first, phase.pods)
        note = f"{partial} groups bound in part; {note}".rstrip("; ")
    node_of = {n: tracker.pods[n]["spec"]["nodeName"] for n in finished if n in tracker.pods}
    if faults := placement_faults(workload, node_of):
        note = f"placement broken: {faults}; {note}".rstrip("; ")
    await tracker.wait(tracker.settled, _SETTLE)
    verify_exit, verify_output = await _verify(system)
    stall = math.nan
    if system.is_ours():
        log = system.audit_log.with_name("dra-operator.log")
        text = await asyncio.to_thread(log.read_text, errors="replace")
        stall = longest_stall(text.splitlines(), start.wall, end_wall)
    components = [n for n in before if n not in _CONTROL_PLANE]
    return PhaseResult(
        phase=phase.name,
        system=system.name,
        pods=phase.pods,
        bound=len(finished),
        seconds=seconds,
        throughput=len(finished) / seconds if finished else 0.0,
        p50_ms=percentile(latencies, 0.50),
        p90_ms=percentile(latencies, 0.90),
        p99_ms=percentile(latencies, 0.99),
        requests=requests.total,
        writes=requests.writes,
        cpu_seconds=sum(after[n].cpu - before[n].cpu for n in components),
        peak_rss_mib=sum(after[n].peak_rss_mib for n in components),
        apiserver_cpu_seconds=after["kube-apiserver"].cpu - before["kube-apiserver"].cpu,
        verify_exit=verify_exit,
        verify_output=verify_output,
        note=note,
        max_stall_ms=stall,
        rate=pacer.rate or math.nan,
        created_per_s=creation_rate([c.mono for c in created]),
        apiserver_peak_rss_mib=after["kube-apiserver"].peak_rss_mib,
        etcd_peak_rss_mib=after["etcd"].peak_rss_mib,
        process_peak_rss_mib=tuple((n, s.peak_rss_mib) for n, s in after.items()),
        etcd_db_mib=db_mib,
    )


def partial_groups(workload: Workload, finished: Iterable[str], first: int, pods: int) -> int:
    """PodGroups of the phase with some but not all of their pods bound: 0 unless the
    all-or-nothing rule was broken (`pod-<index>` names the pod)."""
    done = collections.Counter(workload.group_of(int(n.rpartition("-")[2])) for n in finished)
    sizes = collections.Counter(workload.group_of(i) for i in range(first, first + pods))
    return sum(1 for group, size in sizes.items() if 0 < done[group] < size)


def exited(samples: dict[str, ProcessSample]) -> list[str]:
    """The processes that were gone when sampled (a component that died mid-phase)."""
    return sorted(name for name, found in samples.items() if found == ProcessSample(0.0, 0.0))


def _count_requests(audit_log: Path, ours: bool, start: float, end: float) -> RequestCount:
    """`count_requests` over the audit log read line by line: at 5,000 nodes it has hundreds
    of thousands of lines."""
    with audit_log.open(errors="replace") as lines:
        return count_requests(lines, ours, start, end)


def longest_stall(log_lines: Iterable[str], start: float, end: float) -> float:
    """The longest `loop.stall` (ms) the operator's JSON log reports for [start, end]; each
    line covers the 5 s before it, so lines up to 5 s after `end` count."""
    worst = 0.0
    for line in log_lines:
        if '"loop.stall"' not in line:
            continue
        try:
            event = json.loads(line)
            when = datetime.fromisoformat(event["timestamp"]).timestamp()
        except (ValueError, KeyError):
            continue
        if start <= when <= end + 5:
            worst = max(worst, float(event.get("max_ms", 0.0)))
    return worst


async def _last_event(api: Client, pod: str) -> str:
    events = await api.list(
        CORE_EVENTS, namespace=NAMESPACE, field_selector=f"involvedObject.name={pod}"
    )
    items = sorted(events["items"], key=lambda e: e.get("lastTimestamp") or "")
    return str(items[-1].get("message", "")) if items else "no event"


async def _clear_pods(api: Client, tracker: Tracker) -> None:
    """Delete every pod and wait until their generated claims are gone (between phases)."""
    await _bounded(
        api.delete(PODS, n, namespace=NAMESPACE, grace_period_seconds=0) for n in list(tracker.pods)
    )

    def empty() -> bool:
        return not tracker.pods and not any(
            c["metadata"].get("ownerReferences") for c in tracker.claims.values()
        )

    await tracker.wait(empty, _SETTLE)


def write_plan(workload: Workload, path: Path) -> None:
    """The limit system's plan for `workload` (one template only), as JSON in `path`."""
    (template,) = workload.templates
    slots = limit_plan(workload.nodes, workload.slices, workload.classes, template)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"template": template, "slots": slots}))


async def run_workload(
    workload: Workload,
    system_name: str,
    run_dir: Path,
    *,
    profile: Path | None = None,
    upstream_qps: int = 0,
    rate: float | None = None,
) -> list[PhaseResult]:
    """All phases of `workload` on a fresh control plane running `system_name`.

    With `profile` (a folder), ours runs under py-spy during each phase: `<phase>.txt` there.
    `rate`: pods created per second (None: as fast as the API server answers), in every phase
    that sets no rate of its own.
    """
    results = []
    plan = None
    if system_name == "limit":
        plan = run_dir / "limit-plan.json"
        await asyncio.to_thread(write_plan, workload, plan)
    async with started(
        system_name,
        run_dir,
        upstream_qps=upstream_qps,
        limit_plan=plan,
        nodes=len(workload.nodes),
    ) as system:
        config = load_kubeconfig(system.state.admin_kubeconfig)
        async with Client(config, user_agent="dra-bench") as api:
            setup_seconds = await _setup(api, workload)
            tracker = Tracker(api, NAMESPACE)
            await tracker.start()
            try:
                allocated, first = 0, 0
                for number, phase in enumerate(workload.phases):
                    if number and not phase.keep_previous:
                        await _clear_pods(api, tracker)
                    await _preallocate(api, workload, range(allocated, phase.preallocate))
                    allocated = max(allocated, phase.preallocate)
                    result = await _run_phase(
                        api, tracker, system, workload, phase, first, profile, rate
                    )
                    results.append(dataclasses.replace(result, setup_seconds=setup_seconds))
                    first += phase.pods
            finally:
                await tracker.stop()
    return results
