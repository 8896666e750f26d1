"""The scheduler controller as a plugin: its state over the caches, the writer over the API.

The node usage (requests of placed pods per node) lives with the plugin, so each leadership
term starts it from the pod cache in `resync` and keeps it from pod changes afterwards. So do
the CEL evaluator and its counters, which the operator's metrics read when scraped.
"""

from __future__ import annotations

from typing import Any

from dra_operator import names
from dra_operator.allocator import FirstFit
from dra_operator.app._caches import Kind
from dra_operator.app._plugin import Context
from dra_operator.cluster import Change
from dra_operator.controllers.scheduler import (
    CELSelectors,
    KubeSchedulerWriter,
    NodeUsage,
    Scheduler,
    Settings,
    State,
    WorkKey,
    handles,
)


class SchedulerPlugin:
    name = "scheduler"

    def __init__(self, ctx: Context) -> None:
        caches = ctx.caches
        features = ctx.server.features
        self.state = State(
            pods=caches.pods,
            claims=caches.claims,
            classes=caches.classes,
            slices=caches.slices,
            nodes=caches.nodes,
            ledger=caches.ledger,
            usage=NodeUsage(),
        )
        selectors = CELSelectors(features)
        ctx.metrics.track_cel(selectors.stats)
        settings = Settings(
            features=features, policy=FirstFit(), selectors=selectors, metrics=ctx.metrics
        )
        writer = KubeSchedulerWriter(ctx.api, ctx.server.resource(Kind.CLAIMS), metrics=ctx.metrics)
        self.scheduler = Scheduler(
            self.state,
            settings,
            writer,
            scheduler_names=frozenset(ctx.settings.scheduler_names),
            observe=ctx.observe(names.SCHEDULER_QUEUE),
        )

    def on_change(self, kind: Kind, change: Change[Any]) -> None:
        if kind is Kind.PODS:
            self.scheduler.pod_changed(change)
        elif kind is Kind.CLAIMS:
            self.scheduler.claim_changed(change)
        elif kind is Kind.SLICES:
            self.scheduler.slice_changed(change)
        elif kind is Kind.CLASSES:
            self.scheduler.class_changed(change)
        elif kind is Kind.NODES:
            self.scheduler.node_changed(change)

    def resync(self) -> None:
        names_ = self.scheduler.scheduler_names
        for entry in self.state.pods:
            self.state.usage.pod_changed(entry.obj)
        for entry in self.state.pods:
            if handles(entry.obj, names_):
                self.scheduler.controller.enqueue(
                    WorkKey("pod", entry.key.namespace, entry.key.name)
                )
        for claim in self.state.claims:
            annotations = claim.obj.metadata.annotations
            if annotations.get(names.ALLOCATE_ANNOTATION) == names.ALLOCATE_IMMEDIATE:
                self.scheduler.controller.enqueue(
                    WorkKey("claim", claim.key.namespace, claim.key.name)
                )

    async def run(self) -> None:
        await self.scheduler.run()

    def shut_down(self) -> None:
        self.scheduler.shut_down()


def build_scheduler(ctx: Context) -> SchedulerPlugin:
    return SchedulerPlugin(ctx)
