"""One system under test on a fresh local control plane of its own, and what it costs.

`upstream`: kube-scheduler + kube-controller-manager (started by `controlplane.up
--with-upstream`, as the admin user; their requests are told apart by user agent), pods use
`default-scheduler`. `ours`: `dra-operator run` as a subprocess under the RBAC-limited
`dra-operator` identity with the claims, scheduler and eviction controllers on and no
kube-controller-manager; pods use our scheduler name. `limit`: `bench.scheduling.limit` under
the same identity with a precomputed plan: the least API work per pod; pods use `dra-limit`.
Every control plane runs kube-apiserver with an audit log at level Metadata that records each
request once (stage RequestReceived), which is how API requests per scheduled pod are counted.
CPU seconds (utime + stime) and peak RSS (VmHWM) come from /proc.

Sized for 5,000 fake nodes: from `_LARGE` nodes on kube-apiserver serves more requests at a time
(`_LARGE_FLAGS`: its defaults, 400 reads and 200 writes, are shared by every priority level, and
a LIST of thousands of nodes or slices takes several seats of them); etcd's backend quota is
raised from its default 2 GiB to 8 GiB through its environment (ETCD_QUOTA_BACKEND_BYTES, as the
local control plane takes no etcd flags), and each phase reports etcd's database size. The
watch cache needs no flag: kube-apiserver sizes it by the event rate since v1.19.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterable
from datetime import datetime
from pathlib import Path

from dra_operator import controlplane, names
from dra_operator.errors import ControlPlaneError
from dra_operator.kube import Client

__all__ = [
    "BENCH_NAMESPACE",
    "LIMIT_SCHEDULER",
    "ProcessSample",
    "Profiler",
    "RequestCount",
    "System",
    "apiserver_args",
    "count_requests",
    "etcd_db_mib",
    "sample",
    "started",
]

_REPO = Path(__file__).resolve().parents[2]
_AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["ResponseStarted", "ResponseComplete", "Panic"]
rules:
  - level: Metadata
"""
BENCH_NAMESPACE = "bench"
LIMIT_SCHEDULER = "dra-limit"
_UPSTREAM_AGENTS = ("kube-scheduler/", "kube-controller-manager/")
_READ_VERBS = frozenset({"get", "list", "watch"})
_TICK = os.sysconf("SC_CLK_TCK")
_LARGE = 1000
_LARGE_FLAGS = ("--max-requests-inflight=1600", "--max-mutating-requests-inflight=800")
_ETCD_QUOTA = ("ETCD_QUOTA_BACKEND_BYTES", str(8 << 30))
_DB_SIZE_METRIC = "etcd_mvcc_db_total_size_in_bytes "


@dataclasses.dataclass(frozen=True, slots=True)
class ProcessSample:
    """CPU seconds so far and peak RSS in MiB of one process."""

    cpu: float
    peak_rss_mib: float


