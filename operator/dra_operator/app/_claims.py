"""The claims controller as a plugin: the stores behind `StoreView`, the writer over the API,
and the claims mappers (upstream's `enqueuePod`, `enqueueResourceClaim`,
`enqueueResourceClaimTemplate`) on both sides of every change."""

from __future__ import annotations

from typing import Any

from dra_operator import names
from dra_operator.app._caches import Kind
from dra_operator.app._plugin import Context
from dra_operator.cluster import Change
from dra_operator.controllers import Controller
from dra_operator.controllers.claims import (
    ClaimsFeatures,
    ClaimsReconciler,
    KubeClaimsWriter,
    StoreView,
    WorkKey,
    keys_for_claim,
    keys_for_pod,
    keys_for_pod_group,
    keys_for_template,
)


class ClaimsPlugin:
    name = "claims"

    def __init__(self, ctx: Context) -> None:
        caches = ctx.caches
        self._caches = caches
        self.view = StoreView(
            caches.pods, caches.claims, caches.templates, caches.deleted_pods, caches.pod_groups
        )
        features = ClaimsFeatures(
            admin_access=ctx.server.features.admin_access,
            prioritized_list=ctx.server.features.prioritized_list,
            since_137=ctx.server.features.since_137,
            naming=ctx.server.claim_naming,
        )
        metrics = ctx.metrics
        writer = KubeClaimsWriter(
            ctx.api,
            claims=ctx.server.resource(Kind.CLAIMS),
            pod_groups=ctx.server.pod_group_resource,
            metrics=metrics,
        )
        reconciler = ClaimsReconciler(
            self.view,
            caches.claims,
            writer,
            features,
            on_created=lambda ok, admin: metrics.claim_created(ok=ok, admin_access=admin),
            recheck=ctx.handover_recent,
            pods=caches.pods,
        )
        self.controller: Controller[WorkKey] = Controller(
            names.CLAIMS_QUEUE,
            reconciler,
            workers=ctx.settings.workers,
            observe=ctx.observe(names.CLAIMS_QUEUE),
            metrics=metrics.workqueue(names.CLAIMS_QUEUE),
        )

    def on_change(self, kind: Kind, change: Change[Any]) -> None:
        deleted = change.new is None
        for obj in change.objects():
            if kind is Kind.PODS:
                keys = keys_for_pod(obj, self.view, deleted=deleted)
            elif kind is Kind.CLAIMS:
                keys = keys_for_claim(obj, self.view, self.view, deleted=deleted)
            elif kind is Kind.TEMPLATES and not deleted:
                keys = keys_for_template(obj, self.view, self.view)
            elif kind is Kind.POD_GROUPS:
                keys = keys_for_pod_group(obj, self.view, self.view, deleted=deleted)
            else:
                continue
            for key in keys:
                self.controller.enqueue(key)

    def resync(self) -> None:
        for entry in self._caches.pods:
            for key in keys_for_pod(entry.obj, self.view):
                self.controller.enqueue(key)
        for claim in self._caches.claims:
            for key in keys_for_claim(claim.obj, self.view, self.view):
                self.controller.enqueue(key)
        for group in self._caches.pod_groups or ():
            for key in keys_for_pod_group(group.obj, self.view, self.view):
                self.controller.enqueue(key)

    async def run(self) -> None:
        await self.controller.run()

    def shut_down(self) -> None:
        self.controller.shut_down()


def build_claims(ctx: Context) -> ClaimsPlugin:
    return ClaimsPlugin(ctx)
