"""What every chaos scenario shares: a burst of DRA pods, the operator as a process, the end
checks, and the figures docs/reliability.md reports.

A scenario prepares a `Burst` (nodes with GPU slices, a class, a claim template, in a
namespace of its own), starts `dra-operator run` as a subprocess under deploy/'s RBAC
(`OperatorProcess`), creates pods while it injects its fault, and ends with `Burst.check`:
every pod bound, exactly one generated claim per pod, no device allocated twice, each claim
reserved for its pod only, and `dra-operator verify` clean.

Counts are lean by default (CI runs every scenario on each push) and full with CHAOS_FULL=1
(`make chaos`). Figures (runs, pods, faults, violations, recovery times) go to the test's
`record_property` and, when CHAOS_FIGURES names a file, as one JSON line each into it.
Test-side API calls ride out the faults the test injects: `ride_out` retries 5xx, 429 and
transport errors until a deadline. Nothing here asserts a timing.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from tests.integration.test_operator_claims import TEMPLATES, generated_claims
from tests.integration.test_scheduler import CLASSES, SLICES
from tests.support.dra_objects import (
    claim_spec,
    device_class,
    driver_of,
    gpus,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import operator_args, verify_clean, wait_for

from dra_operator import controlplane, names
from dra_operator.errors import (
    APIConflictError,
    APINotFoundError,
    APIServerError,
    APITooManyRequestsError,
)
from dra_operator.kube import CORE_EVENTS, NAMESPACES, NODES, PODS, Client

T = TypeVar("T")

FULL = os.environ.get("CHAOS_FULL") == "1"


def scale(lean: int, full: int) -> int:
    """`full` under CHAOS_FULL=1 (`make chaos`), else `lean` (`make test`, CI)."""
    return full if FULL else lean


def record(properties: Callable[[str, object], None], scenario: str, **figures: object) -> None:
    """Report a scenario's figures: as test properties and, with CHAOS_FIGURES, a JSON line."""
    for key, value in figures.items():
        properties(key, value)
    progress(scenario, **figures)


def progress(scenario: str, **figures: object) -> None:
    """With CHAOS_FIGURES, one JSON line of figures (a scenario's end, or a step of it)."""
    target = os.environ.get("CHAOS_FIGURES")
    if target:
        line = {"scenario": scenario, "full": FULL, **figures}
        with Path(target).open("a") as out:
            out.write(json.dumps(line) + "\n")


