"""The assembly: caches, controllers and leader election for one `dra-operator run`.

```
kopf event handler ─┬▶ Operator.handle(kind, event) ─▶ caches.apply ─▶ change
Reflector (pods,   ─┘
 claims)
                                 (leader only) └─▶ plugin.on_change(kind, change) ─▶ keys
LeaseElector.run(lead):  lead() = wait for synced caches → build plugins → resync → run them
UpstreamWatch.run(set_upstream): KCM's Lease held → its controllers stop; released → start
```

Every replica feeds its caches from the watches; only the Lease holder builds and runs the
controllers, and it builds them afresh each time it becomes leader (a shut-down queue stays
shut). Losing the Lease cancels `lead()`: the workers stop and the plugins are dropped, while
the caches stay warm for the next term.

Controllers in `yield_to` run only while kube-controller-manager does not hold its Lease
(`set_upstream`), so exactly one claims controller creates claims whatever the start order:
they stop the moment its Lease is seen held and start again when it is released or expires
(docs/coexistence.md). Running our scheduler beside a kube-scheduler without the routing
policy is reported as unsafe (log, metric, Event), since both would allocate the same devices.
"""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

from dra_operator import errors, hooks, kube, model, names
from dra_operator.app._caches import Caches, Kind
from dra_operator.app._discovery import ServerInfo
from dra_operator.app._foreign import allocated_pools, claim_creator, is_foreign_allocation
from dra_operator.app._leader import LeaseElector
from dra_operator.app._plugin import Builder, Context, Plugin
from dra_operator.app._reflector import Reflector
from dra_operator.app._registry import BUILDERS
from dra_operator.app._retry import until_answered
from dra_operator.app._settings import CLAIMS, SCHEDULER, Settings
from dra_operator.app._upstream import Upstream
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

