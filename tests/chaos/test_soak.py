"""Scenario 6: soak. Pods created and deleted in steady churn; nothing may leak.

The operator runs in the test's process (under the operator kubeconfig, i.e. deploy/'s RBAC)
so that its asyncio tasks can be counted. Batches of pods are created, bound, and deleted
(with their generated claims deleted by the claims controller) over and over; after each batch
the process's RSS, open sockets and asyncio tasks (less kopf's idle-expiring per-object
workers, see `tasks`) are sampled, and with CHAOS_FIGURES the latest samples are written
every `PROGRESS_EVERY` batches (the curve of a run stopped before its end), with the Python
objects alive and glibc's heap in use and free: what tells a leak (objects, heap in use) from
fragmentation (free heap kept in RSS). With CHAOS_TRACEMALLOC=<dir>, tracemalloc runs from the
first progress line on and each later one dumps a snapshot there (`soak-<pods>.tracemalloc`,
to compare with `tracemalloc.Snapshot.load(...).compare_to`). Past a warm-up
third, the last
third of the samples must not exceed the middle third by more than the slack below (a leak
grows with every batch; noise does not), and at the end no generated claim is left, on the
server or in the operator's caches and ledger. Reported: pods churned and the samples' ranges.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
import os
import statistics
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from tests.chaos.harness import Burst, progress, record, scale
from tests.integration.test_operator_claims import generated_claims
from tests.support.operator import InProcessOperator, operator_settings, wait_for

from dra_operator import controlplane, kube

pytestmark = pytest.mark.controlplane

BATCH = 20
PROGRESS_EVERY = 25  # batches between two progress lines (CHAOS_FIGURES): the curve so far
RSS_SLACK = 1.15  # the last third's mean RSS within 15 % of the middle third's
COUNT_SLACK = 8  # sockets and tasks: a few in flight at any sample
TRACE_FRAMES = 12  # CHAOS_TRACEMALLOC: frames kept per allocation


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def heap_kib() -> dict[str, int]:
    """glibc's malloc heap, in KiB: in use, and free but kept by its arenas; {} off glibc."""
    mallinfo2 = getattr(ctypes.CDLL(ctypes.util.find_library("c")), "mallinfo2", None)
    if mallinfo2 is None:
        return {}
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return {"heap_in_use_kib": info.uordblks // 1024, "heap_free_kib": info.fordblks // 1024}


def objects() -> int:
    """Python objects alive (after a collection): flat unless something keeps objects."""
    gc.collect()
    return len(gc.get_objects())


def sockets() -> int:
    count = 0
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            count += os.readlink(fd).startswith("socket:")
    return count


def tasks() -> int:
    """The process's asyncio tasks, less kopf's per-object workers (and the `Queue.get` each
    awaits): kopf keeps a worker per object until it has been idle for
    `settings.queueing.idle_timeout` (5 s), so batches faster than that would look like a leak
    of exactly one worker per pod and claim event stream, which is kopf's design, not ours."""
    everything = asyncio.all_tasks()
    backlogs: set[int] = set()
    kopf_workers = 0
    for task in everything:
        coro = task.get_coro()
        frame = getattr(coro, "cr_frame", None)
        if frame is not None and frame.f_code.co_filename.endswith(_KOPF_QUEUEING):
            kopf_workers += 1
            backlog = frame.f_locals.get("backlog")
            if backlog is not None:
                backlogs.add(id(backlog))
    waits = 0
    for task in everything:
        frame = getattr(task.get_coro(), "cr_frame", None)
        if frame is not None and id(frame.f_locals.get("self")) in backlogs:
            waits += 1
    return len(everything) - kopf_workers - waits


_KOPF_QUEUEING = os.path.join("kopf", "_core", "reactor", "queueing.py")


def trace(pods: int) -> None:
    """With CHAOS_TRACEMALLOC=<dir>: start tracing, or dump a snapshot of what is traced."""
    target = os.environ.get("CHAOS_TRACEMALLOC")
    if not target:
        return
    if not tracemalloc.is_tracing():
        tracemalloc.start(TRACE_FRAMES)
        return
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    snapshot.dump(str(Path(target) / f"soak-{pods}.tracemalloc"))


def flat(samples: list[float], slack: float, *, ratio: bool) -> bool:
    third = len(samples) // 3
    middle, last = samples[third : 2 * third], samples[2 * third :]
    limit = statistics.mean(middle) * slack if ratio else max(middle) + slack
    return statistics.mean(last) <= limit


async def test_steady_churn_leaks_nothing(
    control_plane: controlplane.ControlPlaneState,
    shared_burst: Callable[..., Awaitable[Burst]],
    record_property: Callable[[str, object], None],
) -> None:
    pods = scale(300, 20_000)
    burst = await shared_burst(nodes=2, devices_per_node=BATCH)
    config = kube.load_kubeconfig(control_plane.operator_kubeconfig)
    handle = await InProcessOperator(operator_settings(burst.namespace, "soak"), config).start()
    operator = handle.operator
    assert operator is not None
    samples: dict[str, list[float]] = {"rss_kib": [], "sockets": [], "tasks": []}
    started = time.monotonic()
    try:
        for first in range(0, pods, BATCH):
            await burst.create(first, BATCH)
            await burst.wait_bound(BATCH)
            await burst.delete([f"p-{i:05d}" for i in range(first, first + BATCH)])

            async def cleaned() -> bool:
                return not await generated_claims(burst.api, burst.namespace)

            await wait_for(cleaned, timeout=120, what="the batch's claims deleted")
            burst.created.clear()  # the test's own memory of the pods: out of the RSS curve
            burst.deleted.clear()
            samples["rss_kib"].append(rss_kib())
            samples["sockets"].append(sockets())
            samples["tasks"].append(tasks())
            if (first // BATCH) % PROGRESS_EVERY == PROGRESS_EVERY - 1:
                latest = {key: values[-1] for key, values in samples.items()}
                elapsed = round(time.monotonic() - started)
                latest.update(objects=objects(), **heap_kib())
                progress("soak-progress", pods=first + BATCH, elapsed_s=elapsed, **latest)
                trace(first + BATCH)
        await wait_for(lambda: len(operator.caches.claims) == 0, what="the claim cache emptied")
        assert not operator.caches.ledger.snapshot().exclusive  # no device held any more
    finally:
        await handle.stop()
        tracemalloc.stop()
    ranges = {k: [min(v), max(v)] for k, v in samples.items()}
    record(record_property, "soak", runs=1, pods=pods, faults=0, violations=0, ranges=ranges)
    assert flat(samples["rss_kib"], RSS_SLACK, ratio=True), samples["rss_kib"]
    assert flat(samples["sockets"], COUNT_SLACK, ratio=False), samples["sockets"]
    assert flat(samples["tasks"], COUNT_SLACK, ratio=False), samples["tasks"]
