"""The eviction controller end to end over the stores, with a fake writer at the Protocol seam.

Time is the loop clock under looptime: deadlines are checked in virtual seconds since start.
Covers: immediate eviction (event, condition, UID-preconditioned delete, metric), delay by
tolerationSeconds, a toleration without seconds keeping the pod, cancellation when the taint
goes away (with the cancelling event), a replaced pod not evicted, and a DeviceTaintRule's
status moving from PodsPendingEviction to Completed.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from dra_operator import model
from dra_operator.cluster import ObjectKey
from dra_operator.controllers import Controller
from dra_operator.controllers.eviction import (
    CANCELLING_DELETION,
    MARKING_FOR_DELETION,
    EvictionKey,
    EvictionReconciler,
    keys_for_pod,
    keys_for_rule,
    keys_for_slice,
)
from dra_operator.hooks import EVICTION_RETRY, FailureMode, Guard, HookPoints, LoadedHook
from dra_operator.observability import Metrics

from .builders import DRIVER, POOL, T0, Stores, claim, pod, rule, slice_, taint, toleration

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.looptime]


class FakeWriter:
    """Records the calls; deletes and status writes go back into the stores like a watch."""

    def __init__(self, stores: Stores, clock: Callable[[], float]) -> None:
        self.stores = stores
        self.clock = clock
        self.calls: list[tuple[float, str, str]] = []
        self.statuses: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    def _record(self, what: str, detail: str) -> None:
        self.calls.append((self.clock(), what, detail))
        self.changed.set()

    async def get_pod(self, namespace: str, name: str) -> model.Pod | None:
        entry = self.stores.pods.get(ObjectKey(namespace, name))
        return entry.obj if entry else None

    async def emit(self, pod: model.Pod, message: str) -> None:
        self._record("event", message)

    async def add_disruption_condition(self, pod: model.Pod, now: datetime.datetime) -> None:
        self._record("condition", pod.metadata.name)

    async def delete_pod(self, pod: model.Pod) -> bool:
        self.stores.pods.apply("DELETED", self.stores.pods.get(ObjectKey.of(_raw(pod))).raw)  # type: ignore[union-attr]
        self._record("delete", pod.metadata.uid)
        return True

    async def apply_rule_status(self, body: dict[str, Any]) -> None:
        self.statuses.append(body)
        entry = self.stores.rules.get(ObjectKey("", body["metadata"]["name"]))
        assert entry is not None
        raw = copy.deepcopy(dict(entry.raw))
        raw["status"] = body["status"]
        raw["metadata"]["resourceVersion"] = str(len(self.statuses))
        self.stores.rules.apply("MODIFIED", raw)
        self._record("status", body["status"]["conditions"][0]["reason"])

    async def wait_for(self, what: str) -> float:
        while True:
            for at, kind, _ in self.calls:
                if kind == what:
                    return at
            self.changed.clear()
            await self.changed.wait()


def _raw(pod: model.Pod) -> dict[str, Any]:
    return {"metadata": {"namespace": pod.metadata.namespace, "name": pod.metadata.name}}


class Harness:
    def __init__(self, stores: Stores) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        self.elapsed = lambda: loop.time() - start
        self.stores = stores
        self.writer = FakeWriter(stores, self.elapsed)
        self.evicted: list[float] = []
        self.controller: Controller[EvictionKey]
        self.reconciler = EvictionReconciler(
            pods=stores.pods,
            claims=stores.claims,
            slices=stores.slices,
            rules=stores.rules,
            writer=self.writer,
            schedule=lambda key, delay: self.controller.queue.add_after(key, delay),
            rule_api_version="resource.k8s.io/v1beta2",
            on_evicted=self.evicted.append,
            clock=lambda: T0 + datetime.timedelta(seconds=self.elapsed()),
        )
        self.controller = Controller("eviction", self.reconciler)

    def enqueue(self, keys: list[EvictionKey]) -> None:
        for key in keys:
            self.controller.enqueue(key)

    def kinds(self) -> list[str]:
        return [f"{kind}:{detail}" for _, kind, detail in self.writer.calls]


@contextlib.asynccontextmanager
async def running(stores: Stores) -> AsyncIterator[Harness]:
    h = Harness(stores)
    task = asyncio.get_running_loop().create_task(h.controller.run())
    try:
        yield h
    finally:
        h.controller.shut_down()
        await task


def _scene(tolerations: list[Any] | None = None, taints: list[Any] | None = None) -> Stores:
    stores = Stores()
    stores.add(
        slice_({"dev-0": taints if taints is not None else [taint()]}),
        claim(tolerations=tolerations),
        pod(),
    )
    return stores


async def test_untolerated_taint_evicts_at_once() -> None:
    async with running(_scene()) as h:
        h.enqueue(keys_for_pod(h.stores.pods.get(ObjectKey("default", "p1")).obj))  # type: ignore[union-attr]
        assert await h.writer.wait_for("delete") == 0
        assert h.kinds() == [f"event:{MARKING_FOR_DELETION}", "condition:p1", "delete:uid-p1"]
        assert h.evicted == [0.0]


async def test_toleration_seconds_delay_eviction() -> None:
    async with running(_scene([toleration(seconds=60)])) as h:
        h.enqueue([EvictionKey("pod", "default", "p1")])
        assert await h.writer.wait_for("delete") == 60


async def test_toleration_without_seconds_keeps_the_pod() -> None:
    async with running(_scene([toleration()])) as h:
        h.enqueue([EvictionKey("pod", "default", "p1")])
        await asyncio.sleep(3600)  # virtual: an hour on the loop clock passes with no eviction
        assert h.writer.calls == []
        assert h.controller.queue.waiting == 0


async def test_removed_taint_cancels_the_eviction() -> None:
    async with running(_scene([toleration(seconds=60)])) as h:
        h.enqueue([EvictionKey("pod", "default", "p1")])
        await asyncio.sleep(30)
        old = h.stores.slices.get(ObjectKey("", "s1"))
        h.stores.add(slice_({"dev-0": []}))
        new = h.stores.slices.get(ObjectKey("", "s1"))
        assert old is not None and new is not None
        h.enqueue(keys_for_slice(old.obj, new.obj, h.stores.claims))
        assert await h.writer.wait_for("event") == 30
        await asyncio.sleep(300)
        assert h.kinds() == [f"event:{CANCELLING_DELETION}"]
        assert h.controller.queue.waiting == 0


async def test_replaced_pod_is_not_evicted() -> None:
    stores = _scene([toleration(seconds=10)])
    async with running(stores) as h:
        h.enqueue([EvictionKey("pod", "default", "p1")])
        await asyncio.sleep(5)
        stores.add(pod(uid="uid-new"))  # same name, new UID; its claim is not reserved for it
        h.enqueue([EvictionKey("pod", "default", "p1")])
        await asyncio.sleep(60)
        assert "delete:uid-p1" not in h.kinds()


async def test_rule_evicts_and_its_status_moves_to_completed() -> None:
    stores = _scene([toleration(seconds=20)], taints=[])
    async with running(stores) as h:
        stores.add(rule(selector={"driver": DRIVER}))
        new = stores.rules.get(ObjectKey("", "r1"))
        assert new is not None
        h.enqueue(keys_for_rule(None, new.obj, stores.claims))
        assert await h.writer.wait_for("status") == 0
        assert await h.writer.wait_for("delete") == 20
        while h.writer.statuses[-1]["status"]["conditions"][0]["reason"] != "Completed":
            h.writer.changed.clear()
            await h.writer.changed.wait()
        reasons = [s["status"]["conditions"][0]["reason"] for s in h.writer.statuses]
        assert reasons == ["PodsPendingEviction", "Completed"]
        first, last = (s["status"]["conditions"][0] for s in h.writer.statuses)
        assert first["message"] == "1 pod needs to be evicted in 1 namespace."
        assert last["message"] == "1 pod evicted since starting the controller."
        assert h.writer.calls[-1][0] == 30  # ten seconds after the eviction


async def test_deletion_is_counted_in_upstream_metrics() -> None:
    metrics = Metrics()
    stores = _scene([toleration(seconds=5)])
    async with running(stores) as h:
        h.reconciler._on_evicted = lambda s: metrics.pod_evicted(seconds_after_due=s)
        h.enqueue([EvictionKey("pod", "default", "p1")])
        await h.writer.wait_for("delete")
    text = metrics.render().decode()
    assert "device_taint_eviction_controller_pod_deletions_total 1.0" in text
    assert (
        'device_taint_eviction_controller_pod_deletion_duration_seconds_bucket{le="0.005"} 1.0'
        in text
    )


async def test_rule_with_effect_none_reports_a_dry_run_and_evicts_nothing() -> None:
    stores = Stores()
    stores.add(slice_({"dev-0": [], "dev-1": []}), claim(), pod())
    stores.add(rule(effect="None", selector={"driver": DRIVER}))
    async with running(stores) as h:
        new = stores.rules.get(ObjectKey("", "r1"))
        assert new is not None
        h.enqueue(keys_for_rule(None, new.obj, stores.claims))
        await h.writer.wait_for("status")
        await asyncio.sleep(60)
    condition = h.writer.statuses[0]["status"]["conditions"][0]
    assert condition["reason"] == "NoEffect"
    assert condition["message"].startswith(
        "2 published devices selected. 1 allocated device selected."
        " 1 pod would be evicted in 1 namespace if the effect was NoExecute."
    )
    assert h.kinds() == ["status:NoEffect"]


class HoldOnce:
    """Delays the first eviction it is asked about by 30 s, then lets it go ahead."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, tuple[str, ...]]] = []

    async def before_evict(self, pod: model.Pod, reasons: tuple[str, ...]) -> float | None:
        self.asked.append((pod.metadata.name, reasons))
        return 30.0 if len(self.asked) == 1 else None


