"""The assembly: caches, controllers and leader election for one `dra-operator run`.

```
kopf event handler ─▶ Operator.handle(kind, event) ─▶ caches.apply ─▶ change
                                 (leader only) └─▶ plugin.on_change(kind, change) ─▶ keys
LeaseElector.run(lead):  lead() = wait for synced caches → build plugins → resync → run them
```

Every replica feeds its caches from the watches; only the Lease holder builds and runs the
controllers, and it builds them afresh each time it becomes leader (a shut-down queue stays
shut). Losing the Lease cancels `lead()`: the workers stop and the plugins are dropped, while
the caches stay warm for the next term.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from typing import Any

from dra_operator import errors, hooks, kube, names
from dra_operator.app._caches import Caches, Kind
from dra_operator.app._discovery import ServerInfo
from dra_operator.app._leader import LeaseElector
from dra_operator.app._plugin import Builder, Context, Plugin
from dra_operator.app._registry import BUILDERS
from dra_operator.app._retry import until_answered
from dra_operator.app._settings import Settings
from dra_operator.cluster import Change, version_number
from dra_operator.controllers import Observer
from dra_operator.observability import (
    Health,
    LogEvent,
    Metrics,
    ProbeServer,
    Role,
    get_logger,
    reconcile_observer,
)

_log = get_logger(__name__)

_RELIST_SETTLE = 1.0
"""Seconds a relist's objects are given to arrive before the stale ones are pruned."""


