"""client-go's Reflector: LIST, then WATCH from there, with our raw client, for every kind.

The one way objects reach the stores (`_informer`; docs/architecture.md "One informer path"):
kopf's event handlers build a cause, a logger, a kwargs dict and a per-object worker for every
event, which at 5,000 pods and 5,000 claims cost more CPU than the scheduler's decisions. Here
an event costs its JSON decoding and the store's parse.

One `Reflector` serves one kind in one scope (all namespaces, or one of `--namespace`):

* LIST in pages of 500 (`kube.list_all`); every item goes to
  `listed(items, resourceVersion, relisted)` in one call, which also prunes what the LIST no
  longer holds (client-go's Replace).
* WATCH from the LIST's resourceVersion with bookmarks, and again from the last version seen
  whenever the server ends the stream (its timeout) or the connection breaks.
* 410 Gone (history compacted) or an unreadable resourceVersion: LIST again.
* Any other failure (5xx, 429, a forbidden or missing resource, a broken connection): log,
  wait (`kube.Backoff`: 0.5 s doubling to 30 s, reset by an answered watch), and carry on;
  never raise.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Final, cast

from dra_operator import errors, kube
from dra_operator.observability import LogEvent, get_logger

_log = get_logger(__name__)

WATCH_SECONDS: Final = 300
FIRST_DELAY: Final = 0.5
MAX_DELAY: Final = 30.0
_GONE: Final = 410

Listed = Callable[[list[Mapping[str, Any]], str, bool], None]
"""Called with a LIST's items, its resourceVersion and whether it is a relist."""
Event = Callable[[str, Mapping[str, Any]], None]


class Reflector:
    """Keeps `listed` and `event` told about one kind in one scope until cancelled."""

    def __init__(
        self,
        api: kube.Client,
        resource: kube.Resource,
        *,
        namespace: str | None,
        listed: Listed,
        event: Event,
        watch_seconds: int = WATCH_SECONDS,
    ) -> None:
        self.api = api
        self.resource = resource
        self.namespace = namespace
        self._listed = listed
        self._event = event
        self._watch_seconds = watch_seconds  # the server ends each WATCH after this long
        self.lists = 0  # LISTs completed (the first one included)
        self.version: str | None = None  # the last resourceVersion seen; None: LIST next
        self.synced = asyncio.Event()

    @property
    def scope(self) -> str:
        return f"{self.resource.plural}@{self.namespace or '*'}"

    async def run(self) -> None:
        backoff = kube.Backoff(FIRST_DELAY, MAX_DELAY)
        while True:
            try:
                if self.version is None:
                    await self._list()
                await self._watch()
                backoff.reset()
                continue
            except errors.APIError as exc:
                if exc.status == _GONE:
                    _log.info(LogEvent.WATCH_EXPIRED, scope=self.scope, error=str(exc))
                    self.version = None
                    continue
                _log.warning(
                    LogEvent.WATCH_FAILED, scope=self.scope, error=str(exc), retry_in=backoff.delay
                )
            await backoff.wait()

    async def _list(self) -> None:
        listing = await kube.list_all(self.api, self.resource, namespace=self.namespace)
        items: list[Mapping[str, Any]] = [*listing.items]
        version = listing.resource_version
        self.lists += 1
        self._listed(items, version, self.lists > 1)
        self.version = version
        self.synced.set()

    def _handle(self, kind: str, obj: Mapping[str, Any]) -> None:
        """One event to the caches; a failure there is logged and the watch goes on, as kopf
        goes on after a failed handler (one bad object must not stop the rest)."""
        try:
            self._event(kind, obj)
        except Exception:
            metadata = obj.get("metadata") or {}
            _log.exception(
                LogEvent.WATCH_HANDLER_FAILED,
                scope=self.scope,
                namespace=metadata.get("namespace"),
                name=metadata.get("name"),
            )

    async def _watch(self) -> None:
        """Hand every event over until the server ends the stream, remembering the last
        resourceVersion seen: a watch resumed after a broken connection replays nothing."""
        stream = cast(
            "AsyncGenerator[kube.JSONObject, None]",
            self.api.watch(
                self.resource,
                namespace=self.namespace,
                resource_version=self.version or None,
                timeout_seconds=self._watch_seconds,
            ),
        )
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                kind = str(event.get("type") or "")
                obj: Mapping[str, Any] = event.get("object") or {}
                seen = (obj.get("metadata") or {}).get("resourceVersion")
                if kind != "BOOKMARK":
                    self._handle(kind, obj)
                if seen:
                    self.version = str(seen)
