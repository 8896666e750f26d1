"""The scheduler controller as a plugin: its state over the caches, the writer over the API.

The NodeInfos (each node with the pods placed on it) live with the plugin, so each leadership
term starts them from the node and pod caches in `resync` and keeps them from changes
afterwards. So do
the CEL evaluator and its counters, which the operator's metrics read when scraped.
DeviceTaintRules reach the decisions through `TaintedSlices` when the server has them in effect
(`ServerInfo.taint_rules_in_effect`). When the AllocationPolicy CRD is served, the plugin also
runs the policy status writer (the scheduler is what applies policies), in a queue of its own.
When the server serves PodGroups, the pods of a gang are placed by group cycles (`Gangs`).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from dra_operator import names
from dra_operator.allocator import FirstFit
from dra_operator.app._caches import Kind
from dra_operator.app._plugin import Context
from dra_operator.cluster import Change
from dra_operator.controllers import Controller
from dra_operator.controllers.policies import (
    ALL_POLICIES,
    STATUS_DELAY,
    KubePolicyStatusWriter,
    PolicyStatusReconciler,
)
from dra_operator.controllers.scheduler import (
    CELSelectors,
    Governor,
    KubeContextWriter,
    KubeSchedulerWriter,
    LiveHandle,
    PreemptionWriter,
    Preemptor,
    Scheduler,
    Settings,
    State,
    TaintedSlices,
    Verdicts,
    WorkKey,
    cel_stats,
    default_framework,
    handles,
    waiting_texts,
)
from dra_operator.controllers.scheduler.framework import NodeInfoCache
from dra_operator.controllers.scheduler.gang import Gangs, KubeGroupWriter

_POLICY_INPUTS = frozenset({Kind.POLICIES, Kind.NAMESPACES, Kind.CLAIMS})
_NAMED_KINDS = frozenset({Kind.SLICES, Kind.CLASS_PARAMETERS, Kind.CLAIM_PARAMETERS})  # 1.30
"""Kinds whose changes may move a policy's status (claims governed, validity)."""
_STORAGE_KINDS = frozenset(
    {
        Kind.PERSISTENT_VOLUMES,
        Kind.PERSISTENT_VOLUME_CLAIMS,
        Kind.STORAGE_CLASSES,
        Kind.CSI_NODES,
        Kind.CSI_DRIVERS,
    }
)
"""Kinds the volume plugins read: their changes wake the parked pods."""


