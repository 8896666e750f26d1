"""What runs beside us, and which of our controllers may run because of it.

Controllers in `yield_to` run only while kube-controller-manager does not hold its Lease
(`set_upstream`) and no other claims controller was seen creating claims lately
(`observe`), so exactly one claims controller creates claims whatever the start order: they
stop the moment its Lease is seen held and start again when it is released or expires
(docs/coexistence.md). Running our scheduler beside a kube-scheduler without the routing
policy is reported as unsafe (log, metric, Event), since both would allocate the same devices;
so is a claim another scheduler allocated while ours runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from typing import Any, Final

from dra_operator import kube, names
from dra_operator.app._caches import Kind
from dra_operator.app._foreign import allocated_pools, claim_creator, is_foreign_allocation
from dra_operator.app._settings import CLAIMS, SCHEDULER
from dra_operator.app._upstream import Upstream
from dra_operator.cluster import Change
from dra_operator.observability import LogEvent, Metrics, get_logger

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
    "that need devices to one of them, so a device can be allocated twice. Install the "
    "routing policies (deploy/components/route-claims, require-scheduler): "
    "`kubectl apply --server-side -k deploy/` (Kubernetes 1.36+; deploy/release-1.34 or "
    "deploy/require-scheduler-only before), or `helm upgrade dra-operator "
    "deploy/helm/dra-operator --reuse-values --set routing.mode=auto`; see docs/coexistence.md."
)


class Coexistence:
    """The upstream components seen, the pause they impose, and the reports they call for.

    `changed` is set whenever the controllers to run may have changed; `leading` is the
    replica's leadership (Events and the foreign-creator pause are the leader's).
    """

    def __init__(
        self,
        scheduler_lease: str,
        metrics: Metrics,
        events: kube.EventSender,
        *,
        controllers: Collection[str],
        yield_to: frozenset[str],
        leading: asyncio.Event,
    ) -> None:
        self._scheduler_lease = scheduler_lease
        self._metrics = metrics
        self._events = events
        self._controllers = list(controllers)
        self._yield_to = yield_to
        self._leading = leading
        self.upstream = Upstream()
        self.unsafe = False
        self.changed = asyncio.Event()
        self._reported_managers: set[str] = set()
        self._paused_until = float("-inf")  # loop time; see `_check_creator`
        self._other_creator_seen = float("-inf")  # loop time; see `handover_recent`
        self._terms_ended = 0

    def wanted(self) -> list[str]:
        """The controllers to run now: ours, minus those KCM runs while it holds its Lease
        (or while another claims controller was recently seen creating claims)."""
        held = self.upstream.controller_manager or self.pause_left() > 0
        return [name for name in self._controllers if not (held and name in self._yield_to)]

    def pause_left(self) -> float:
        return self._paused_until - asyncio.get_running_loop().time()

    def handover_recent(self) -> bool:
        """Whether another claims controller was at work less than `HANDOVER_RECHECK` ago."""
        elapsed = asyncio.get_running_loop().time() - self._other_creator_seen
        return elapsed < HANDOVER_RECHECK

    def term_started(self) -> None:
        if self._terms_ended:
            # Our previous term counts as another claims controller: a creation it had in
            # flight when the Lease was lost may land after this term's first reconcile.
            self._other_creator_seen = asyncio.get_running_loop().time()
        if self.unsafe:
            self.report_unsafe()

    def term_ended(self) -> None:
        self._terms_ended += 1
        self._reported_managers.clear()

    def pause_over(self) -> None:
        self._metrics.upstream_seen("foreign-claims-creator", running=False)

    # -- the Leases --------------------------------------------------------------------------

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
            self._metrics.upstream_seen(component, running=running)
        if before != upstream:
            _log.info(
                LogEvent.UPSTREAM_CHANGED,
                kube_controller_manager=upstream.controller_manager,
                kube_scheduler=upstream.scheduler,
                routing_policy=upstream.routing,
                controllers=self.wanted(),
            )
        unsafe = SCHEDULER in self._controllers and upstream.scheduler and not upstream.routing
        self._metrics.unsafe_configuration(UNSAFE_TWO_SCHEDULERS, unsafe=unsafe)
        if unsafe and not self.unsafe:
            _log.warning(
                LogEvent.COEXISTENCE_UNSAFE,
                reason=UNSAFE_TWO_SCHEDULERS,
                lease=self._scheduler_lease,
                message=UNSAFE_MESSAGE,
            )
            if self._leading.is_set():
                self.report_unsafe()
        elif self.unsafe and not unsafe:
            _log.info(LogEvent.COEXISTENCE_SAFE, reason=UNSAFE_TWO_SCHEDULERS)
        self.unsafe = unsafe
        self.changed.set()

    def report_unsafe(self) -> None:
        """A Warning Event on kube-scheduler's Lease (the leader's, one per term or change)."""
        namespace, _, name = self._scheduler_lease.partition("/")
        lease = kube.event_target(kube.LEASES.api_version, "Lease", namespace=namespace, name=name)
        self._warn(lease, reason=EVENT_UNSAFE_CONFIGURATION, message=UNSAFE_MESSAGE)

    # -- the writes of others ----------------------------------------------------------------

    def observe(
        self, kind: Kind, change: Change[Any], raw: Mapping[str, Any], running: Collection[str]
    ) -> None:
        """A watched change: a claim another scheduler allocated or another claims controller
        created? (Who wrote it is in the event's managedFields, which the store does not
        keep.)"""
        if kind is not Kind.CLAIMS:
            return
        if SCHEDULER in running:
            self._check_allocation(change, raw)
        if CLAIMS in self._yield_to and self._leading.is_set():
            self._check_creator(change, raw)

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
        paused = self.pause_left() > 0 or self.upstream.controller_manager
        now = asyncio.get_running_loop().time()
        self._paused_until = now + FOREIGN_CREATOR_PAUSE
        self._other_creator_seen = now
        if paused:
            return  # already yielding: nothing to say
        _log.warning(
            LogEvent.CLAIMS_FOREIGN_CREATOR,
            claim=str(change.key),
            manager=creator,
            pause_seconds=FOREIGN_CREATOR_PAUSE,
        )
        self._metrics.upstream_seen("foreign-claims-creator", running=True)
        self.changed.set()

    def _check_allocation(self, change: Change[Any], raw: Mapping[str, Any]) -> None:
        """Say so when another scheduler just allocated a claim (see `_foreign`): the log and
        metric each time, an Event on the claim once per field manager and term."""
        if change.new is None:
            return
        manager = is_foreign_allocation(change.old.raw if change.old else None, raw)
        if manager is None:
            return
        pools = allocated_pools(raw)
        _log.warning(
            LogEvent.ALLOCATION_FOREIGN, claim=str(change.key), manager=manager, pools=pools
        )
        self._metrics.foreign_allocation(manager)
        if manager in self._reported_managers:
            return
        self._reported_managers.add(manager)
        message = (
            f"{manager} allocated this claim (pools {', '.join(pools)}) while dra-operator "
            "also allocates devices: a device can be allocated twice. Send pods with resource "
            "claims to one scheduler (deploy/components/route-claims), see docs/coexistence.md."
        )
        claim = kube.event_target_of(raw, kind="ResourceClaim")
        self._warn(claim, reason=EVENT_FOREIGN_ALLOCATION, message=message)

    def _warn(self, regarding: Mapping[str, Any], *, reason: str, message: str) -> None:
        self._events.send(regarding, type=names.EVENT_TYPE_WARNING, reason=reason, message=message)