def sample(pid: int) -> ProcessSample:
    """utime + stime and VmHWM of `pid` from /proc (zeros once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ProcessSample(0.0, 0.0)
    cpu = (int(fields[11]) + int(fields[12])) / _TICK
    hwm = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")), "0")
    return ProcessSample(cpu, int(hwm) / 1024)


@dataclasses.dataclass(slots=True)
class System:
    """A running system: where to reach it, which pods it places, whose costs count."""

    name: str
    state: controlplane.ControlPlaneState
    scheduler_name: str
    component_pids: dict[str, int]
    apiserver_pid: int
    audit_log: Path
    etcd_pid: int = 0

    def is_ours(self) -> bool:
        return self.name == "ours"

    def runs_as_operator(self) -> bool:
        """Whether its requests are told apart by the `dra-operator` user (ours, limit)."""
        return self.name != "upstream"


def _upstream_args(qps: int) -> dict[str, list[str]]:
    """Client QPS for both; no node-lifecycle-controller, which would taint the fake nodes;
    no leader election, as ours runs with --no-leader-elect.

    No kubelet renews the nodes' Leases, so after its grace period (~40 s) KCM's node lifecycle
    controller would mark every node unreachable and taint it NoSchedule (and NoExecute):
    upstream would stop scheduling mid-run for a reason that has nothing to do with DRA. And on
    a loaded machine kube-scheduler missed its Lease's renew deadline at 200 nodes, logged
    "Leaderelection lost" and exited with 981 of 1,440 pods unscheduled.
    """
    rate = [f"--kube-api-qps={qps}", f"--kube-api-burst={qps}"] if qps else []
    single = "--leader-elect=false"
    return {
        "kube-scheduler": [*rate, single],
        "kube-controller-manager": [*rate, "--controllers=*,-node-lifecycle-controller", single],
    }


def apiserver_args(run_dir: Path, nodes: int) -> list[str]:
    """The audit log; from `_LARGE` nodes on, more requests in flight."""
    policy = run_dir / "audit-policy.yaml"
    policy.write_text(_AUDIT_POLICY)
    return [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={run_dir / 'audit.log'}",
        "--audit-log-format=json",
        *(_LARGE_FLAGS if nodes >= _LARGE else ()),
    ]


def etcd_db_mib(etcd_url: str) -> float:
    """etcd's database size in MiB from its /metrics (NaN when it does not answer)."""
    try:
        with urllib.request.urlopen(f"{etcd_url}/metrics", timeout=5) as resp:
            text = resp.read().decode(errors="replace")
    except (urllib.error.URLError, OSError):
        return math.nan
    for line in text.splitlines():
        if line.startswith(_DB_SIZE_METRIC):
            return float(line.split()[1]) / (1 << 20)
    return math.nan


