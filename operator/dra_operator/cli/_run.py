"""`dra-operator run`: the operator itself (reflectors, our controllers, leader election).

Flags mirror kube-scheduler's and kube-controller-manager's where those have one
(`--leader-elect`, `--leader-elect-lease-duration`, ...). Without `--controllers`, the claims
and eviction controllers are left to kube-controller-manager for as long as it holds its
leader Lease (watched continuously: docs/coexistence.md).
"""

from __future__ import annotations

import asyncio
import signal
import socket
import uuid

import click

from dra_operator import app, errors, hooks, kube, names
from dra_operator.cli._cluster_options import Target, cluster_options
from dra_operator.cli._logging import log_options
from dra_operator.controllers.scheduler import REGISTRY, check_configured, default_framework
from dra_operator.controllers.scheduler.framework import Profile
from dra_operator.controllers.scheduler.plugins import PluginArgsError, scheduler_config
from dra_operator.observability import parse_bind_address

__all__ = ["command"]


def _identity() -> str:
    """client-go's default holder identity: the host name plus a unique suffix."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def _controllers(value: str | None) -> frozenset[str] | None:
    if value is None:
        return None
    chosen = frozenset(part.strip() for part in value.split(",") if part.strip())
    unknown = sorted(chosen - set(app.CONTROLLER_NAMES))
    if unknown:
        known = ", ".join(app.CONTROLLER_NAMES)
        raise click.BadParameter(f"unknown controller {', '.join(unknown)} (known: {known})")
    return chosen


def _lease(value: str) -> str:
    namespace, _, name = value.partition("/")
    if not namespace or not name or "/" in name:
        raise click.BadParameter(f"{value!r}: expected namespace/name")
    return value


def _profiles(path: str | None) -> tuple[Profile, ...]:
    """The file's profiles, each built once here so that a plugin's bad args stop us now."""
    if path is None:
        return ()
    try:
        profiles = scheduler_config.load(path, REGISTRY)
        for profile in profiles:
            check_configured(profile)
            default_framework(profile=profile)
    except (scheduler_config.SchedulerConfigError, PluginArgsError, ValueError) as exc:
        raise click.BadParameter(str(exc), param_hint="--config") from exc
    return profiles


@click.command("run")
@log_options
@cluster_options
@click.option(
    "--controllers",
    default=None,
    help="Comma-separated: claims,scheduler,eviction,poolstatus [default: all; claims, "
    "eviction and poolstatus are left to kube-controller-manager when it runs].",
)
@click.option(
    "--scheduler-name",
    "scheduler_names",
    multiple=True,
    default=(names.DEFAULT_SCHEDULER_NAME,),
    show_default=True,
    help="A spec.schedulerName to place pods for (repeatable).",
)
@click.option(
    "--namespace",
    "namespaces",
    multiple=True,
    help="Watch only this namespace (repeatable) [default: all namespaces].",
)
@click.option("--workers", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--leader-elect/--no-leader-elect", default=True, show_default=True)
@click.option(
    "--leader-election-namespace",
    envvar="POD_NAMESPACE",
    default="kube-system",
    show_default=True,
    help="Namespace of the Lease [env POD_NAMESPACE, as deploy/ sets it].",
)
@click.option("--lease-name", default="dra-operator", show_default=True)
@click.option("--leader-elect-lease-duration", type=float, default=15.0, show_default=True)
@click.option("--leader-elect-renew-deadline", type=float, default=10.0, show_default=True)
@click.option("--leader-elect-retry-period", type=float, default=2.0, show_default=True)
@click.option(
    "--identity",
    envvar="POD_NAME",
    default=None,
    help="Lease holder identity [env POD_NAME, as deploy/ sets it; else <host>_<uuid>].",
)
@click.option(
    "--metrics-bind-address",
    default=None,
    help="host:port or :port serving /metrics (and the probes when no health address is "
    "given); 0 or unset: off.",
)
@click.option(
    "--health-bind-address",
    default=None,
    help="host:port or :port serving /healthz and /readyz; unset: next to the metrics.",
)
@click.option(
    "--controller-manager-lease",
    default=app.KCM_LEASE,
    show_default=True,
    callback=lambda _ctx, _param, value: _lease(value),
    help="namespace/name of kube-controller-manager's leader Lease (its "
    "--leader-elect-resource-namespace/-name): while it is held, claims and eviction are left "
    "to it.",
)
@click.option(
    "--scheduler-lease",
    default=app.SCHEDULER_LEASE,
    show_default=True,
    callback=lambda _ctx, _param, value: _lease(value),
    help="namespace/name of kube-scheduler's leader Lease: while it is held and no routing "
    "policy is installed, the operator reports an unsafe configuration.",
)
@click.option(
    "--hook",
    "hook_specs",
    multiple=True,
    metavar="MODULE:ATTR",
    help="Load this hook (repeatable; docs/hooks.md), after the entry points of group "
    "dra_operator.hooks.",
)
@click.option(
    "--config",
    "scheduler_config",
    type=click.Path(dir_okay=False),
    default=None,
    help="A KubeSchedulerConfiguration file (kube-scheduler's --config; the subset of "
    "docs/scheduler.md): its profiles replace the default one, and their schedulerNames are "
    "placed too.",
)
def command(
    target: Target,
    controllers: str | None,
    scheduler_names: tuple[str, ...],
    namespaces: tuple[str, ...],
    workers: int,
    leader_elect: bool,
    leader_election_namespace: str,
    lease_name: str,
    leader_elect_lease_duration: float,
    leader_elect_renew_deadline: float,
    leader_elect_retry_period: float,
    identity: str | None,
    metrics_bind_address: str | None,
    health_bind_address: str | None,
    controller_manager_lease: str,
    scheduler_lease: str,
    hook_specs: tuple[str, ...],
    scheduler_config: str | None,
) -> None:
    """Run the DRA operator until SIGTERM or SIGINT."""
    if leader_elect_renew_deadline >= leader_elect_lease_duration:
        raise click.BadParameter(
            "must be shorter than the lease duration", param_hint="--leader-elect-renew-deadline"
        )
    settings = app.Settings(
        controllers=_controllers(controllers),
        scheduler_names=scheduler_names,
        namespaces=namespaces,
        workers=workers,
        identity=identity or _identity(),
        leader_election=app.LeaderElection(
            enabled=leader_elect,
            namespace=leader_election_namespace,
            name=lease_name,
            lease_duration=leader_elect_lease_duration,
            renew_deadline=leader_elect_renew_deadline,
            retry_period=leader_elect_retry_period,
        ),
        metrics_address=metrics_bind_address,
        health_address=health_bind_address,
        hooks=hook_specs,
        controller_manager_lease=controller_manager_lease,
        scheduler_lease=scheduler_lease,
        scheduler_profiles=_profiles(scheduler_config),
    )
    for flag, value in (
        ("--metrics-bind-address", metrics_bind_address),
        ("--health-bind-address", health_bind_address),
    ):
        try:
            parse_bind_address(value or "0")
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint=flag) from exc
    try:
        hooks.load_hooks(hook_specs)  # a typo stops us here, before connecting
        config = target.config()
        asyncio.run(_main(settings, config))
    except errors.DRAOperatorError as exc:
        raise click.ClickException(str(exc)) from exc


async def _main(settings: app.Settings, config: kube.ClusterConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await app.serve(settings, config, stop=stop)
