"""The device-taint eviction controller as a plugin: stores, the writer, the mappers.

The DeviceTaintRule store exists only when the server serves the kind (`Caches.taint_rules`);
without it only slice taints evict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dra_operator import names
from dra_operator.app._caches import Kind
from dra_operator.app._plugin import Context
from dra_operator.cluster import Change
from dra_operator.controllers import Controller
from dra_operator.controllers.eviction import (
    EvictionKey,
    EvictionReconciler,
    KubeEvictionWriter,
    keys_for_claim,
    keys_for_pod,
    keys_for_rule,
    keys_for_slice,
)
from dra_operator.observability import Metrics


class EvictionPlugin:
    name = "eviction"

    def __init__(self, ctx: Context) -> None:
        caches = ctx.caches
        self._caches = caches
        serves_rules = ctx.server.serves(Kind.TAINT_RULES)
        rules = ctx.server.resource(Kind.TAINT_RULES) if serves_rules else None
        self.controller: Controller[EvictionKey]
        self.reconciler = EvictionReconciler(
            pods=caches.pods,
            claims=caches.claims,
            slices=caches.slices,
            rules=caches.taint_rules,
            writer=KubeEvictionWriter(ctx.api, rules=rules, metrics=ctx.metrics),
            schedule=lambda key, delay: self.controller.queue.add_after(key, delay),
            rule_api_version=rules.api_version if rules is not None else "",
            on_evicted=_deletions(ctx.metrics),
            hooks=ctx.hooks.points if ctx.hooks.hooks else None,
        )
        self.controller = Controller(
            names.EVICTION_QUEUE,
            self.reconciler,
            workers=ctx.settings.workers,
            observe=ctx.observe(names.EVICTION_QUEUE),
            metrics=ctx.metrics.workqueue(names.EVICTION_QUEUE),
        )

    def on_change(self, kind: Kind, change: Change[Any]) -> None:
        old = change.old.obj if change.old else None
        new = change.new.obj if change.new else None
        claims = self._caches.claims
        keys: list[EvictionKey] = []
        if kind is Kind.PODS:
            keys = [k for obj in change.objects() for k in keys_for_pod(obj)]
        elif kind is Kind.CLAIMS:
            keys = [k for obj in change.objects() for k in keys_for_claim(obj)]
        elif kind is Kind.SLICES and self._caches.named is None:  # 1.30's have no taints
            keys = keys_for_slice(old, new, claims)
        elif kind is Kind.TAINT_RULES:
            keys = keys_for_rule(old, new, claims)
        for key in keys:
            self.controller.enqueue(key)

    def resync(self) -> None:
        for entry in self._caches.pods:
            if entry.obj.spec.node_name:
                self.controller.enqueue(EvictionKey("pod", *entry.key))
        for rule in self._caches.taint_rules or ():
            self.controller.enqueue(EvictionKey("rule", "", rule.key.name))

    async def run(self) -> None:
        await self.controller.run()

    def shut_down(self) -> None:
        self.controller.shut_down()


def _deletions(metrics: Metrics) -> Callable[[float], None]:
    """`device_taint_eviction_controller_pod_deletion*` through `Metrics.pod_evicted`."""
    return lambda seconds: metrics.pod_evicted(seconds_after_due=seconds)


def build_eviction(ctx: Context) -> EvictionPlugin:
    return EvictionPlugin(ctx)
