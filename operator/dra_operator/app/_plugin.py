"""The shape every controller takes inside the operator, and what it is built from.

The assembly knows controllers only through `Plugin`: it forwards each cache change to every
running plugin (`on_change`, which maps it to keys), asks a new leader's plugins to queue
everything the caches hold (`resync`, like an informer's initial list), runs them while leading
and shuts them down when leadership ends. Plugins are built afresh for every leadership term,
because a shut-down work queue stays shut.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol

from dra_operator import kube
from dra_operator.app._caches import Caches, Kind
from dra_operator.app._discovery import ServerInfo
from dra_operator.app._settings import Settings
from dra_operator.cluster import Change
from dra_operator.controllers import Observer
from dra_operator.hooks import Guard, HookSet
from dra_operator.observability import Metrics


class Plugin(Protocol):
    """One controller as the assembly runs it."""

    name: str

    def on_change(self, kind: Kind, change: Change[Any]) -> None:
        """Map one cache change to work keys and queue them; must not block or raise."""
        ...

    def resync(self) -> None:
        """Queue whatever the caches hold that may need work (a new leader starts here)."""
        ...

    async def run(self) -> None:
        """Work until `shut_down` (or cancellation)."""
        ...

    def shut_down(self) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Context:
    """What a plugin builder gets: the caches, the API and the operator's settings.

    `observe(controller_name)` is the reconcile-outcome hook for that controller's queue
    (`controllers.Controller(observe=...)`): it logs errors once and counts outcomes.
    `metrics` is the operator's registry, for the controllers' own metrics; `hooks` the hooks
    the operator loaded at start-up (their Guard counts into `metrics`). `handover_recent()`
    says whether another claims controller was at work a moment ago (see `Operator`).
    """

    settings: Settings
    server: ServerInfo
    caches: Caches
    api: kube.Client
    observe: Callable[[str], Observer[Any]]
    metrics: Metrics = dataclasses.field(default_factory=Metrics)
    hooks: HookSet = dataclasses.field(default_factory=lambda: HookSet((), Guard()))
    handover_recent: Callable[[], bool] = lambda: True


Builder = Callable[[Context], Plugin]
