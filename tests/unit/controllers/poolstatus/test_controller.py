"""The reconciler: answered once, retried while a pool is half-published, expired requests."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from dra_operator import errors, model
from dra_operator.cluster import Store
from dra_operator.controllers.poolstatus import (
    ANSWERED_TTL,
    MAX_RETRIES,
    PENDING_TTL,
    PoolStatusReconciler,
    expired,
)

DRIVER = "test.example.com"
NOW = datetime.datetime(2026, 11, 27, 12, 0, tzinfo=datetime.UTC)


def stamp(at: datetime.datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def raw_request(
    name: str = "r", created: datetime.datetime = NOW, status: dict[str, Any] | None = None
) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "7",
            "creationTimestamp": stamp(created),
        },
        "spec": {"driver": DRIVER},
    }
    if status is not None:
        raw["status"] = status
    return raw


def raw_slice(count: int = 1) -> dict[str, Any]:
    return {
        "metadata": {"name": "s", "resourceVersion": "1"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": "pool-1", "generation": 1, "resourceSliceCount": count},
            "nodeName": "node-1",
            "devices": [{"name": "device-0"}],
        },
    }


class Writer:
    """Records the writes; `gone` names requests the server no longer has."""

    def __init__(self, gone: tuple[str, ...] = ()) -> None:
        self.statuses: list[tuple[str, str, dict[str, Any]]] = []
        self.deleted: list[tuple[str, str]] = []
        self._gone = gone

    async def write_status(self, name: str, resource_version: str, status: dict[str, Any]) -> None:
        if name in self._gone:
            raise errors.APINotFoundError(404, "NotFound", name)
        self.statuses.append((name, resource_version, status))

    async def delete(self, name: str, uid: str) -> None:
        if name in self._gone:
            raise errors.APINotFoundError(404, "NotFound", name)
        self.deleted.append((name, uid))


def reconciler(
    requests: list[dict[str, Any]],
    slices: list[dict[str, Any]],
    writer: Writer,
    failures: int = 0,
) -> PoolStatusReconciler:
    request_store: Store[model.ResourcePoolStatusRequest] = Store(
        "ResourcePoolStatusRequest", model.parse_resource_pool_status_request
    )
    slice_store: Store[model.ResourceSlice] = Store("ResourceSlice", model.parse_resource_slice)
    for raw in requests:
        request_store.apply("ADDED", raw)
    for raw in slices:
        slice_store.apply("ADDED", raw)
    return PoolStatusReconciler(
        requests=request_store,
        slices=slice_store,
        claims=Store("ResourceClaim", model.parse_resource_claim),
        rules=None,
        writer=writer,
        failures=lambda _: failures,
        now=lambda: NOW,
    )


async def test_answers_a_pending_request_at_its_resource_version() -> None:
    writer = Writer()
    await reconciler([raw_request()], [raw_slice()], writer)("r")
    ((name, version, status),) = writer.statuses
    assert (name, version) == ("r", "7")
    assert status["poolCount"] == 1
    assert status["conditions"][0]["type"] == "Complete"


async def test_an_answered_request_is_never_answered_again() -> None:
    writer = Writer()
    answered = raw_request(status={"poolCount": 0})
    await reconciler([answered], [raw_slice()], writer)("r")
    assert writer.statuses == []


async def test_a_deleted_request_is_not_answered() -> None:
    writer = Writer(gone=("r",))
    await reconciler([raw_request()], [raw_slice()], writer)("r")
    await reconciler([], [raw_slice()], writer)("r")
    assert writer.statuses == []


async def test_a_half_published_pool_is_retried_then_dropped() -> None:
    writer = Writer()
    with pytest.raises(errors.DRAOperatorError) as retried:
        await reconciler([raw_request()], [raw_slice(count=2)], writer)("r")
    assert not isinstance(retried.value, errors.TerminalError)
    with pytest.raises(errors.TerminalError):
        await reconciler([raw_request()], [raw_slice(count=2)], writer, MAX_RETRIES)("r")
    assert writer.statuses == []


def _complete(at: datetime.datetime) -> dict[str, Any]:
    condition = {
        "type": "Complete",
        "status": "True",
        "lastTransitionTime": stamp(at),
        "reason": "CalculationComplete",
        "message": "Calculated status for 0 pools",
    }
    return {"poolCount": 0, "conditions": [condition]}


MINUTE = datetime.timedelta(minutes=1)


@pytest.mark.parametrize(
    ("raw", "gone"),
    [
        pytest.param(
            raw_request(status=_complete(NOW - ANSWERED_TTL + MINUTE)),
            False,
            id="completed-request-not-expired",
        ),
        pytest.param(
            raw_request(status=_complete(NOW - ANSWERED_TTL - MINUTE)),
            True,
            id="completed-request-expired",
        ),
        pytest.param(
            raw_request(created=NOW - PENDING_TTL + MINUTE), False, id="pending-request-not-expired"
        ),
        pytest.param(
            raw_request(created=NOW - PENDING_TTL - MINUTE), True, id="pending-request-expired"
        ),
        pytest.param(
            raw_request(created=NOW - 2 * ANSWERED_TTL, status={"poolCount": 0}),
            True,
            id="answered-without-condition-by-creation",
        ),
    ],
)
def test_expired(raw: dict[str, Any], gone: bool) -> None:
    request = model.parse_resource_pool_status_request(raw)
    assert expired([request], NOW) == ([request] if gone else [])


async def test_clean_up_deletes_expired_requests_by_uid() -> None:
    writer = Writer()
    old = raw_request("old", created=NOW - PENDING_TTL - MINUTE)
    assert await reconciler([old, raw_request("new")], [], writer).clean_up() == 1
    assert writer.deleted == [("old", "uid-old")]
