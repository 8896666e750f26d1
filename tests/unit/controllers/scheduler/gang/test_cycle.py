"""The group cycle's rule (kube-scheduler v1.37.2 PlacementFeasible of GangScheduling), over a
`place` that answers from a table, and the gang's members and order."""

from __future__ import annotations

import datetime

from dra_operator.controllers.scheduler import Placement, Unschedulable, Wait
from dra_operator.controllers.scheduler.gang import (
    PERMIT_WAITING,
    Gang,
    cannot_be_satisfied,
    gang_of,
    run_cycle,
)
from dra_operator.model import Pod, PodGroup, parse_pod, parse_pod_group

NS = "default"


def _group(min_count: int | None = 3) -> PodGroup:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return parse_pod_group(
        {
            "metadata": {"name": "g", "namespace": NS, "uid": "g-1"},
            "spec": {"schedulingPolicy": policy},
        }
    )


def _pod(name: str, *, priority: int = 0, age: int = 0, node: str = "") -> Pod:
    created = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC) - datetime.timedelta(seconds=age)
    spec: dict[str, object] = {
        "schedulerName": "dra-operator",
        "priority": priority,
        "containers": [{"name": "c", "image": "x"}],
        "schedulingGroup": {"podGroupName": "g"},
    }
    if node:
        spec["nodeName"] = node
    return parse_pod(
        {
            "metadata": {
                "name": name,
                "namespace": NS,
                "uid": f"uid-{name}",
                "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
            "spec": spec,
        }
    )


def _gang(*pods: Pod, min_count: int = 3, scheduled: int = 0) -> Gang:
    return Gang(
        group=_group(min_count),
        min_count=min_count,
        pending=pods,
        scheduled=scheduled,
        total=len(pods) + scheduled,
    )


def _placing(fits: set[str]) -> tuple[list[str], object]:
    tried: list[str] = []

    def place(pod: Pod) -> Placement | Unschedulable:
        tried.append(pod.metadata.name)
        if pod.metadata.name in fits:
            return Placement(node="n", claims=(), pod_uid=pod.metadata.uid, bind=True)
        return Unschedulable(f"no room for {pod.metadata.name}")

    return tried, place


def test_the_gang_is_placed_when_every_member_fits() -> None:
    pods = [_pod(n) for n in "abc"]
    tried, place = _placing({"a", "b", "c"})
    outcome = run_cycle(_gang(*pods), place)  # type: ignore[arg-type]
    assert outcome.ok and outcome.message == ""
    assert [p.metadata.name for p, _ in outcome.placed] == ["a", "b", "c"]
    assert tried == ["a", "b", "c"]


def test_a_member_short_fails_the_gang_with_upstreams_text() -> None:
    pods = [_pod(n) for n in "abcd"]
    _, place = _placing({"a", "b", "c"})
    outcome = run_cycle(_gang(*pods, min_count=4), place)  # type: ignore[arg-type]
    assert not outcome.ok
    assert outcome.message == "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
    assert [p.metadata.name for p, _ in outcome.placed] == ["a", "b", "c"]
    assert [(p.metadata.name, r) for p, r in outcome.rejected] == [("d", "no room for d")]


def test_the_cycle_stops_as_soon_as_min_count_is_out_of_reach() -> None:
    pods = [_pod(n) for n in "abcd"]
    tried, place = _placing({"c", "d"})
    outcome = run_cycle(_gang(*pods, min_count=3), place)  # type: ignore[arg-type]
    assert not outcome.ok and tried == ["a", "b"]
    assert outcome.message == cannot_be_satisfied(3, 0, 2)
    assert [p.metadata.name for p in outcome.untried] == ["c", "d"]


def test_min_count_counts_members_already_scheduled_and_spares_extra_pods() -> None:
    pods = [_pod(n) for n in "abc"]
    _, place = _placing({"a"})
    outcome = run_cycle(_gang(*pods, min_count=3, scheduled=2), place)  # type: ignore[arg-type]
    assert outcome.ok
    assert [p.metadata.name for p, _ in outcome.placed] == ["a"]
    assert sorted(p.metadata.name for p, _ in outcome.rejected) == ["b", "c"]


def test_without_placement_feasible_1_36_tries_every_member_and_keeps_permits_text() -> None:
    pods = [_pod(n) for n in "abcd"]
    tried, place = _placing({"c", "d"})
    outcome = run_cycle(
        _gang(*pods, min_count=3),
        place,  # type: ignore[arg-type]
        placement_feasible=False,
    )
    assert not outcome.ok and tried == ["a", "b", "c", "d"]
    assert (
        outcome.message == PERMIT_WAITING == "waiting for minCount pods from a gang to be scheduled"
    )
    assert [p.metadata.name for p, _ in outcome.placed] == ["c", "d"]
    assert outcome.untried == ()


def test_without_placement_feasible_1_36_places_the_gang_once_min_count_is_scheduled() -> None:
    pods = [_pod(n) for n in "abcd"]
    _, place = _placing({"b", "c", "d"})
    outcome = run_cycle(
        _gang(*pods, min_count=3),
        place,  # type: ignore[arg-type]
        placement_feasible=False,
    )
    assert outcome.ok and [p.metadata.name for p, _ in outcome.placed] == ["b", "c", "d"]


def test_too_few_pods_fail_before_any_is_tried() -> None:
    tried, place = _placing({"a"})
    outcome = run_cycle(_gang(_pod("a"), min_count=2), place)  # type: ignore[arg-type]
    assert not outcome.ok and tried == []
    assert outcome.message == "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"


def test_a_member_that_waits_is_rejected_without_an_event() -> None:
    def place(pod: Pod) -> Wait:
        return Wait("resourceclaim not created yet")

    outcome = run_cycle(_gang(_pod("a"), min_count=1), place)
    assert not outcome.ok and outcome.waiting == {"uid-a"}


def test_members_are_pending_in_queue_order_and_placed_ones_count_as_scheduled() -> None:
    members = [
        _pod("young", age=1),
        _pod("old", age=100),
        _pod("urgent", priority=10),
        _pod("bound", node="n1"),
        _pod("assumed"),
    ]
    gang = gang_of(
        _group(4),
        members,
        placed=lambda p: bool(p.spec.node_name) or p.metadata.name == "assumed",
        ours=lambda p: True,
    )
    assert [p.metadata.name for p in gang.pending] == ["urgent", "old", "young"]
    assert (gang.scheduled, gang.total, gang.min_count) == (2, 5, 4)


def test_the_policy_is_read_from_the_pod_group() -> None:
    assert _group(5).min_count == 5
    assert _group(None).min_count is None
    composite = parse_pod_group(
        {
            "metadata": {"name": "g", "namespace": NS},
            "spec": {
                "parentCompositePodGroupName": "top",
                "schedulingPolicy": {"gang": {"minCount": 2}},
                "schedulingConstraints": {"topology": [{"key": "zone"}]},
            },
            "status": {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True"}]},
        }
    )
    assert composite.parent_composite == "top"
    assert composite.topology_constraints
    assert composite.initially_scheduled == "True"