UNSAFE_TWO_SCHEDULERS: Final = "kube-scheduler-without-routing"
EVENT_UNSAFE_CONFIGURATION: Final = "UnsafeConfiguration"
EVENT_FOREIGN_ALLOCATION: Final = "AllocatedByAnotherScheduler"
FOREIGN_CREATOR_PAUSE: Final = 60.0
"""Seconds the yielding controllers stay paused after another claims controller was last seen
creating a claim (kube-controller-manager whose Lease we do not know)."""
HANDOVER_RECHECK: Final = 30.0
"""Seconds after another claims controller was last seen at work during which ours asks the API
server for an existing claim before creating one: what that controller created last may not
have reached our watch yet. Outside that window the cache (with our own creations assumed into
it) is the whole picture, and a LIST per creation would only slow a large namespace down."""
UNSAFE_MESSAGE: Final = (
    "kube-scheduler and dra-operator both allocate devices and no admission policy sends pods "
    "with resource claims to one of them, so a device can be allocated twice. Install "
    "deploy/components/route-claims (or require-scheduler), see docs/coexistence.md."
)
REFLECTED: Final = (Kind.PODS, Kind.CLAIMS)
"""The busy kinds our own `Reflector` watches instead of kopf (docs/architecture.md "Cost per
pod at scale")."""
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
            _log.info("hooks.loaded", hooks=sorted(self.hooks.names))
        unknown = [name for name in controllers if name not in builders]
        for name in unknown:
            _log.warning("controller.unavailable", controller=name)
        self._builders = {name: builders[name] for name in controllers if name in builders}
        self._yield_to = yield_to
        self.upstream = Upstream()
        self.unsafe = False
        self._upstream_changed = asyncio.Event()
        self._running: dict[str, tuple[Plugin, asyncio.Task[None]]] = {}
        self._foreign_reported: set[str] = set()
        self._paused_until = float("-inf")  # loop time; see `_check_creator`
        self._other_creator_seen = float("-inf")  # loop time; see `handover_recent`
        self.plugins: list[Plugin] = []
        self.leading = asyncio.Event()
        self.elector: LeaseElector | None = None
        self.probes: ProbeServer | None = None  # serving /metrics, /healthz, /readyz
        self._invalid_events: list[asyncio.Task[Any]] = []
        self._listings: Counter[tuple[Kind, str | None]] = Counter()  # per watch: see `listed`
        self._relisting: set[Kind] = set()
        self._background: set[asyncio.Task[None]] = set()

    @property
    def controllers(self) -> list[str]:
        return list(self._builders)

    def wanted(self) -> list[str]:
        """The controllers to run now: ours, minus those KCM runs while it holds its Lease
        (or while another claims controller was recently seen creating claims)."""
        held = self.upstream.controller_manager or self._pause_left() > 0
        return [name for name in self._builders if not (held and name in self._yield_to)]

    def _pause_left(self) -> float:
        return self._paused_until - asyncio.get_running_loop().time()

    def handover_recent(self) -> bool:
        """Whether another claims controller was at work less than `HANDOVER_RECHECK` ago."""
        elapsed = asyncio.get_running_loop().time() - self._other_creator_seen
        return elapsed < HANDOVER_RECHECK

    # -- upstream components ------------------------------------------------------------------

    def set_upstream(self, upstream: Upstream) -> None:
        """What runs beside us changed: hand controllers over, say whether it is unsafe."""
        before, self.upstream = self.upstream, upstream
        if before.controller_manager or upstream.controller_manager:
            self._other_creator_seen = asyncio.get_running_loop().time()
        for component, running in (
            ("kube-controller-manager", upstream.controller_manager),
            ("kube-scheduler", upstream.scheduler),
            ("routing-policy", upstream.routing),
        ):
            self.metrics.upstream_seen(component, running=running)
        if before != upstream:
            _log.info(
                "upstream.changed",
                kube_controller_manager=upstream.controller_manager,
                kube_scheduler=upstream.scheduler,
                routing_policy=upstream.routing,
                controllers=self.wanted(),
            )
        unsafe = SCHEDULER in self._builders and upstream.scheduler and not upstream.routing
        self.metrics.unsafe_configuration(UNSAFE_TWO_SCHEDULERS, unsafe=unsafe)
        if unsafe and not self.unsafe:
            _log.warning(
                "coexistence.unsafe",
                reason=UNSAFE_TWO_SCHEDULERS,
                lease=self.settings.scheduler_lease,
                message=UNSAFE_MESSAGE,
            )
            if self.leading.is_set():
                self._report_unsafe()
        elif self.unsafe and not unsafe:
            _log.info("coexistence.safe", reason=UNSAFE_TWO_SCHEDULERS)
        self.unsafe = unsafe
        self._upstream_changed.set()

    def _report_unsafe(self) -> None:
        """A Warning Event on kube-scheduler's Lease (the leader's, one per term or change)."""
        namespace, _, name = self.settings.scheduler_lease.partition("/")
        regarding = {
            "apiVersion": kube.LEASES.api_version,
            "kind": "Lease",
            "namespace": namespace,
            "name": name,
        }
        self._post(regarding, reason=EVENT_UNSAFE_CONFIGURATION, message=UNSAFE_MESSAGE)

    def resource(self, kind: Kind) -> kube.Resource:
        if kind is Kind.PODS:
            return kube.PODS
        if kind is Kind.NODES:
            return kube.NODES
        if kind is Kind.NAMESPACES:
            return kube.NAMESPACES
        if kind is Kind.POLICIES:
            return kube.ALLOCATION_POLICIES
        if kind is Kind.PDBS:
            return kube.POD_DISRUPTION_BUDGETS
        return self.server.resource(kind)

    # -- watch events -------------------------------------------------------------------------

    def reflectors(self) -> list[Reflector]:
        """A `Reflector` per busy kind and scope (each namespace served, or all of them)."""
        found = []
        for kind in REFLECTED:
            resource = self.resource(kind)
            scopes: tuple[str | None, ...] = (None,)
            if resource.namespaced and self.settings.namespaces:
                scopes = self.settings.namespaces
            for namespace in scopes:
                reflector = Reflector(
                    self.api,
                    resource,
                    namespace=namespace,
                    listed=functools.partial(self.reflected, kind, namespace),
                    event=functools.partial(self.handle, kind),
                )
                found.append(reflector)
        return found

    def reflected(
        self,
        kind: Kind,
        namespace: str | None,
        items: list[Mapping[str, Any]],
        version: str,
        relisted: bool,
    ) -> None:
        """A Reflector's LIST: every object into the caches, then what it no longer holds
        pruned (objects deleted while the watch was down)."""
        if relisted:
            _log.info(LogEvent.WATCH_RELISTED, resource=str(kind), namespace=namespace)
            self.metrics.watch_relisted(str(kind))
        for raw in items:
            self._apply(kind, None, raw)
        snapshot = version_number(version)
        if snapshot is not None:
            self._pruned(kind, self.caches.prune(kind, items, snapshot, namespace=namespace))

    def handle(self, kind: Kind, event_type: str | None, raw: Mapping[str, Any]) -> None:
        """One watch event: into the caches, then to the running controllers as keys."""
        self._apply(kind, event_type, raw)

    def _apply(self, kind: Kind, event_type: str | None, raw: Mapping[str, Any]) -> None:
        change = self.caches.apply(kind, event_type, raw)
        if change is None:
            return
        # Who wrote it is in the event's managedFields, which the store does not keep.
        if kind is Kind.CLAIMS and SCHEDULER in self._running:
            self._check_allocation(change, raw)
        if kind is Kind.CLAIMS and CLAIMS in self._yield_to and self.leading.is_set():
            self._check_creator(change, raw)
        for plugin in self.plugins:
            plugin.on_change(kind, change)

    def _check_creator(self, change: Change[Any], raw: Mapping[str, Any]) -> None:
        """A claim generated for a pod by another field manager: another claims controller is
        at work (kube-controller-manager, perhaps under a Lease name we do not know or without
        leader election). Pause ours, as for its Lease, until none was seen for
        `FOREIGN_CREATOR_PAUSE` seconds (so after KCM's Lease expires, ours may start up to
        that much later: late rather than twice)."""
        if change.old is not None or change.new is None:
            return
        creator = claim_creator(raw)
        if creator is None or creator == names.OPERATOR_FIELD_MANAGER:
            return
        paused = self._pause_left() > 0 or self.upstream.controller_manager
        now = asyncio.get_running_loop().time()
        self._paused_until = now + FOREIGN_CREATOR_PAUSE
        self._other_creator_seen = now
        if paused:
            return  # already yielding: nothing to say
        _log.warning(
            "claims.foreign_creator",
            claim=str(change.key),
            manager=creator,
            pause_seconds=FOREIGN_CREATOR_PAUSE,
        )
        self.metrics.upstream_seen("foreign-claims-creator", running=True)
        self._upstream_changed.set()

    def _check_allocation(self, change: Change[Any], raw: Mapping[str, Any]) -> None:
        """Say so when another scheduler just allocated a claim (see `_foreign`): the log and
        metric each time, an Event on the claim once per field manager and term."""
        if change.new is None:
            return
        manager = is_foreign_allocation(change.old.raw if change.old else None, raw)
        if manager is None:
            return
        pools = allocated_pools(raw)
        _log.warning("allocation.foreign", claim=str(change.key), manager=manager, pools=pools)
        self.metrics.foreign_allocation(manager)
        if manager in self._foreign_reported:
            return
        self._foreign_reported.add(manager)
        metadata = raw.get("metadata") or {}
        regarding = {
            "apiVersion": raw.get("apiVersion"),
            "kind": "ResourceClaim",
            "namespace": metadata.get("namespace"),
            "name": metadata.get("name"),
            "uid": metadata.get("uid"),
        }
        message = (
            f"{manager} allocated this claim (pools {', '.join(pools)}) while dra-operator "
            "also allocates devices: a device can be allocated twice. Send pods with resource "
            "claims to one scheduler (deploy/components/route-claims), see docs/coexistence.md."
        )
        self._post(regarding, reason=EVENT_FOREIGN_ALLOCATION, message=message)

    def listed(self, kind: Kind, namespace: str | None = None) -> None:
        """kopf delivered a whole LIST of `kind` in `namespace` (None: cluster-wide; one watch
        per namespace served, `_listings`). Every one after that watch's first is a relist
        (410 Gone, a listing that broke off), even one that returned nothing: the cache is
        then pruned of what the server no longer holds, as client-go's `Replace` does."""
        self._listings[kind, namespace] += 1
        if self._listings[kind, namespace] > 1:
            self._relisted(kind)

    def _relisted(self, kind: Kind) -> None:
        if kind in self._relisting:
            return  # its prune is still to come, and will see this listing's objects
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
        self._pruned(kind, self.caches.prune(kind, items, snapshot))

    def _pruned(self, kind: Kind, changes: list[Change[Any]]) -> None:
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
        self._post(
            regarding,
            reason="InvalidObject",
            message=f"dra-operator cannot read this object: {exc}",
        )

    def _post(self, regarding: Mapping[str, Any], *, reason: str, message: str) -> None:
        """A Warning Event, posted in the background (best effort, see kube.post_event)."""
        post = kube.post_event(
            self.api,
            regarding,
            type=names.EVENT_TYPE_WARNING,
            reason=reason,
            message=message,
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
            self.handover_recent,
        )
        try:
            async with asyncio.TaskGroup() as group:
                while True:
                    self._upstream_changed.clear()
                    self._start_and_stop(context, group)
                    if not self.leading.is_set():
                        self.leading.set()
                        self.health.set_role(Role.LEADER)
                        if self.unsafe:
                            self._report_unsafe()
                    pause = self._pause_left()
                    try:
                        async with asyncio.timeout(pause if pause > 0 else None):
                            await self._upstream_changed.wait()  # (not wait_for: gh-86296)
                    except TimeoutError:  # the pause after a foreign creator may be over
                        if self._pause_left() <= 0:
                            self.metrics.upstream_seen("foreign-claims-creator", running=False)
        finally:
            self.health.set_role(Role.STANDBY)
            self.leading.clear()
            self._foreign_reported.clear()
            for name in list(self._running):
                self._stop(name)

    def _start_and_stop(self, context: Context, group: asyncio.TaskGroup) -> None:
        """Make the running controllers the wanted ones, in start order."""
        wanted = self.wanted()
        for name in [name for name in self._running if name not in wanted]:
            self._stop(name)
            _log.info("controller.stopped", controller=name, reason="kube-controller-manager")
        for name in wanted:
            if name in self._running:
                continue
            plugin = self._builders[name](context)
            self.plugins.append(plugin)
            plugin.resync()
            task = group.create_task(plugin.run(), name=f"controller-{plugin.name}")
            self._running[name] = (plugin, task)
            _log.info("controller.started", controller=name)

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
