"""The extended-resource names the routing policies need, and pods that escaped them.

The admission policies of deploy/components send every new pod that needs a device to our
scheduler. A pod asking for a DeviceClass's `spec.extendedResourceName` (KEP-5004) needs one
too, but a policy cannot list DeviceClasses: it reads the names from a ConfigMap, its
parameters (`paramKind`). While our scheduler runs on the leader, this controller keeps that
ConfigMap's `data.names` equal to the mapped names (sorted, separated by spaces). Which
ConfigMap is what the routing bindings name in their `paramRef`, so a chart installed in
another namespace needs no flag; no binding, nothing to write. The implicit names
(`deviceclass.resource.kubernetes.io/<class>`) the policies match by prefix, without
parameters.

A pod created before its name was mapped (a DeviceClass got `extendedResourceName` later, the
operator was down, the ConfigMap was deleted) went to another scheduler, which allocates from
the same devices as ours: it cannot be rerouted (`spec.schedulerName` is immutable), so it is
reported once per pod (log `routing.unrouted_pod`, a Warning Event `NotRoutedToDRAOperator` on
the pod) and counted by `dra_operator_unsafe_configuration{reason="device-pods-not-routed"}`
while any such pod remains. A bound pod whose node advertises the name in its allocatable
(a device plugin serves it there) does not count: no DRA device was allocated for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Final

from dra_operator import errors, kube, names
from dra_operator.app._caches import Caches, Kind
from dra_operator.app._plugin import Builder, Context, Plugin
from dra_operator.cluster import Change, ObjectKey
from dra_operator.model import DeviceClass, ExtendedResourceClasses, Pod
from dra_operator.observability import LogEvent, Metrics, get_logger
from dra_operator.verify import unrouted_names

__all__ = [
    "CONFIG_MAPS",
    "EVENT_NOT_ROUTED",
    "NAMES_KEY",
    "UNROUTED_PODS",
    "RoutingParamsPlugin",
    "mapped_names",
    "names_text",
    "with_routing_params",
]

_log = get_logger(__name__)

CONFIG_MAPS: Final = kube.Resource("", "v1", "configmaps", namespaced=True)
NAMES_KEY: Final = "names"
UNROUTED_PODS: Final = "device-pods-not-routed"
EVENT_NOT_ROUTED: Final = "NotRoutedToDRAOperator"
RESYNC: Final = 10.0
"""Seconds between checks that the ConfigMap still holds the names (deleted, edited)."""
PARAMS_BINDINGS: Final = (
    (kube.MUTATING_POLICY_BINDINGS, names.ROUTE_EXTENDED_RESOURCES_POLICY),
    (kube.VALIDATING_POLICY_BINDINGS, names.REQUIRE_SCHEDULER_EXTENDED_RESOURCES_POLICY),
)


def mapped_names(classes: Iterable[DeviceClass]) -> list[str]:
    """Every `spec.extendedResourceName` of the classes, sorted, each once."""
    return sorted({c.extended_resource_name for c in classes if c.extended_resource_name})


def names_text(mapped: Iterable[str]) -> str:
    """`data.names` as the policies split it: the names separated by single spaces."""
    return " ".join(mapped)


class RoutingParamsPlugin:
    """Publishes the mapped names and reports unrouted pods; see the module docstring."""

    name = "routing-params"

    def __init__(self, ctx: Context, *, resync: float = RESYNC) -> None:
        self._api = ctx.api
        self._caches: Caches = ctx.caches
        self._metrics: Metrics = ctx.metrics
        self._ours = ctx.settings.placed_scheduler_names
        self._resync = resync
        self._classes = ExtendedResourceClasses.of(())
        self._dirty = asyncio.Event()
        self._stopped = asyncio.Event()
        self._written: tuple[str, str, str] | None = None  # namespace, name, names text
        self._logged: str | None = None
        self._unrouted: dict[ObjectKey, list[str]] = {}
        self._events: set[asyncio.Task[Any]] = set()

    # -- Plugin ---------------------------------------------------------------------------

    def on_change(self, kind: Kind, change: Change[Any]) -> None:
        if kind is Kind.CLASSES:
            self._dirty.set()
        elif kind is Kind.PODS:
            self._check_pod(change.key, change.new.obj if change.new else None)

    def resync(self) -> None:
        self._dirty.set()

    async def run(self) -> None:
        while not self._stopped.is_set():
            try:
                async with asyncio.timeout(self._resync):
                    await self._dirty.wait()
            except TimeoutError:
                self._written = None  # apply again: the ConfigMap may have been deleted or edited
            self._dirty.clear()
            if self._stopped.is_set():
                break
            await self.sync()

    def shut_down(self) -> None:
        self._stopped.set()
        self._dirty.set()

    # -- work -----------------------------------------------------------------------------

    async def sync(self) -> None:
        """Recompute the mapping; write the ConfigMap if it changed; re-check every pod."""
        classes = [entry.obj for entry in self._caches.classes]
        mapping = ExtendedResourceClasses.of(classes)
        if mapping != self._classes:
            self._classes = mapping
            for entry in self._caches.pods:
                self._check_pod(entry.key, entry.obj)
        text = names_text(mapped_names(classes))
        target = await self._target()
        if target is None or self._written == (*target, text):
            return
        try:
            await self._write(*target, text)
        except errors.APIError as exc:
            _log.warning(LogEvent.ROUTING_PARAMS_FAILED, configmap="/".join(target), error=str(exc))
            return
        self._written = (*target, text)

    async def _target(self) -> tuple[str, str] | None:
        """namespace and name of the ConfigMap a routing binding reads, else None."""
        for resource, binding in PARAMS_BINDINGS:
            try:
                found = await self._api.get(resource, binding)
            except errors.APINotFoundError:
                continue
            except errors.APIError as exc:
                _log.warning(LogEvent.ROUTING_BINDING_UNREADABLE, binding=binding, error=str(exc))
                continue
            ref = (found.get("spec") or {}).get("paramRef") or {}
            if ref.get("name") and ref.get("namespace"):
                return str(ref["namespace"]), str(ref["name"])
        return None

    async def _write(self, namespace: str, name: str, text: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
            "data": {NAMES_KEY: text},
        }
        await self._api.apply(
            CONFIG_MAPS, body, field_manager=names.OPERATOR_FIELD_MANAGER, force=True
        )
        if text != self._logged:  # the periodic re-apply of the same names is not news
            self._logged = text
            _log.info(LogEvent.ROUTING_PARAMS_WRITTEN, configmap=f"{namespace}/{name}", names=text)

    def _check_pod(self, key: ObjectKey, pod: Pod | None) -> None:
        found: list[str] = []
        if pod is not None:
            node = self._caches.nodes.get(ObjectKey("", pod.spec.node_name))
            allocatable = node.obj.allocatable if node is not None else None
            found = unrouted_names(pod, self._classes, self._ours, allocatable)
        before = self._unrouted.pop(key, None)
        if found:
            self._unrouted[key] = found
            if before is None and pod is not None:
                self._report(pod, found)
        self._metrics.unsafe_configuration(UNROUTED_PODS, unsafe=bool(self._unrouted))

    def _report(self, pod: Pod, found: list[str]) -> None:
        meta = pod.metadata
        scheduler = pod.spec.scheduler_name or "default-scheduler"
        message = (
            f"this pod asks for {', '.join(found)}, which a DeviceClass serves from DRA devices, "
            f"but {scheduler} places it: it was created before the name was mapped (or while "
            "the routing policies were missing), so its devices may also be allocated by "
            "dra-operator. Recreate the pod (it is then routed to dra-operator), see "
            "docs/coexistence.md."
        )
        _log.warning(
            LogEvent.ROUTING_UNROUTED_POD,
            pod=f"{meta.namespace}/{meta.name}",
            scheduler=scheduler,
            resources=found,
        )
        regarding = {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": meta.namespace,
            "name": meta.name,
            "uid": meta.uid,
        }
        post = kube.post_event(
            self._api,
            regarding,
            type=names.EVENT_TYPE_WARNING,
            reason=EVENT_NOT_ROUTED,
            message=message,
            component=names.OPERATOR_FIELD_MANAGER,
        )
        task = asyncio.get_running_loop().create_task(post)
        self._events.add(task)
        task.add_done_callback(self._events.discard)


class _Both:
    """Two plugins run as one (the scheduler and its routing parameters)."""

    def __init__(self, first: Plugin, second: Plugin) -> None:
        self.name = first.name
        self._plugins = (first, second)

    def on_change(self, kind: Kind, change: Change[Any]) -> None:
        for plugin in self._plugins:
            plugin.on_change(kind, change)

    def resync(self) -> None:
        for plugin in self._plugins:
            plugin.resync()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            for plugin in self._plugins:
                group.create_task(plugin.run(), name=f"controller-{plugin.name}")

    def shut_down(self) -> None:
        for plugin in self._plugins:
            plugin.shut_down()


def with_routing_params(build: Builder) -> Builder:
    """`build` (a scheduler builder) whose plugin also runs `RoutingParamsPlugin`: the names
    matter exactly while our scheduler places pods."""

    def both(ctx: Context) -> Plugin:
        return _Both(build(ctx), RoutingParamsPlugin(ctx))

    return both