class Refuses:
    failure_mode = "refuse"

    async def before_evict(self, pod: model.Pod, reasons: tuple[str, ...]) -> float:
        raise RuntimeError("no")


async def test_a_before_evict_hook_delays_the_eviction_and_is_asked_again() -> None:
    hook = HoldOnce()
    async with running(_scene()) as h:
        h.reconciler._hooks = HookPoints([LoadedHook(name="hold", target=hook)], Guard())
        h.enqueue([EvictionKey("pod", "default", "p1")])
        assert await h.writer.wait_for("delete") == 30
    reasons = [f"taint 0 of device {DRIVER}/{POOL}/dev-0"]
    assert hook.asked == [("p1", tuple(reasons)), ("p1", tuple(reasons))]


async def test_a_failing_refusing_before_evict_hook_delays_by_the_retry_period() -> None:
    async with running(_scene()) as h:
        target = Refuses()
        h.reconciler._hooks = HookPoints(
            [LoadedHook(name="no", target=target, failure_mode=FailureMode.REFUSE)], Guard()
        )
        h.enqueue([EvictionKey("pod", "default", "p1")])
        await asyncio.sleep(EVICTION_RETRY * 3 - 1)  # virtual: three asks, no eviction
        assert h.writer.calls == []
        h.reconciler._hooks = None
        assert await h.writer.wait_for("delete") == EVICTION_RETRY * 3
