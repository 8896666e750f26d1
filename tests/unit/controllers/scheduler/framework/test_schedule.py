"""One pod's algorithm (schedule_one.go) and `evaluate`, with test plugins."""

from __future__ import annotations

import pytest

from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    Code,
    CycleState,
    FitError,
    Framework,
    Scheduled,
    ScheduleError,
    Status,
    build_snapshot,
    error,
    evaluate,
    num_feasible_nodes_to_find,
    schedule_pod,
    unresolvable,
    unschedulable,
)
from dra_operator.model import FrozenMap

from .plugins import (
    Calls,
    make,
    narrow,
    nodes,
    ok,
    pod,
    post_filter,
    prefilter_ok,
    profile,
    reject_on,
    scaled,
    score_by,
)


@pytest.mark.parametrize(
    ("percentage", "nodes_", "expected"),
    [
        pytest.param(None, 99, 99, id="below 100 nodes: all"),
        pytest.param(None, 100, 100, id="100 nodes: adaptive 50% is below the minimum"),
        pytest.param(None, 1000, 420, id="adaptive: 50% - 8%"),
        pytest.param(None, 6000, 300, id="adaptive: at least 5%"),
        pytest.param(0, 5000, 500, id="0 means adaptive: 50% - 40%"),
        pytest.param(30, 1000, 300, id="configured"),
        pytest.param(1, 1000, 100, id="never fewer than 100"),
        pytest.param(100, 1000, 1000, id="all"),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int | None, nodes_: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes_) == expected


def _names(count: int) -> list[str]:
    return [f"n{i:03}" for i in range(count)]


def test_filter_stops_at_enough_feasible_nodes_and_the_next_cycle_starts_after_them() -> None:
    calls: Calls = []
    registry = {
        "F": make("F", calls, filter=reject_on(unschedulable("odd"), *_names(300)[1::2])),
        "S": make("S", calls, score=score_by({})),
    }
    framework = Framework(profile("F", "S", percentage_of_nodes_to_score=40), registry)
    snapshot = build_snapshot(nodes(*_names(300)), [])
    first = schedule_pod(framework, CycleState(), pod(), snapshot)
    assert isinstance(first, Scheduled)
    assert first.feasible_nodes == 120  # 40 % of 300
    assert first.evaluated_nodes == 239  # n000..n238: 120 even, 119 odd
    assert first.node == "n000"  # every score ties: the first found
    assert framework.next_start_node_index == 239
    second = schedule_pod(framework, CycleState(), pod(), snapshot)
    assert isinstance(second, Scheduled)
    assert second.node == "n240"
    # n239..n299 (30 even, 31 odd), then n000..n178 (90 even, 89 odd): 240 more nodes
    assert framework.next_start_node_index == (239 + 240) % 300


def test_without_a_score_plugin_the_first_feasible_node_is_taken_unscored() -> None:
    calls: Calls = []
    registry = {"F": make("F", calls, filter=reject_on(unschedulable("no"), "a"))}
    framework = Framework(profile("F"), registry)
    done = schedule_pod(framework, CycleState(), pod(), build_snapshot(nodes("a", "b", "c"), []))
    assert isinstance(done, Scheduled)
    assert (done.node, done.feasible_nodes, done.scores) == ("b", 1, ())
    assert [c[2] for c in calls] == ["a", "b"]


def test_the_highest_total_wins_and_ties_go_to_the_node_found_first() -> None:
    calls: Calls = []
    registry = {
        "S": make("S", calls, score=score_by({"a": 10, "b": 30, "c": 30})),
        "F": make("F", calls, filter=ok),
    }
    framework = Framework(profile("F", "S"), registry)
    snapshot = build_snapshot(nodes("a", "b", "c"), [])
    framework.next_start_node_index = 2  # the walk is c, a, b
    done = schedule_pod(framework, CycleState(), pod(), snapshot)
    assert isinstance(done, Scheduled)
    assert done.node == "c"
    assert [s.name for s in done.scores] == ["c", "a", "b"]


def test_the_fit_error_counts_every_reason_of_every_rejected_node() -> None:
    calls: Calls = []
    registry = {
        "A": make(
            "A", calls, filter=reject_on(unschedulable("Too many pods", "Insufficient cpu"), "a")
        ),
        "B": make(
            "B", calls, filter=reject_on(unresolvable("node(s) had untolerated taint(s)"), "b", "c")
        ),
    }
    framework = Framework(profile("A", "B"), registry)
    failed = schedule_pod(framework, CycleState(), pod(), build_snapshot(nodes("a", "b", "c"), []))
    assert isinstance(failed, FitError)
    assert failed.message == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 Too many pods, "
        "2 node(s) had untolerated taint(s)."
    )
    assert failed.diagnosis.unschedulable_plugins == {"A", "B"}
    assert failed.diagnosis.statuses["a"].plugin == "A"


