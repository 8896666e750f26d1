"""The lifecycle of one `dra-operator run`: sync, campaign, lead, start and stop controllers.

```
Informer (reflectors ─▶ caches) ─▶ Operator._changed ─┬▶ Coexistence.observe (claims)
                                                     └▶ plugin.on_change(kind, change) ─▶ keys
                                                        (leader only)
LeaseElector.run(lead):  lead() = wait for synced caches → build plugins → resync → run them
UpstreamWatch.run(set_upstream): KCM's Lease held → its controllers stop; released → start
```

Every replica feeds its caches from the watches (`_informer`); only the Lease holder builds and
runs the controllers, and it builds them afresh each time it becomes leader (a shut-down queue
stays shut). Losing the Lease cancels `lead()`: the workers stop and the plugins are dropped,
while the caches stay warm for the next term. Which controllers run beside upstream's is
`_coexistence`'s to say.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from typing import Any

from dra_operator import errors, hooks, kube, model, names
from dra_operator.app._caches import Caches, Kind
from dra_operator.app._coexistence import Coexistence
from dra_operator.app._discovery import ServerInfo
from dra_operator.app._informer import Informer
from dra_operator.app._leader import LeaseElector
from dra_operator.app._plugin import Builder, Context, Plugin
from dra_operator.app._reflector import Reflector
from dra_operator.app._registry import BUILDERS
from dra_operator.app._settings import SCHEDULER, Settings
from dra_operator.app._upstream import Upstream
from dra_operator.cluster import Change
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
        yield_to: frozenset[str] = frozenset(),
    ) -> None:
        self.settings = settings
        self.api = api
        self.server = server
        self.caches = Caches(
            server.versions,
            consumable_capacity=server.features.consumable_capacity,
            policies=server.policies,
            pod_disruption_budgets=SCHEDULER in controllers,
            pod_groups=server.pod_groups,
            deterministic_claim_names=server.claim_naming is model.ClaimNaming.DETERMINISTIC,
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
            _log.info(LogEvent.HOOKS_LOADED, hooks=sorted(self.hooks.names))
        unknown = [name for name in controllers if name not in builders]
        for name in unknown:
            _log.warning(LogEvent.CONTROLLER_UNAVAILABLE, controller=name)
        self._builders = {name: builders[name] for name in controllers if name in builders}
        self.leading = asyncio.Event()
        self._events = kube.EventSender(api, names.OPERATOR_FIELD_MANAGER)
        self.coexistence = Coexistence(
            settings.scheduler_lease,
            self.metrics,
            self._events,
            controllers=self._builders,
            yield_to=yield_to,
            leading=self.leading,
        )
        self.informer = Informer(
            api,
            server,
            self.caches,
            self.metrics,
            namespaces=settings.namespaces,
            on_change=self._changed,
        )
        self._running: dict[str, tuple[Plugin, asyncio.Task[None]]] = {}
        self.plugins: list[Plugin] = []
        self.elector: LeaseElector | None = None
        self.probes: ProbeServer | None = None  # serving /metrics, /healthz, /readyz

    @property
    def controllers(self) -> list[str]:
        return list(self._builders)

    # -- the parts, as the rest of the app and the tests see them ---------------------------

    @property
    def reflectors(self) -> list[Reflector]:
        return self.informer.reflectors

    @property
    def upstream(self) -> Upstream:
        return self.coexistence.upstream

    def resource(self, kind: Kind) -> kube.Resource:
        return self.informer.resource(kind)

    def handle(self, kind: Kind, event_type: str | None, raw: Mapping[str, Any]) -> None:
        self.informer.handle(kind, event_type, raw)

    def set_upstream(self, upstream: Upstream) -> None:
        self.coexistence.set_upstream(upstream)

    def wanted(self) -> list[str]:
        return self.coexistence.wanted()

    def handover_recent(self) -> bool:
        return self.coexistence.handover_recent()

    # -- changes ------------------------------------------------------------------------------

    def _changed(self, kind: Kind, change: Change[Any], raw: Mapping[str, Any] | None) -> None:
        """A watched change (raw None: pruned): the coexistence checks, then the plugins."""
        if raw is not None:
            self.coexistence.observe(kind, change, raw, self._running)
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
            LogEvent.OBJECT_INVALID,
            kind=str(kind),
            namespace=metadata.get("namespace"),
            name=metadata.get("name"),
            error=str(exc),
        )
        if not self.leading.is_set():
            return  # one report per object: the leader's
        self._events.send(
            kube.event_target_of(raw),
            type=names.EVENT_TYPE_WARNING,
            reason="InvalidObject",
            message=f"dra-operator cannot read this object: {exc}",
        )

    # -- controllers --------------------------------------------------------------------------

    async def wait_synced(self) -> None:
        await self.informer.wait_synced(self.health)

    async def lead(self) -> None:
        """Run the wanted controllers until cancelled (leadership lost or shutdown), starting
        and stopping those that yield to kube-controller-manager as its Lease comes and goes."""
        context = Context(
            self.settings,
            self.server,
            self.caches,
            self.api,
            self._observer,
            self.metrics,
            self.hooks,
            self.coexistence.handover_recent,
        )
        changed = self.coexistence.changed
        try:
            async with asyncio.TaskGroup() as group:
                while True:
                    changed.clear()
                    self._start_and_stop(context, group)
                    if not self.leading.is_set():
                        self.leading.set()
                        self.health.set_role(Role.LEADER)
                        self.coexistence.term_started()
                    pause = self.coexistence.pause_left()
                    try:
                        async with asyncio.timeout(pause if pause > 0 else None):
                            await changed.wait()  # (not wait_for: gh-86296)
                    except TimeoutError:  # the pause after a foreign creator may be over
                        if self.coexistence.pause_left() <= 0:
                            self.coexistence.pause_over()
        finally:
            self.health.set_role(Role.STANDBY)
            self.leading.clear()
            self.coexistence.term_ended()
            for name in list(self._running):
                self._stop(name)

    def _start_and_stop(self, context: Context, group: asyncio.TaskGroup) -> None:
        """Make the running controllers the wanted ones, in start order."""
        wanted = self.coexistence.wanted()
        for name in [name for name in self._running if name not in wanted]:
            self._stop(name)
            _log.info(
                LogEvent.CONTROLLER_STOPPED, controller=name, reason="kube-controller-manager"
            )
        for name in wanted:
            if name in self._running:
                continue
            plugin = self._builders[name](context)
            self.plugins.append(plugin)
            plugin.resync()
            task = group.create_task(plugin.run(), name=f"controller-{plugin.name}")
            self._running[name] = (plugin, task)
            _log.info(LogEvent.CONTROLLER_STARTED, controller=name)

    def _stop(self, name: str) -> None:
        plugin, task = self._running.pop(name)
        self.plugins.remove(plugin)
        plugin.shut_down()
        task.cancel()

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