async def ride_out(call: Callable[[], Awaitable[T]], *, timeout: float = 180.0) -> T:
    """`call()` retried through the faults a scenario injects (5xx, 429, broken connections)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await call()
        except (APIServerError, APITooManyRequestsError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.25)


class OperatorProcess:
    """`dra-operator run` as a subprocess of one identity, in its own process group."""

    def __init__(self, kubeconfig: Path, namespace: str, log_dir: Path) -> None:
        self.kubeconfig = kubeconfig
        self.namespace = namespace
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []

    def start(self, identity: str, *extra: str) -> subprocess.Popen[bytes]:
        program = str(Path(sys.executable).with_name("dra-operator"))
        args = operator_args(str(self.kubeconfig), self.namespace, identity)
        log = self.log_dir / f"operator-{identity}-{len(self.procs)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [program, *args, *extra],
                env={**os.environ, "KUBECONFIG": str(self.kubeconfig)},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append(proc)
        self.logs.append(log)
        return proc

    def output(self) -> str:
        return "".join(log.read_text(errors="replace") for log in self.logs)

    @staticmethod
    def kill(proc: subprocess.Popen[bytes], sig: signal.Signals = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        proc.wait(timeout=30)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.kill(proc)


class Burst:
    """A namespace of pods that each claim one GPU from a template, and the nodes they fit."""

    def __init__(self, api: Client, namespace: str, cluster_objects: list[tuple[Any, str]]) -> None:
        self.api = api
        self.namespace = namespace
        self.cluster_objects = cluster_objects  # (resource, name): what `cleanup` deletes
        self.created: dict[str, str] = {}  # pod name -> uid
        self.deleted: set[str] = set()

    @classmethod
    async def prepare(cls, api: Client, *, nodes: int, devices_per_node: int) -> Burst:
        namespace = f"chaos-{uuid.uuid4().hex[:8]}"
        namespace_body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        await api.create(NAMESPACES, namespace_body)
        gpu = unique_name("gpu")
        made: list[tuple[Any, str]] = [(NAMESPACES, namespace)]
        await api.create(CLASSES, device_class(gpu))
        made.append((CLASSES, gpu))
        for _ in range(nodes):
            node = unique_name("node")
            await controlplane.create_ready_node(api, node)
            body = resource_slice(node, driver_of(gpu), gpus(devices_per_node))
            await api.create(SLICES, body)
            made += [(NODES, node), (SLICES, body["metadata"]["name"])]
        body = {"metadata": {"name": "tmpl"}, "spec": {"spec": claim_spec(gpu)}}
        await api.create(TEMPLATES, body, namespace=namespace)
        return cls(api, namespace, made)

    async def cleanup(self) -> None:
        """Delete the burst's nodes, slices, class and namespace (on the shared plane)."""
        for resource, name in reversed(self.cluster_objects):
            with contextlib.suppress(APINotFoundError):
                await self.api.delete(resource, name)

    async def create(self, first: int, count: int) -> None:
        """Pods p-<first> .. p-<first+count-1>, concurrently; each created exactly once even
        when a create times out after the server stored it."""

        async def one(index: int) -> None:
            name = f"p-{index:05d}"
            manifest = scheduler_pod(name, template="tmpl")

            async def attempt() -> dict[str, Any]:
                try:
                    return await self.api.create(PODS, manifest, namespace=self.namespace)
                except APIConflictError:
                    return await self.api.get(PODS, name, namespace=self.namespace)

            pod = await ride_out(attempt)
            self.created[name] = pod["metadata"]["uid"]

        await asyncio.gather(*(one(i) for i in range(first, first + count)))

    async def delete(self, names: list[str]) -> None:
        """Delete pods at once (no kubelet runs them: grace period 0)."""

        async def one(name: str) -> None:
            with contextlib.suppress(Exception):
                await ride_out(
                    lambda: self.api.delete(
                        PODS, name, namespace=self.namespace, grace_period_seconds=0
                    )
                )
            self.deleted.add(name)

        await asyncio.gather(*(one(n) for n in names))

    async def pods(self) -> list[dict[str, Any]]:
        answer = await ride_out(lambda: self.api.list(PODS, namespace=self.namespace))
        items: list[dict[str, Any]] = answer["items"]
        return items

    async def bound(self) -> int:
        return sum(1 for p in await self.pods() if p["spec"].get("nodeName"))

    async def progress(self) -> int:
        """The operator's visible writes so far: bound pods plus generated claims."""
        claims = await ride_out(lambda: generated_claims(self.api, self.namespace))
        return await self.bound() + len(claims)

    async def wait_progress(self, since: int) -> None:
        """Until the operator's visible writes grow past `since` (its first write after a
        fault, when work was left)."""

        async def wrote() -> bool:
            return await self.progress() > since

        await wait_for(wrote, timeout=scale(150, 900), what="the operator's next write")

    async def wait_bound(self, count: int, *, timeout: float = scale(150, 900)) -> None:
        async def enough() -> bool:
            return await self.bound() >= count

        try:
            await wait_for(enough, timeout=timeout, what=f"{count} pods to be bound")
        except pytest.fail.Exception:
            pytest.fail(f"pods not bound after {timeout:.0f}s: {await self.why_not()}")

    async def why_not(self) -> dict[str, str]:
        """The last FailedScheduling message of each pod not bound ("" when none)."""
        events = (await self.api.list(CORE_EVENTS, namespace=self.namespace)).get("items") or ()
        last = {
            e["involvedObject"].get("name"): e["message"]
            for e in events
            if e["reason"] == names.EVENT_FAILED_SCHEDULING
        }
        return {
            p["metadata"]["name"]: last.get(p["metadata"]["name"], "")
            for p in await self.pods()
            if not p["spec"].get("nodeName")
        }

    async def claims_off(self, live: dict[str, str]) -> dict[str, list[str]]:
        """Which pods own a wrong number of generated claims (claim names; [] when none)."""
        owned: dict[str, list[str]] = {}
        for c in await generated_claims(self.api, self.namespace):
            owner = (c["metadata"].get("ownerReferences") or [{}])[0]
            owned.setdefault(owner.get("name", "?"), []).append(
                c["metadata"]["name"]
                + (" (deleting)" if c["metadata"].get("deletionTimestamp") else "")
            )
        pods = set(owned) | set(live)
        return {p: owned.get(p, []) for p in sorted(pods) if len(owned.get(p, [])) != (p in live)}

    async def check(self, plane: controlplane.ControlPlaneState) -> dict[str, int]:
        """The end state every scenario must reach; the counts it found (violations: 0)."""
        live = {n: u for n, u in self.created.items() if n not in self.deleted}
        await self.wait_bound(len(live))

        async def claims_settled() -> list[dict[str, Any]] | None:
            claims = await ride_out(lambda: generated_claims(self.api, self.namespace))
            return claims if len(claims) == len(live) else None

        try:
            claims = await wait_for(
                claims_settled,
                timeout=scale(150, 900),
                what="one generated claim per live pod, no more",
            )
        except pytest.fail.Exception:
            pytest.fail(f"claims not settled: {await self.claims_off(live)}")
        owners = Counter(c["metadata"]["ownerReferences"][0]["uid"] for c in claims)
        assert set(owners) == set(live.values())
        assert set(owners.values()) == {1}
        devices = Counter(
            (r["pool"], r["device"])
            for c in claims
            for r in c["status"]["allocation"]["devices"]["results"]
        )
        twice = {device: n for device, n in devices.items() if n > 1}
        assert not twice, f"devices allocated more than once: {twice}"
        assert len(devices) == len(live)
        for c in claims:
            reserved = [r["uid"] for r in c["status"]["reservedFor"]]
            assert reserved == [c["metadata"]["ownerReferences"][0]["uid"]]
        await verify_clean(plane, self.namespace)
        return {"pods": len(self.created), "claims": len(claims), "violations": 0}


def compact_etcd(etcd_url: str) -> int:
    """Compact etcd's history up to its current revision (the revision it compacted at):
    every watch resumed from an older resourceVersion then gets "410 Gone"."""

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{etcd_url}{path}", data=json.dumps(body).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            result: dict[str, Any] = json.load(answer)
            return result

    key = base64.b64encode(b"/").decode()
    revision = int(post("/v3/kv/range", {"key": key})["header"]["revision"])
    post("/v3/kv/compaction", {"revision": revision, "physical": True})
    return revision
