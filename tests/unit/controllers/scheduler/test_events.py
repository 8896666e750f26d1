"""Event mappers: which changes queue which keys, and which wake every parked key."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dra_operator import names
from dra_operator.cluster import Change, Entry, ObjectKey
from dra_operator.controllers.scheduler import (
    WorkKey,
    frees_room,
    handles,
    keys_for_claim,
    keys_for_pod,
    releases_devices,
)
from dra_operator.model import parse_pod, parse_resource_claim

from .builders import NS, SCHEDULER, claim, new_state, pod

OURS = frozenset({SCHEDULER})


def _entry(raw: dict[str, Any], parse: Any) -> Entry[Any]:
    return Entry(ObjectKey.of(raw), parse(raw), raw, "1")


def _pod_change(old: dict[str, Any] | None, new: dict[str, Any] | None) -> Change[Any]:
    return Change(_entry(old, parse_pod) if old else None, _entry(new, parse_pod) if new else None)


def _claim_change(old: dict[str, Any] | None, new: dict[str, Any] | None) -> Change[Any]:
    return Change(
        _entry(old, parse_resource_claim) if old else None,
        _entry(new, parse_resource_claim) if new else None,
    )


def _allocated(raw: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    out["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "gpu-0"}]
            }
        }
    }
    return out


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(pod("p"), True, id="ours-unbound"),
        pytest.param(pod("p", scheduler="default-scheduler"), False, id="other-scheduler"),
        pytest.param(pod("p", node_name="n1"), False, id="bound-without-claims"),
        pytest.param(
            pod("p", claims=["c"], node_name="n1", scheduler="x"), True, id="bound-with-claims"
        ),
        pytest.param({**pod("p"), "status": {"phase": "Failed"}}, False, id="finished"),
    ],
)
def test_handles(raw: dict[str, Any], expected: bool) -> None:
    assert handles(parse_pod(raw), OURS) is expected
    state = new_state()
    state.claims.apply("ADDED", {**claim("c"), "metadata": {"name": "c", "namespace": NS}})
    keys = keys_for_pod(_pod_change(None, raw), OURS, state.claims)
    assert keys == ([WorkKey("pod", NS, "p")] if expected else [])


def test_a_pod_whose_claims_do_not_exist_yet_is_not_queued() -> None:
    """Upstream's PreEnqueue: the claim's creation (or the pod status naming it) queues it."""
    state = new_state()
    for raw in (pod("p", claims=["c"]), pod("p", templates={"gpu": None})):
        assert keys_for_pod(_pod_change(None, raw), OURS, state.claims) == []
    generated = pod("p", templates={"gpu": "p-gpu-x"})
    assert keys_for_pod(_pod_change(None, generated), OURS, state.claims) == []
    state.claims.apply("ADDED", {**claim("c"), "metadata": {"name": "p-gpu-x", "namespace": NS}})
    keys = keys_for_pod(_pod_change(None, generated), OURS, state.claims)
    assert keys == [WorkKey("pod", NS, "p")]


def test_a_claim_change_queues_its_pods_and_an_immediate_claim_itself() -> None:
    state = new_state()
    raw_pod = pod("p", claims=["c"])
    raw_pod["metadata"]["resourceVersion"] = "1"
    state.pods.apply("ADDED", raw_pod)
    plain = claim("c")
    assert keys_for_claim(_claim_change(None, plain), state.pods, OURS) == [WorkKey("pod", NS, "p")]
    immediate = claim("i", annotations={names.ALLOCATE_ANNOTATION: names.ALLOCATE_IMMEDIATE})
    assert keys_for_claim(_claim_change(None, immediate), state.pods, OURS) == [
        WorkKey("claim", NS, "i")
    ]


@pytest.mark.parametrize("allocated", [False, True], ids=["unallocated", "allocated"])
def test_a_deleted_claim_queues_none_of_its_pods(allocated: bool) -> None:
    """1.37's hint: QueueSkip without an allocation; with one, every parked pod is woken
    (`releases_devices`), not just those using the claim. 1.36 has no Delete event at all."""
    state = new_state()
    raw_pod = pod("p", claims=["c"])
    raw_pod["metadata"]["resourceVersion"] = "1"
    state.pods.apply("ADDED", raw_pod)
    immediate = claim("c", annotations={names.ALLOCATE_ANNOTATION: names.ALLOCATE_IMMEDIATE})
    old = _allocated(immediate) if allocated else immediate
    change = _claim_change(old, None)
    assert keys_for_claim(change, state.pods, OURS) == []
    assert releases_devices(change) is allocated


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(_allocated(claim("c")), claim("c"), True, id="deallocated"),
        pytest.param(_allocated(claim("c")), None, True, id="deleted-allocated"),
        pytest.param(claim("c"), None, False, id="deleted-unallocated"),
        pytest.param(claim("c"), _allocated(claim("c")), False, id="allocated"),
    ],
)
def test_releases_devices(old: dict[str, Any], new: dict[str, Any] | None, expected: bool) -> None:
    assert releases_devices(_claim_change(old, new)) is expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(pod("p", node_name="n1"), None, True, id="placed-pod-deleted"),
        pytest.param(pod("p"), None, False, id="unplaced-pod-deleted"),
        pytest.param(
            pod("p", node_name="n1"),
            {**pod("p", node_name="n1"), "status": {"phase": "Succeeded"}},
            True,
            id="placed-pod-finished",
        ),
        pytest.param(pod("p"), pod("p", node_name="n1"), False, id="pod-bound"),
    ],
)
def test_frees_room(old: dict[str, Any], new: dict[str, Any] | None, expected: bool) -> None:
    assert frees_room(_pod_change(old, new)) is expected