@contextlib.asynccontextmanager
async def started(
    name: str,
    run_dir: Path,
    *,
    upstream_qps: int = 0,
    limit_plan: Path | None = None,
    nodes: int = 0,
) -> AsyncIterator[System]:
    """A fresh control plane in `run_dir` with system `name` running; always torn down.

    `upstream_qps` > 0 sets kube-scheduler's and kube-controller-manager's client QPS and
    burst (scheduler_perf uses 5000); 0 keeps their defaults (KCM 20/30, scheduler 50/100).
    `limit_plan`: the plan file the limit system reads (`limit.plan`). `nodes`: how many fake
    nodes the workload creates (the API server's limits follow).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    state_dir = run_dir / "controlplane"
    binaries = controlplane.find_binaries()
    # In this thread, not a worker thread: a Ctrl-C during `up` then reaches `up`, which stops
    # what it started; from a worker thread it would leave a half-started control plane behind.
    os.environ.setdefault(*_ETCD_QUOTA)  # read by the etcd `up` starts
    try:
        state = controlplane.up(
            state_dir=state_dir,
            binaries=binaries,
            with_upstream=name == "upstream",
            apiserver_args=apiserver_args(run_dir, nodes),
            upstream_args=_upstream_args(upstream_qps),
        )
    except ControlPlaneError as exc:
        raise ControlPlaneError(f"{name}: {exc}", log_tail=exc.log_tail) from exc
    operator: subprocess.Popen[bytes] | None = None
    try:
        pids = {c.name: c.pid for c in state.components}
        system = System(
            name=name,
            state=state,
            scheduler_name="default-scheduler",
            component_pids={
                k: v for k, v in pids.items() if k in ("kube-scheduler", "kube-controller-manager")
            },
            apiserver_pid=pids["kube-apiserver"],
            audit_log=run_dir / "audit.log",
            etcd_pid=pids.get("etcd", 0),
        )
        if name != "upstream":
            roles = controlplane.load_cluster_roles(
                _REPO / "deploy" / "base", binaries.path("kubectl")
            )
            async with Client.from_kubeconfig(state.admin_kubeconfig) as admin:
                await controlplane.bind_cluster_roles(admin, roles, controlplane.OPERATOR_USER)
        if name == "ours":
            operator = await _start_operator(state, run_dir)
            system.scheduler_name = names.DEFAULT_SCHEDULER_NAME
            system.component_pids = {"dra-operator": operator.pid}
        elif name == "limit":
            assert limit_plan is not None
            operator = await _start_limit(state, run_dir, limit_plan)
            system.scheduler_name = LIMIT_SCHEDULER
            system.component_pids = {"limit": operator.pid}
        yield system
    finally:  # synchronously, so a second Ctrl-C cannot interrupt the teardown halfway
        if operator is not None:
            _stop_operator(operator)
        controlplane.down(state_dir)


async def _start_limit(
    state: controlplane.ControlPlaneState, run_dir: Path, plan: Path
) -> subprocess.Popen[bytes]:
    """The limit system in its own session; ready once it has written its ready file."""
    ready = run_dir / "limit.ready"
    argv = [
        sys.executable,
        "-m",
        "bench.scheduling.limit",
        f"--kubeconfig={state.operator_kubeconfig}",
        f"--plan={plan}",
        f"--namespace={BENCH_NAMESPACE}",
        f"--scheduler={LIMIT_SCHEDULER}",
        f"--ready={ready}",
    ]
    return await _spawn(argv, run_dir / "limit.log", lambda: ready.exists())


async def _start_operator(
    state: controlplane.ControlPlaneState, run_dir: Path
) -> subprocess.Popen[bytes]:
    """`dra-operator run` in its own session; ready once /readyz answers 200."""
    port = _free_port()
    argv = [
        str(Path(sys.executable).with_name("dra-operator")),
        "run",
        f"--kubeconfig={state.operator_kubeconfig}",
        "--controllers=claims,scheduler,eviction",
        "--no-leader-elect",
        f"--health-bind-address=127.0.0.1:{port}",
        "--log-format=json",
    ]
    url = f"http://127.0.0.1:{port}/readyz"
    return await _spawn(argv, run_dir / "dra-operator.log", lambda: _probe(url))


_READY_WITHIN = 180.0
"""Seconds a spawned operator or limit system has to become ready: its imports alone took
50 s at `nice -n 19` on the shared machine at load average 25."""


async def _spawn(
    argv: list[str], log_path: Path, is_ready: Callable[[], bool]
) -> subprocess.Popen[bytes]:
    """`argv` in its own session, logging to `log_path`, once `is_ready` (`_READY_WITHIN`)."""
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=_REPO,
        )
    deadline = time.monotonic() + _READY_WITHIN
    while not await asyncio.to_thread(is_ready):
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop_operator(proc)
            tail = log_path.read_text(errors="replace")[-3000:]
            raise ControlPlaneError(f"{argv[0]} did not become ready", log_tail=tail)
        await asyncio.sleep(0.2)
    return proc


def _stop_operator(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 30 s."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _probe(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclasses.dataclass(frozen=True, slots=True)
class RequestCount:
    total: int
    writes: int


def _is_component(event: dict[str, object], ours: bool) -> bool:
    user = event.get("user")
    username = user.get("username") if isinstance(user, dict) else None
    if ours:
        return username == controlplane.OPERATOR_USER
    agent = str(event.get("userAgent", ""))
    return agent.startswith(_UPSTREAM_AGENTS)


def count_requests(
    audit_lines: Iterable[str], ours: bool, start: float, end: float
) -> RequestCount:
    """Requests the component under test made between wall times `start` and `end`."""
    markers = (f'"{controlplane.OPERATOR_USER}"',) if ours else _UPSTREAM_AGENTS
    total = writes = 0
    for line in audit_lines:
        if not any(m in line for m in markers):  # most lines: no JSON to decode
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not _is_component(event, ours):
            continue
        received = datetime.fromisoformat(event["requestReceivedTimestamp"]).timestamp()
        if start <= received <= end:
            total += 1
            writes += event.get("verb") not in _READ_VERBS
    return RequestCount(total, writes)


class Profiler:
    """py-spy attached to the operator for one measured phase (raw collapsed stacks).

    Attached from outside only while pods are scheduled, so start-up (imports, first lists)
    stays out of the profile; --nonblocking: the operator is never paused to be sampled.
    SIGINT makes py-spy write its file and exit.
    """

    def __init__(self, pid: int, output: Path) -> None:
        self.output = output
        output.parent.mkdir(parents=True, exist_ok=True)
        spy = str(Path(sys.executable).with_name("py-spy"))
        argv = [
            spy,
            "record",
            "--pid",
            str(pid),
            "--format",
            "raw",
            "--rate",
            "100",
            "--nonblocking",
        ]
        self._proc = subprocess.Popen(
            [*argv, "-o", str(output)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
