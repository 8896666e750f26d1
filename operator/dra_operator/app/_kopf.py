"""kopf as the process frame: login and the operator beside our reflectors, through its public API.

Every kind reaches the caches through our `Reflector`s (docs/architecture.md "One informer
path"): kopf registers no resource handler, so it neither watches nor writes. It is kept,
through `kopf.spawn_tasks` and its public settings, as the frame that runs beside them: its
tasks start with the operator and stop it when they end (SIGINT/SIGTERM, which kopf handles
while it runs), and it logs in through a login handler with the same `kube.ClusterConfig` our
client uses (kopf asks again after a 401, should any of its own requests get one). It runs
standalone (no peering objects: leader election is our Lease), with posting of handler logs
as Events off and the CRD/namespace scanning we have no RBAC for disabled.

`serve` is the whole operator: discovery, the choice of controllers, the reflectors, kopf and
the operator's leader election / controllers, side by side until `stop` is set. The CEL parser
is built before the watches start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Iterable
from typing import Any

import kopf

from dra_operator import cel, kube
from dra_operator.app._discovery import discover
from dra_operator.app._operator import Operator
from dra_operator.app._retry import until_answered
from dra_operator.app._settings import Settings, choose_controllers, yielding_controllers
from dra_operator.app._upstream import LeaseName, UpstreamWatch
from dra_operator.observability import (
    LogEvent,
    ProbeServer,
    get_logger,
    parse_bind_address,
    watch_loop_stalls,
)

_log = get_logger(__name__)


class _NoDiffBase(kopf.DiffBaseStorage):
    """No essence: kopf diffs each event against its last handled state only for change
    handlers and daemons, yet by default it deep-copies every object it watches to build that
    essence (about 8 % of the CPU of a watch through kopf under load; `bench/watch_cost.py`
    watches through kopf with these settings)."""

    def build(
        self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None
    ) -> kopf.BodyEssence:
        return kopf.BodyEssence()

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: kopf.BodyEssence) -> None:
        pass  # never called: only change handlers store their essence


def kopf_settings() -> kopf.OperatorSettings:
    """kopf configured never to write (see the module docstring)."""
    settings = kopf.OperatorSettings()
    settings.persistence.diffbase_storage = _NoDiffBase()
    settings.posting.enabled = False
    settings.scanning.disabled = True
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.watching.connect_timeout = 30
    settings.networking.request_timeout = 30
    return settings


async def connection_info(config: kube.ClusterConfig) -> kopf.ConnectionInfo:
    """kopf's credentials from ours: same server, CA, client certificate or token.

    kopf calls its login handler again after a 401, so an expired exec token is renewed."""
    scheme, _, token = (await config.authorization() or "").partition(" ")
    return kopf.ConnectionInfo(
        server=config.server,
        ca_data=config.ca_pem,
        insecure=config.insecure_skip_tls_verify or None,
        scheme=scheme or None,
        token=token or None,
        certificate_data=config.client_cert_pem,
        private_key_data=config.client_key_pem,
    )


def kopf_registry(config: kube.ClusterConfig) -> kopf.OperatorRegistry:
    """A private registry (several operators may share a process in tests): the login
    handler alone."""
    registry = kopf.OperatorRegistry()

    async def login(**_: Any) -> kopf.ConnectionInfo:
        return await connection_info(config)

    kopf.on.login(registry=registry)(login)
    return registry


async def build_operator(
    settings: Settings, api: kube.Client, upstream: UpstreamWatch | None = None
) -> Operator:
    """Discover the server, choose the controllers and look once at what runs beside us.

    Without `--controllers`, the claims and eviction controllers yield to
    kube-controller-manager for as long as it holds its Lease (`watch_upstream` keeps
    looking); with it, exactly the named controllers run.
    """
    server = await discover(api)
    controllers = choose_controllers(settings.controllers)
    yield_to = yielding_controllers(settings.controllers)
    operator = Operator(settings, api, server, controllers, yield_to=yield_to)
    upstream = upstream or upstream_watch(settings, api)
    operator.set_upstream(await upstream.poll())
    _log.info(
        LogEvent.OPERATOR_STARTING,
        server=server.git_version,
        versions=dict(server.versions),
        controllers=operator.wanted(),
        kube_controller_manager=operator.upstream.controller_manager,
        kube_scheduler=operator.upstream.scheduler,
        routing_policy=operator.upstream.routing,
        identity=settings.identity,
    )
    return operator


def upstream_watch(settings: Settings, api: kube.Client) -> UpstreamWatch:
    """The watch over the Leases `settings` names for kube-controller-manager and the
    scheduler (`--upstream-lease`)."""

    def lease(text: str) -> LeaseName:
        namespace, _, name = text.partition("/")
        return LeaseName(namespace, name)

    return UpstreamWatch(
        api,
        controller_manager=lease(settings.controller_manager_lease),
        scheduler=lease(settings.scheduler_lease),
        period=settings.upstream_period,
    )


async def serve(
    settings: Settings,
    config: kube.ClusterConfig,
    *,
    stop: asyncio.Event,
    started: Callable[[Operator], None] | None = None,
) -> None:
    """Run the operator until `stop` is set: kopf's watches plus the leader's controllers."""
    # The CEL parser takes about a second of CPU to build: a thread builds it while discovery
    # waits on the API server, so that the first decisions after the caches sync do not.
    parser = asyncio.create_task(asyncio.to_thread(cel.warm_up), name="cel-parser")
    async with kube.Client(config, user_agent="dra-operator") as api:
        upstream = upstream_watch(settings, api)
        try:
            operator = await until_answered(
                lambda: build_operator(settings, api, upstream), "discovery"
            )
        finally:
            await parser
        if started is not None:
            started(operator)
        registry = kopf_registry(config)
        async with contextlib.AsyncExitStack() as stack:
            probes = probe_server(settings, operator)
            if probes is not None:
                operator.probes = await stack.enter_async_context(probes)
            await _watch_and_control(operator, registry, settings, stop, upstream)
        _log.info(LogEvent.OPERATOR_STOPPED, identity=settings.identity)


def probe_server(settings: Settings, operator: Operator) -> ProbeServer | None:
    """/metrics on --metrics-bind-address, the probes on --health-bind-address (next to the
    metrics when only that is given); None when neither is."""
    metrics = parse_bind_address(settings.metrics_address or "0")
    health = parse_bind_address(settings.health_address or "0")
    if metrics is None and health is None:
        return None
    return ProbeServer(
        operator.metrics, operator.health, metrics_address=metrics, health_address=health
    )


async def _watch_and_control(
    operator: Operator,
    registry: kopf.OperatorRegistry,
    settings: Settings,
    stop: asyncio.Event,
    upstream: UpstreamWatch,
) -> None:
    """kopf, our reflectors, the operator and the upstream watch side by side, until `stop`
    or any of the first three ends."""
    kopf_stop = asyncio.Event()
    logging.getLogger("kopf").setLevel(logging.WARNING)
    # spawn_tasks, not kopf.operator: the latter cancels every task of the loop created
    # after it started (its own sub-tasks, it assumes), ours and a test's included.
    kopf_tasks = await kopf.spawn_tasks(
        registry=registry,
        settings=kopf_settings(),
        standalone=True,
        clusterwide=not settings.namespaces,
        namespaces=settings.namespaces,
        stop_flag=kopf_stop,
        # Without it kopf asks getpass for the user name, which fails for the image's user
        # (65532 has no passwd entry: "getpwuid(): uid not found").
        # kopf types this as its `Identity` (a NewType of str it does not export).
        identity=settings.identity,  # type: ignore[arg-type]
    )
    reflecting = [
        asyncio.create_task(reflector.run(), name=f"reflector-{reflector.scope}")
        for reflector in operator.reflectors
    ]
    watching = [*kopf_tasks, *reflecting]
    controlling = asyncio.create_task(operator.run(), name="operator")
    looking = asyncio.create_task(upstream.run(operator.set_upstream), name="upstream")
    stopping = asyncio.create_task(stop.wait(), name="stop")
    stalls = asyncio.create_task(watch_loop_stalls(), name="loop-stalls")
    try:
        done, _ = await asyncio.wait(
            {*watching, controlling, looking, stopping}, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        controlling.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await controlling  # releases the Lease on the way out
        kopf_stop.set()
        for task in (*watching, looking, stopping, stalls):
            task.cancel()
        await asyncio.gather(*watching, looking, stopping, stalls, return_exceptions=True)
        _forget_signal_handlers()
    for task in (controlling, looking, *reflecting):
        if task in done and not task.cancelled():
            task.result()  # surface why it stopped on its own


def _forget_signal_handlers() -> None:
    """kopf installs SIGINT/SIGTERM handlers on the loop; drop them when it is done."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, RuntimeError):
            loop.remove_signal_handler(signum)
