"""The ResourcePoolStatusRequest controller as a plugin: stores, the writer, the clean-up loop.

Where the API server does not serve the kind (DRAResourcePoolStatus off, or resource.k8s.io
v1alpha3 not enabled) there is nothing to answer: the plugin only waits to be shut down.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dra_operator import errors
from dra_operator.app._caches import Kind
from dra_operator.app._plugin import Context
from dra_operator.cluster import Change
from dra_operator.controllers import Controller, WorkQueue
from dra_operator.controllers.poolstatus import (
    CLEANUP_PERIOD,
    QUEUE,
    KubePoolStatusWriter,
    PoolStatusReconciler,
)
from dra_operator.observability import LogEvent, get_logger

_log = get_logger(__name__)


class PoolStatusPlugin:
    name = "poolstatus"

    def __init__(self, ctx: Context) -> None:
        caches = ctx.caches
        self._stopped = asyncio.Event()
        self.reconciler: PoolStatusReconciler | None = None
        self.controller: Controller[str] | None = None
        if caches.pool_status_requests is None:
            return
        queue: WorkQueue[str] = WorkQueue(metrics=ctx.metrics.workqueue(QUEUE))
        self.reconciler = PoolStatusReconciler(
            requests=caches.pool_status_requests,
            slices=caches.slices,
            claims=caches.claims,
            rules=caches.taint_rules if ctx.server.taint_rules_in_effect else None,
            writer=KubePoolStatusWriter(ctx.api, ctx.server.resource(Kind.POOL_STATUS_REQUESTS)),
            failures=queue.failures,
        )
        self.controller = Controller(
            QUEUE, self.reconciler, workers=1, observe=ctx.observe(QUEUE), queue=queue
        )

    def on_change(self, kind: Kind, change: Change[Any]) -> None:
        if kind is not Kind.POOL_STATUS_REQUESTS or self.controller is None or change.new is None:
            return
        if not change.new.obj.answered:
            self.controller.enqueue(change.new.key.name)

    def resync(self) -> None:
        if self.reconciler is not None and self.controller is not None:
            for name in self.reconciler.pending():
                self.controller.enqueue(name)

    async def run(self) -> None:
        if self.controller is None or self.reconciler is None:
            await self._stopped.wait()
            return
        async with asyncio.TaskGroup() as group:
            cleanup = group.create_task(self._clean_up(self.reconciler))
            await self.controller.run()
            cleanup.cancel()

    async def _clean_up(self, reconciler: PoolStatusReconciler) -> None:
        while True:
            try:
                deleted = await reconciler.clean_up()
            except errors.APIError as exc:  # the next round tries again
                _log.warning(LogEvent.POOL_STATUS_CLEANUP_FAILED, error=str(exc))
            else:
                if deleted:
                    _log.info(LogEvent.POOL_STATUS_CLEANUP, deleted=deleted)
            await asyncio.sleep(CLEANUP_PERIOD)

    def shut_down(self) -> None:
        self._stopped.set()
        if self.controller is not None:
            self.controller.shut_down()


def build_pool_status(ctx: Context) -> PoolStatusPlugin:
    return PoolStatusPlugin(ctx)
