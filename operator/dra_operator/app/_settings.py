"""What `dra-operator run` was asked to do, as one immutable value.

The CLI builds it from flags; the assembly (`Operator`) reads nothing else. Defaults match the
flags' defaults, so tests can build a `Settings()` and change only what they exercise.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from dra_operator import names
from dra_operator.controllers.scheduler.framework import Profile

CLAIMS: Final = "claims"
SCHEDULER: Final = "scheduler"
EVICTION: Final = "eviction"
POOL_STATUS: Final = "poolstatus"
CONTROLLER_NAMES: Final = (CLAIMS, SCHEDULER, EVICTION, POOL_STATUS)
"""Every controller `--controllers` may name, in start order."""

UPSTREAM_CONTROLLERS: Final = frozenset({CLAIMS, EVICTION, POOL_STATUS})
"""Controllers kube-controller-manager runs too: left to it while it holds its Lease."""

KCM_LEASE_NAMESPACE: Final = "kube-system"
KCM_LEASE_NAME: Final = "kube-controller-manager"
KCM_LEASE: Final = f"{KCM_LEASE_NAMESPACE}/{KCM_LEASE_NAME}"
SCHEDULER_LEASE: Final = "kube-system/kube-scheduler"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LeaderElection:
    """Lease-based leader election, with client-go's default timings (seconds)."""

    enabled: bool = True
    namespace: str = "kube-system"
    name: str = "dra-operator"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """One operator's configuration.

    `controllers` None means "all of them, except those kube-controller-manager runs while it
    holds its Lease `controller_manager_lease`" (watched every `upstream_period` seconds,
    together with kube-scheduler's `scheduler_lease`); a set means exactly those.
    `namespaces` empty means the whole cluster. `hooks` are `--hook module:attr` specs, loaded
    after the entry points of group `dra_operator.hooks` (docs/hooks.md). `scheduler_profiles`
    are the profiles of a `--config` KubeSchedulerConfiguration (empty: the default profile);
    the scheduler places the pods naming any of them or any of `scheduler_names`.
    """

    controllers: frozenset[str] | None = None
    scheduler_names: tuple[str, ...] = (names.DEFAULT_SCHEDULER_NAME,)
    namespaces: tuple[str, ...] = ()
    workers: int = 50
    identity: str = "dra-operator"
    leader_election: LeaderElection = dataclasses.field(default_factory=LeaderElection)
    metrics_address: str | None = None
    health_address: str | None = None
    hooks: tuple[str, ...] = ()
    controller_manager_lease: str = KCM_LEASE
    scheduler_lease: str = SCHEDULER_LEASE
    upstream_period: float = 1.0
    scheduler_profiles: tuple[Profile, ...] = ()

    @property
    def placed_scheduler_names(self) -> frozenset[str]:
        """Every `spec.schedulerName` the scheduler places pods for."""
        profiles = (p.scheduler_name for p in self.scheduler_profiles)
        return frozenset((*self.scheduler_names, *profiles))


def choose_controllers(requested: frozenset[str] | None) -> list[str]:
    """The controllers this run may run, in start order: those named, else all of them."""
    return [name for name in CONTROLLER_NAMES if requested is None or name in requested]


def yielding_controllers(requested: frozenset[str] | None) -> frozenset[str]:
    """Those that pause while kube-controller-manager holds its Lease (docs/coexistence.md):
    claims and eviction, unless `--controllers` named the controllers explicitly."""
    return UPSTREAM_CONTROLLERS if requested is None else frozenset()