def test_nodes_a_pre_filter_result_leaves_out_are_counted_with_the_absent_status() -> None:
    calls: Calls = []
    registry = {
        "N": make("N", calls, pre_filter=narrow("a"), filter=reject_on(unschedulable("busy"), "a")),
    }
    framework = Framework(profile("N"), registry)
    failed = schedule_pod(framework, CycleState(), pod(), build_snapshot(nodes("a", "b", "c"), []))
    assert isinstance(failed, FitError)
    assert failed.message == (
        "0/3 nodes are available: 1 busy, 2 node(s) didn't satisfy plugin(s) [N]."
    )
    assert [c[2] for c in calls if c[0] == "filter"] == ["a"]


def test_a_pre_filter_rejection_is_the_whole_message_and_post_filter_adds_its_own() -> None:
    calls: Calls = []
    registry = {
        "P": make("P", calls, pre_filter=lambda _: (None, unschedulable("claim not found"))),
        "Preempt": make(
            "Preempt",
            calls,
            post_filter=post_filter(unschedulable("No preemption victims found for incoming pod.")),
        ),
    }
    framework = Framework(profile("P", "Preempt"), registry)
    failed = schedule_pod(framework, CycleState(), pod(), build_snapshot(nodes("a", "b"), []))
    assert isinstance(failed, FitError)
    assert failed.message == (
        "0/2 nodes are available: claim not found. No preemption victims found for incoming pod."
    )
    assert failed.diagnosis.statuses["b"].reasons == ("claim not found",)
    assert not failed.unresolvable


def test_no_node_at_all_is_upstreams_error() -> None:
    framework = Framework(profile(), {})
    failed = schedule_pod(framework, CycleState(), pod(), build_snapshot([], []))
    assert isinstance(failed, FitError) and failed.unresolvable
    assert failed.message == "no nodes available to schedule pods"


def test_a_filter_error_aborts_the_cycle() -> None:
    calls: Calls = []
    registry = {
        "F": make("F", calls, filter=lambda node: error("broken") if node.name == "b" else SUCCESS)
    }
    framework = Framework(
        profile("F", "S"), {**registry, "S": make("S", calls, score=score_by({}))}
    )
    failed = schedule_pod(framework, CycleState(), pod(), build_snapshot(nodes("a", "b", "c"), []))
    assert isinstance(failed, ScheduleError)
    assert failed.status.reasons == ('running filter plugin "F": broken',)


def test_evaluate_filters_every_node_and_scores_the_feasible_ones() -> None:
    calls: Calls = []
    registry = {
        "N": make("N", calls, pre_filter=narrow("a", "b", "c"), filter=ok),
        "F": make("F", calls, filter=reject_on(unschedulable("no"), "b")),
        "S": make("S", calls, score=score_by({"a": 2, "c": 4}), normalize=scaled),
        "T": make("T", calls, score=score_by({"a": 7, "c": 1})),
    }
    framework = Framework(
        profile("N", "F", "S", "T", weights=FrozenMap({"S": 3}), percentage_of_nodes_to_score=1),
        registry,
    )
    snapshot = build_snapshot(nodes("a", "b", "c", "d"), [])
    result = evaluate(framework, pod(), snapshot)
    assert result.prefilter.ok
    assert result.filter["a"].ok and result.filter["c"].ok
    assert result.filter["b"] == Status(Code.UNSCHEDULABLE, ("no",), "F")
    assert result.filter["d"] == unresolvable("node(s) didn't satisfy plugin(s) [N]")
    assert result.scores == {"S": {"a": 50, "c": 100}, "T": {"a": 7, "c": 1}}
    assert result.total == {"a": 3 * 50 + 7, "c": 3 * 100 + 1}
    assert result.feasible == ["a", "c"]


def test_evaluate_stops_at_a_pre_filter_rejection() -> None:
    calls: Calls = []
    registry = {"P": make("P", calls, pre_filter=lambda _: (None, unresolvable("gone")), filter=ok)}
    result = evaluate(Framework(profile("P"), registry), pod(), build_snapshot(nodes("a"), []))
    assert result.prefilter == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("gone",), "P")
    assert result.filter == {} and result.total == {}
    assert prefilter_ok() == (None, SUCCESS)