class SchedulerPlugin:
    name = "scheduler"

    def __init__(self, ctx: Context) -> None:
        caches = ctx.caches
        features = ctx.server.features
        handle = LiveHandle(
            pvcs=caches.persistent_volume_claims,
            pvs=caches.persistent_volumes,
            storage_classes=caches.storage_classes,
            csi_nodes=caches.csi_nodes,
            csi_drivers=caches.csi_drivers,
            classes=caches.classes,
            namespaces=caches.namespaces,
            client=ctx.api,
            metrics=ctx.metrics,
            extended_resources=ctx.server.extended_resources_in_effect,
        )
        self.state = State(
            pods=caches.pods,
            claims=caches.claims,
            classes=caches.classes,
            slices=caches.slices,
            nodes=caches.nodes,
            ledger=caches.ledger,
            node_infos=NodeInfoCache(),
            contexts=caches.contexts,
            named=caches.named,
            tainted=TaintedSlices(
                caches.taint_rules if ctx.server.taint_rules_in_effect else None,
                selectorless_matches_all=not features.since_137,
            ),
            verdicts=Verdicts(),
            # The default profile, and the `--config` file's profiles by scheduler name; hooks
            # serving framework points join each.
            framework=default_framework(hooks=ctx.hooks, handle=handle),
            profiles={
                p.scheduler_name: default_framework(hooks=ctx.hooks, handle=handle, profile=p)
                for p in ctx.settings.scheduler_profiles
            },
        )
        selectors = CELSelectors(features)
        settings = Settings(
            features=features,
            policy=FirstFit(),
            selectors=selectors,
            metrics=ctx.metrics,
            extended_resources=ctx.server.extended_resources_in_effect,
            waiting=waiting_texts(ctx.server.minor),
        )
        ctx.metrics.track_cel(functools.partial(cel_stats, selectors, settings.selection))
        writer = KubeSchedulerWriter(ctx.api, ctx.server.resource(Kind.CLAIMS), metrics=ctx.metrics)
        contexts = None
        if caches.contexts is not None:  # classic DRA (docs/classic.md)
            contexts = KubeContextWriter(
                ctx.api, ctx.server.resource(Kind.SCHEDULING_CONTEXTS), metrics=ctx.metrics
            )
        pdbs = caches.pdbs
        preemptor = Preemptor(
            self.state,
            PreemptionWriter(ctx.api, metrics=ctx.metrics),
            budgets=lambda: [entry.obj for entry in pdbs] if pdbs is not None else [],
            metrics=ctx.metrics,
        )
        gangs = None
        group_resource = ctx.server.pod_group_resource
        if caches.pod_groups is not None and group_resource is not None:  # GenericWorkload
            gangs = Gangs(
                caches.pod_groups,
                KubeGroupWriter(ctx.api, group_resource, metrics=ctx.metrics),
                release=ctx.server.minor,
            )
        self.scheduler = Scheduler(
            self.state,
            settings,
            writer,
            scheduler_names=ctx.settings.placed_scheduler_names,
            observe=ctx.observe(names.SCHEDULER_QUEUE),
            governor=Governor(ctx.hooks, policies=caches.policies, namespaces=caches.namespaces),
            contexts=contexts,
            preemptor=preemptor,
            gangs=gangs,
        )
        self.policy_status: Controller[str] | None = None
        if caches.policies is not None and caches.namespaces is not None:
            reconciler = PolicyStatusReconciler(
                policies=caches.policies,
                claims=caches.claims,
                namespaces=caches.namespaces,
                known_hooks=ctx.hooks.names,
                writer=KubePolicyStatusWriter(ctx.api),
            )
            self.policy_status = Controller(
                names.POLICY_STATUS_QUEUE,
                reconciler,
                workers=1,
                observe=ctx.observe(names.POLICY_STATUS_QUEUE),
                metrics=ctx.metrics.workqueue(names.POLICY_STATUS_QUEUE),
            )

    def on_change(self, kind: Kind, change: Change[Any]) -> None:
        if kind is Kind.PODS:
            self.scheduler.pod_changed(change)
        elif kind is Kind.CLAIMS:
            self.scheduler.claim_changed(change)
        elif kind in _NAMED_KINDS and self.state.named is not None:
            self.scheduler.named_inventory_changed()
        elif kind is Kind.SLICES:
            self.scheduler.slice_changed(change)
        elif kind is Kind.CLASSES:
            self.scheduler.class_changed(change)
        elif kind is Kind.NODES:
            self.scheduler.node_changed(change)
        elif kind is Kind.TAINT_RULES:
            self.scheduler.rule_changed(change)
        elif kind is Kind.SCHEDULING_CONTEXTS:
            self.scheduler.context_changed(change)
        elif kind in (Kind.POLICIES, Kind.NAMESPACES):
            self.scheduler.policy_changed()
        elif kind in _STORAGE_KINDS:
            self.scheduler.storage_changed()
        elif kind is Kind.POD_GROUPS and self.scheduler.gangs is not None:
            self.scheduler.gangs.group_changed(change, self.scheduler)
        if self.policy_status is not None and kind in _POLICY_INPUTS:
            self.policy_status.queue.add_after(ALL_POLICIES, STATUS_DELAY)

    def resync(self) -> None:
        names_ = self.scheduler.scheduler_names
        for node in self.state.nodes:
            self.state.node_infos.node_changed(node.obj)
        for entry in self.state.pods:
            self.state.node_infos.pod_changed(entry.obj)
            if self.scheduler.preemptor is not None:  # nominations a status names
                self.scheduler.preemptor.pod_changed(None, entry.obj)
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
        if self.policy_status is not None:
            self.policy_status.enqueue(ALL_POLICIES)

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(self.scheduler.run(), name="scheduler")
            if self.policy_status is not None:
                group.create_task(self.policy_status.run(), name="policy-status")

    def shut_down(self) -> None:
        self.scheduler.shut_down()
        if self.policy_status is not None:
            self.policy_status.shut_down()


def build_scheduler(ctx: Context) -> SchedulerPlugin:
    return SchedulerPlugin(ctx)
