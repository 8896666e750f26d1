"""The core/v1 Event manifest the operator posts.

Covers: the involved object, source component, timestamps and count as client-go's recorder
writes them; a unique name per Event; messages cut at the API's 1,024-character limit.
"""

from __future__ import annotations

import datetime
from typing import Any

from dra_operator.kube import event_manifest

POD = {"apiVersion": "v1", "kind": "Pod", "namespace": "ns", "name": "p", "uid": "u-1"}
NOW = datetime.datetime(2026, 11, 22, 3, 0, 0, tzinfo=datetime.UTC)


def make(message: str = "boom") -> dict[str, Any]:
    return event_manifest(
        POD,
        type="Warning",
        reason="FailedResourceClaimCreation",
        message=message,
        component="resource_claim",
        now=NOW,
    )


def test_event_names_the_pod_and_the_component() -> None:
    event = make()
    assert event["involvedObject"] == POD
    assert event["source"] == {"component": "resource_claim"}
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2026-11-22T03:00:00Z"
    assert event["count"] == 1
    assert (event["type"], event["reason"], event["message"]) == (
        "Warning",
        "FailedResourceClaimCreation",
        "boom",
    )


def test_each_event_gets_its_own_name() -> None:
    first, second = make()["metadata"], make()["metadata"]
    assert first["namespace"] == "ns"
    assert first["name"].startswith("p.")
    assert first["name"] != second["name"]


def test_long_messages_are_cut_at_the_api_limit() -> None:
    assert len(make("x" * 5000)["message"]) == 1024
