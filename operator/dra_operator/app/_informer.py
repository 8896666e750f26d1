"""The one informer path: a `Reflector` per kind and scope into the caches, and every change
out to whoever listens (docs/architecture.md "One informer path").

```
Reflector(kind, scope) ─LIST─▶ Informer.reflected ─▶ caches.apply each, then caches.prune
                       ─WATCH▶ Informer.handle    ─▶ caches.apply
                                                      └─▶ on_change(kind, change, raw)
```

The same rule for every kind: a LIST's objects go to the stores in one call, then whatever the
stores hold in that scope that the LIST lacks, last seen at an older resourceVersion, is
applied as a deletion (client-go's Replace), on the first LIST and every relist alike. The
caches are synced when every reflector's first LIST is in them (client-go's
WaitForCacheSync).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Final

from dra_operator import kube
from dra_operator.app._caches import Caches, Kind
from dra_operator.app._discovery import ServerInfo
from dra_operator.app._reflector import Reflector
from dra_operator.cluster import Change, version_number
from dra_operator.observability import Health, LogEvent, Metrics, get_logger

_log = get_logger(__name__)

CORE_RESOURCES: Final[Mapping[Kind, kube.Resource]] = {
    Kind.PODS: kube.PODS,
    Kind.NODES: kube.NODES,
    Kind.NAMESPACES: kube.NAMESPACES,
    Kind.POLICIES: kube.ALLOCATION_POLICIES,
    Kind.PERSISTENT_VOLUMES: kube.PERSISTENT_VOLUMES,
    Kind.PERSISTENT_VOLUME_CLAIMS: kube.PERSISTENT_VOLUME_CLAIMS,
    Kind.STORAGE_CLASSES: kube.STORAGE_CLASSES,
    Kind.CSI_NODES: kube.CSI_NODES,
    Kind.CSI_DRIVERS: kube.CSI_DRIVERS,
    Kind.PDBS: kube.POD_DISRUPTION_BUDGETS,
}
"""The kinds whose resource does not depend on the server's DRA versions (those come from
discovery, `ServerInfo.resource`)."""

OnChange = Callable[[Kind, Change[Any], Mapping[str, Any] | None], None]
"""Told of every change the watches make: the raw object it came from, None for a prune."""


class Informer:
    """The reflectors of every kind the caches hold, in the namespaces `namespaces` names
    (all when empty)."""

    def __init__(
        self,
        api: kube.Client,
        server: ServerInfo,
        caches: Caches,
        metrics: Metrics,
        *,
        namespaces: tuple[str, ...],
        on_change: OnChange,
    ) -> None:
        self.server = server
        self.caches = caches
        self._metrics = metrics
        self._on_change = on_change
        self.reflectors = [
            Reflector(
                api,
                resource,
                namespace=namespace,
                listed=functools.partial(self.reflected, kind, namespace),
                event=functools.partial(self.handle, kind),
            )
            for kind in caches.kinds
            for resource in (self.resource(kind),)
            for namespace in (namespaces if resource.namespaced and namespaces else (None,))
        ]

    def resource(self, kind: Kind) -> kube.Resource:
        if kind is Kind.POD_GROUPS and self.server.pod_group_resource is not None:
            return self.server.pod_group_resource
        return CORE_RESOURCES.get(kind) or self.server.resource(kind)

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
            self._metrics.watch_relisted(str(kind))
        for raw in items:
            self.handle(kind, None, raw)
        snapshot = version_number(version)
        if snapshot is None:
            return  # resourceVersions we cannot order: nothing is pruned
        pruned = self.caches.prune(kind, items, snapshot, namespace=namespace)
        if pruned:
            deleted = sorted(str(change.key) for change in pruned)
            _log.info(LogEvent.CACHE_PRUNED, resource=str(kind), deleted=deleted)
        for change in pruned:
            self._on_change(kind, change, None)

    def handle(self, kind: Kind, event_type: str | None, raw: Mapping[str, Any]) -> None:
        """One watch event: into the caches, then to `on_change`."""
        change = self.caches.apply(kind, event_type, raw)
        if change is not None:
            self._on_change(kind, change, raw)

    async def wait_synced(self, health: Health) -> None:
        """client-go's WaitForCacheSync: every reflector's first LIST is in the caches."""
        for reflector in self.reflectors:
            await reflector.synced.wait()
        for kind in self.caches.kinds:
            health.set_cache_synced(str(kind))
        sizes = {str(kind): len(store) for kind, store in self.caches.stores.items()}
        _log.info(LogEvent.CACHE_SYNCED, **sizes)