class Operator:
    """One operator instance; `controllers` are the names chosen for this run."""

    def __init__(
        self,
        settings: Settings,
        api: kube.Client,
        server: ServerInfo,
        controllers: list[str],
        *,
        builders: Mapping[str, Builder] = BUILDERS,
    ) -> None:
        self.settings = settings
        self.api = api
        self.server = server
        self.caches = Caches(
            server.versions,
            consumable_capacity=server.features.consumable_capacity,
            policies=server.policies,
            on_invalid=self._invalid,
        )
        self.health = Health(caches=[str(kind) for kind in self.caches.kinds])
        self.metrics = Metrics(health=self.health)
        for kind, store in self.caches.stores.items():
            self.metrics.track_cache(str(kind), store.__len__)
            store.assumed_hooks.append(functools.partial(self._assumed, kind))
        claims = self.caches.claims
        self.metrics.count_claims(lambda: [entry.obj for entry in claims])
        self.hooks = hooks.HookSet.load(settings.hooks, metrics=self.metrics)
        if self.hooks.hooks:
            _log.info("hooks.loaded", hooks=sorted(self.hooks.names))
        unknown = [name for name in controllers if name not in builders]
        for name in unknown:
            _log.warning("controller.unavailable", controller=name)
        self._builders = {name: builders[name] for name in controllers if name in builders}
        self.plugins: list[Plugin] = []
        self.leading = asyncio.Event()
        self.elector: LeaseElector | None = None
        self.probes: ProbeServer | None = None  # serving /metrics, /healthz, /readyz
        self._invalid_events: list[asyncio.Task[Any]] = []
        self._relisting: set[Kind] = set()
        self._background: set[asyncio.Task[None]] = set()

    @property
    def controllers(self) -> list[str]:
        return list(self._builders)

    def resource(self, kind: Kind) -> kube.Resource:
        if kind is Kind.PODS:
            return kube.PODS
        if kind is Kind.NODES:
            return kube.NODES
        if kind is Kind.NAMESPACES:
            return kube.NAMESPACES
        if kind is Kind.POLICIES:
            return kube.ALLOCATION_POLICIES
        return self.server.resource(kind)

    # -- watch events -------------------------------------------------------------------------

    def handle(self, kind: Kind, event_type: str | None, raw: Mapping[str, Any]) -> None:
        """One watch event: into the caches, then to the running controllers as keys.

        kopf delivers a LIST's objects as events of type None; after the initial sync they
        mean the watch listed again (410 Gone, or a stream that broke off).
        """
        if event_type is None and self.caches.synced():
            self._relisted(kind)
        change = self.caches.apply(kind, event_type, raw)
        if change is None:
            return
        for plugin in self.plugins:
            plugin.on_change(kind, change)

    def _relisted(self, kind: Kind) -> None:
        if kind in self._relisting:
            return
        self._relisting.add(kind)
        _log.info(LogEvent.WATCH_RELISTED, resource=str(kind))
        self.metrics.watch_relisted(str(kind))
        task = asyncio.get_running_loop().create_task(self._after_relist(kind))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _after_relist(self, kind: Kind) -> None:
        """Prune what the relist no longer holds, from a LIST of our own (kopf does not say
        when its listing ends or what it lacked)."""
        await asyncio.sleep(_RELIST_SETTLE)
        self._relisting.discard(kind)
        try:
            items, snapshot = await self.list_snapshot(kind)
        except errors.APIError as exc:
            _log.warning("cache.prune_failed", resource=str(kind), error=str(exc))
            return
        if snapshot is None:
            return  # resourceVersions we cannot order: nothing is pruned
        changes = self.caches.prune(kind, items, snapshot)
        if changes:
            _log.info(
                LogEvent.CACHE_PRUNED,
                resource=str(kind),
                deleted=sorted(str(change.key) for change in changes),
            )
        for change in changes:
            for plugin in self.plugins:
                plugin.on_change(kind, change)

    def _assumed(self, kind: Kind, change: Change[Any]) -> None:
        """A controller's own write, taken into a store before the watch shows it."""
        if kind is Kind.CLAIMS:
            self.caches.ledger.observe(change)
        for plugin in self.plugins:
            plugin.on_change(kind, change)

    def _invalid(self, kind: Kind, raw: Mapping[str, Any], exc: errors.InvalidObjectError) -> None:
        metadata = raw.get("metadata") or {}
        _log.warning(
            "object.invalid",
            kind=str(kind),
            namespace=metadata.get("namespace"),
            name=metadata.get("name"),
            error=str(exc),
        )
        if not self.leading.is_set():
            return  # one report per object: the leader's
        regarding = {
            "apiVersion": raw.get("apiVersion"),
            "kind": raw.get("kind"),
            "namespace": metadata.get("namespace"),
            "name": metadata.get("name"),
            "uid": metadata.get("uid"),
        }
        post = kube.post_event(
            self.api,
            regarding,
            type=names.EVENT_TYPE_WARNING,
            reason="InvalidObject",
            message=f"dra-operator cannot read this object: {exc}",
            component=names.OPERATOR_FIELD_MANAGER,
        )
        task = asyncio.get_running_loop().create_task(post)
        self._invalid_events.append(task)
        task.add_done_callback(self._invalid_events.remove)

    # -- controllers --------------------------------------------------------------------------

    async def list_kind(self, kind: Kind) -> list[Mapping[str, Any]]:
        """The objects of one kind in the namespaces we serve (for the synced check)."""
        items, _ = await self.list_snapshot(kind)
        return items

    async def list_snapshot(self, kind: Kind) -> tuple[list[Mapping[str, Any]], int | None]:
        """The objects of one kind in the namespaces we serve, and the oldest resourceVersion
        of the LISTs (one per namespace) that returned them (None when not an integer)."""
        items: list[Mapping[str, Any]] = []
        versions: list[int | None] = []
        resource = self.resource(kind)
        scopes: tuple[str | None, ...] = (None,)
        if resource.namespaced and self.settings.namespaces:
            scopes = self.settings.namespaces
        for namespace in scopes:
            token: str | None = None
            while True:
                page = await until_answered(
                    functools.partial(
                        self.api.list,
                        resource,
                        namespace=namespace,
                        limit=500,
                        continue_token=token,
                    ),
                    f"list {kind}",
                )
                items.extend(page.get("items") or ())
                metadata = page.get("metadata") or {}
                if token is None:
                    versions.append(version_number(metadata.get("resourceVersion")))
                token = metadata.get("continue") or None
                if token is None:
                    break
        known = [v for v in versions if v is not None]
        return items, (min(known) if known and len(known) == len(versions) else None)

    async def wait_synced(self) -> None:
        """client-go's WaitForCacheSync: every kind listed once (see `Caches`)."""
        await self.caches.wait_synced(self.list_kind)
        for kind in self.caches.kinds:
            self.health.set_cache_synced(str(kind))
        sizes = {str(kind): len(store) for kind, store in self.caches.stores.items()}
        _log.info(LogEvent.CACHE_SYNCED, **sizes)

    async def lead(self) -> None:
        """Run the controllers until cancelled (leadership lost or shutdown)."""
        context = Context(
            self.settings,
            self.server,
            self.caches,
            self.api,
            self._observer,
            self.metrics,
            self.hooks,
        )
        plugins = [build(context) for build in self._builders.values()]
        self.plugins = plugins
        self.leading.set()
        self.health.set_role(Role.LEADER)
        try:
            for plugin in plugins:
                plugin.resync()
            async with asyncio.TaskGroup() as group:
                for plugin in plugins:
                    group.create_task(plugin.run(), name=f"controller-{plugin.name}")
        finally:
            self.health.set_role(Role.STANDBY)
            self.leading.clear()
            self.plugins = []
            for plugin in plugins:
                plugin.shut_down()

    async def run(self) -> None:
        """Sync the caches, then lead when elected (at once without leader election).

        The caches sync before campaigning, as kube-scheduler's informers do: a new leader
        then starts from a full picture, and a follower is ready to take over.
        """
        await self.wait_synced()
        self.health.set_role(Role.STANDBY)
        election = self.settings.leader_election
        if not election.enabled:
            await self.lead()
            return
        self.elector = LeaseElector(self.api, election, self.settings.identity)
        await self.elector.run(self.lead)

    def _observer(self, controller: str) -> Observer[Any]:
        """Counts every outcome and logs an error once, where it is handled."""
        return reconcile_observer(self.metrics, controller)
