"""Posting Kubernetes Events (core/v1), the way client-go's event recorder does.

core/v1 rather than events.k8s.io/v1: kube-controller-manager's resourceclaim controller and
kube-scheduler's recorder both surface as `source.component` in `kubectl describe`, which is
where users look. An Event is best effort: failing to record one must never fail the work it
describes, so `post_event` returns the error instead of raising it, and `EventSender` posts in
the background and logs a failure.

`event_target` and `event_target_of` build the `regarding` object every Event names (its
apiVersion, kind, namespace, name and uid), from fields or from a raw manifest.
"""

from __future__ import annotations

import asyncio
import datetime
import secrets
from collections.abc import Mapping
from typing import Any

from dra_operator.errors import APIError
from dra_operator.kube._client import Client
from dra_operator.kube._resources import CORE_EVENTS
from dra_operator.observability import LogEvent, get_logger

__all__ = ["EventSender", "event_manifest", "event_target", "event_target_of", "post_event"]

_log = get_logger(__name__)


def event_target(
    api_version: str, kind: str, *, namespace: str | None, name: str, uid: str | None = None
) -> dict[str, Any]:
    """The object an Event is about, as `post_event`'s `regarding` (empty fields are left
    out of the Event's involvedObject)."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "namespace": namespace,
        "name": name,
        "uid": uid,
    }


def event_target_of(raw: Mapping[str, Any], *, kind: str | None = None) -> dict[str, Any]:
    """The Event target for an object as read from the API server (`kind` when the manifest
    may lack it, as a watch's objects of built-in kinds may)."""
    metadata = raw.get("metadata") or {}
    return event_target(
        str(raw.get("apiVersion") or ""),
        kind or str(raw.get("kind") or ""),
        namespace=metadata.get("namespace"),
        name=str(metadata.get("name") or ""),
        uid=metadata.get("uid"),
    )


def event_manifest(
    regarding: Mapping[str, Any],
    *,
    type: str,
    reason: str,
    message: str,
    component: str,
    now: datetime.datetime,
) -> dict[str, Any]:
    """A core/v1 Event about `regarding` (apiVersion, kind, namespace, name, uid)."""
    stamp = now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    namespace = regarding.get("namespace") or "default"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            # client-go's naming: the object's name plus a unique suffix.
            "name": f"{regarding['name']}.{secrets.token_hex(8)}",
            "namespace": namespace,
        },
        "involvedObject": {
            key: regarding[key]
            for key in ("apiVersion", "kind", "namespace", "name", "uid")
            if regarding.get(key)
        },
        "type": type,
        "reason": reason,
        "message": message[:1024],  # the API's limit on an Event message
        "source": {"component": component},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


async def post_event(
    api: Client,
    regarding: Mapping[str, Any],
    *,
    type: str,
    reason: str,
    message: str,
    component: str,
) -> APIError | None:
    """Create the Event; the APIError when that failed (the caller logs it), else None."""
    body = event_manifest(
        regarding,
        type=type,
        reason=reason,
        message=message,
        component=component,
        now=datetime.datetime.now(datetime.UTC),
    )
    try:
        await api.create(CORE_EVENTS, body)
    except APIError as exc:
        return exc
    return None


class EventSender:
    """Events posted in the background, for callers that cannot wait (a watch handler):
    client-go's recorder is fire-and-forget too. A failure is logged, never raised."""

    def __init__(self, api: Client, component: str) -> None:
        self._api = api
        self._component = component
        self._posting: set[asyncio.Task[None]] = set()

    def send(self, regarding: Mapping[str, Any], *, type: str, reason: str, message: str) -> None:
        task = asyncio.get_running_loop().create_task(
            self._post(regarding, type=type, reason=reason, message=message)
        )
        self._posting.add(task)  # the loop keeps only a weak reference
        task.add_done_callback(self._posting.discard)

    async def _post(
        self, regarding: Mapping[str, Any], *, type: str, reason: str, message: str
    ) -> None:
        failure = await post_event(
            self._api,
            regarding,
            type=type,
            reason=reason,
            message=message,
            component=self._component,
        )
        if failure is not None:
            _log.warning(LogEvent.EVENT_FAILED, reason=reason, error=str(failure))
