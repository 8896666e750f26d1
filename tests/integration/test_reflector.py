"""The operator's own watch of the busy kinds against a real apiserver, under deploy/'s RBAC.

Covers: the LIST reaches `listed` in one call; every later change arrives as one event, none
twice, while the server ends the stream every second (the watch resumes from the last
resourceVersion, without a LIST). 410 Gone and the relist that follows it are the chaos suite's
(tests/chaos/test_watch_expiry.py: this apiserver's watch cache still holds every version).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from tests.support.operator import wait_for

from dra_operator.app._reflector import Reflector
from dra_operator.kube import PODS, Client

pytestmark = pytest.mark.controlplane


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "x"}]},
    }


class Seen:
    """What the reflector handed over."""

    def __init__(self) -> None:
        self.lists: list[tuple[list[str], bool]] = []
        self.events: list[tuple[str, str, str]] = []

    def listed(self, items: list[Mapping[str, Any]], version: str, relisted: bool) -> None:
        assert version
        self.lists.append((sorted(item["metadata"]["name"] for item in items), relisted))

    def event(self, kind: str, obj: Mapping[str, Any]) -> None:
        metadata = obj["metadata"]
        self.events.append((kind, metadata["name"], metadata["resourceVersion"]))


@contextlib.asynccontextmanager
async def running(reflector: Reflector) -> AsyncIterator[None]:
    task = asyncio.create_task(reflector.run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_the_reflector_lists_then_watches_and_resumes_without_replaying(
    admin_api: Client, operator_api: Client, namespace: str
) -> None:
    for name in ("p-0", "p-1"):
        await admin_api.create(PODS, _pod(name), namespace=namespace)
    seen = Seen()
    reflector = Reflector(
        operator_api,
        PODS,
        namespace=namespace,
        listed=seen.listed,
        event=seen.event,
        watch_seconds=1,
    )
    async with running(reflector):
        await asyncio.wait_for(reflector.synced.wait(), 60)
        assert seen.lists == [(["p-0", "p-1"], False)]

        await admin_api.create(PODS, _pod("p-2"), namespace=namespace)
        await asyncio.sleep(2.5)  # the server ends the stream at least twice
        patch = {"metadata": {"labels": {"changed": "yes"}}}
        await admin_api.patch(PODS, "p-0", patch, namespace=namespace)
        await admin_api.delete(PODS, "p-1", namespace=namespace, grace_period_seconds=0)

        def arrived() -> bool:
            return any(event[:2] == ("DELETED", "p-1") for event in seen.events)

        await wait_for(arrived, timeout=60, what="the deletion")
        await asyncio.sleep(2)  # more stream ends: nothing arrives twice
        assert [(kind, name) for kind, name, _ in seen.events] == [
            ("ADDED", "p-2"),
            ("MODIFIED", "p-0"),
            ("MODIFIED", "p-1"),  # its deletionTimestamp
            ("DELETED", "p-1"),
        ], seen.events
        assert reflector.lists == 1
