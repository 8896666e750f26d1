"""Posting Kubernetes Events (core/v1), the way client-go's event recorder does.

core/v1 rather than events.k8s.io/v1: kube-controller-manager's resourceclaim controller and
kube-scheduler's recorder both surface as `source.component` in `kubectl describe`, which is
where users look. An Event is best effort: failing to record one must never fail the work it
describes, so `post_event` returns the error instead of raising it.
"""

from __future__ import annotations

import datetime
import secrets
from collections.abc import Mapping
from typing import Any

from dra_operator.errors import APIError
from dra_operator.kube._client import Client
from dra_operator.kube._resources import CORE_EVENTS

__all__ = ["event_manifest", "post_event"]


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
