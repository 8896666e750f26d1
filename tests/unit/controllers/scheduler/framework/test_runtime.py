"""The runtime runs each extension point with kube-scheduler's rules (framework.go)."""

from __future__ import annotations

import pytest

from dra_operator.controllers.scheduler.framework import (
    MAX_PERMIT_TIMEOUT,
    SKIP,
    SUCCESS,
    Code,
    CycleState,
    Framework,
    NodeScore,
    Status,
    build_snapshot,
    error,
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

SNAPSHOT = build_snapshot(nodes("a", "b", "c"), [])


def test_plugins_are_built_once_in_profile_order_and_serve_the_points_they_implement() -> None:
    calls: Calls = []
    registry = {
        "F": make("F", calls, filter=ok),
        "PF": make("PF", calls, pre_filter=prefilter_ok, filter=ok),
        "S": make("S", calls, score=score_by({})),
    }
    framework = Framework(profile("PF", "F", "S", args=FrozenMap({"F": {"x": 1}})), registry)
    assert [p.name for p in framework.filter_plugins] == ["PF", "F"]
    assert [p.name for p in framework.pre_filter_plugins] == ["PF"]
    assert [p.name for p in framework.score_plugins] == ["S"]
    assert framework.filter_plugins[1] is framework.plugins["F"]
    assert framework.plugins["F"].args == {"x": 1}  # type: ignore[attr-defined]
    assert framework.plugins["F"].handle is framework.handle  # type: ignore[attr-defined]


def test_a_plugin_disabled_at_one_point_still_serves_the_others() -> None:
    calls: Calls = []
    registry = {"PF": make("PF", calls, pre_filter=prefilter_ok, filter=ok)}
    framework = Framework(
        profile("PF", disabled=FrozenMap({"filter": frozenset({"PF"})})), registry
    )
    assert framework.filter_plugins == []
    assert [p.name for p in framework.pre_filter_plugins] == ["PF"]


def test_a_plugin_the_registry_lacks_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no plugin named Missing"):
        Framework(profile("Missing"), {})


def _pre_filter(*plugins: tuple[str, object]) -> tuple[Framework, Calls]:
    calls: Calls = []
    registry = {
        name: make(name, calls, pre_filter=fn, filter=ok)  # type: ignore[arg-type]
        for name, fn in plugins
    }
    return Framework(profile(*registry), registry), calls


def test_pre_filter_results_are_intersected() -> None:
    framework, _ = _pre_filter(
        ("A", narrow("a", "b")), ("B", prefilter_ok), ("C", narrow("b", "c"))
    )
    result, status, narrowing = framework.run_pre_filter(CycleState(), pod(), SNAPSHOT.node_infos)
    assert status.ok
    assert result is not None and result.node_names == {"b"}
    assert narrowing == {"A", "C"}


@pytest.mark.parametrize(
    ("second", "text"),
    [
        pytest.param(
            narrow("c"),
            "node(s) didn't satisfy plugin(s) [A B] simultaneously",
            id="two plugins disagree",
        ),
        pytest.param(narrow(), "node(s) didn't satisfy plugin B", id="one plugin names no node"),
    ],
)
def test_an_empty_intersection_rejects_the_pod_as_unresolvable(second: object, text: str) -> None:
    if text.endswith("plugin B"):
        framework, _ = _pre_filter(("B", second))
    else:
        framework, _ = _pre_filter(("A", narrow("a")), ("B", second))
    _, status, _ = framework.run_pre_filter(CycleState(), pod(), SNAPSHOT.node_infos)
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (text,)


def test_pre_filter_unresolvable_stops_but_unschedulable_lets_the_others_run() -> None:
    framework, calls = _pre_filter(
        ("A", lambda _: (None, unschedulable("a says no"))),
        ("B", lambda _: (None, SUCCESS)),
        ("C", lambda _: (None, unresolvable("c says never"))),
        ("D", prefilter_ok),
    )
    _, status, _ = framework.run_pre_filter(CycleState(), pod(), SNAPSHOT.node_infos)
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("c says never",), "C")
    assert [c[1] for c in calls] == ["A", "B", "C"]

    framework, calls = _pre_filter(
        ("A", lambda _: (None, unschedulable("a says no"))), ("B", prefilter_ok)
    )
    _, status, _ = framework.run_pre_filter(CycleState(), pod(), SNAPSHOT.node_infos)
    assert status == Status(Code.UNSCHEDULABLE, ("a says no",), "A")
    assert [c[1] for c in calls] == ["A", "B"]


def test_a_pre_filter_error_is_wrapped_with_the_plugin_name() -> None:
    framework, _ = _pre_filter(("A", lambda _: (None, error("boom"))))
    _, status, _ = framework.run_pre_filter(CycleState(), pod(), SNAPSHOT.node_infos)
    assert status == Status(Code.ERROR, ('running PreFilter plugin "A": boom',), "A")


def test_pre_filter_skip_removes_that_plugins_filter() -> None:
    calls: Calls = []
    registry = {
        "A": make(
            "A",
            calls,
            pre_filter=lambda _: (None, SKIP),
            filter=reject_on(unschedulable("a"), "a", "b", "c"),
        ),
        "B": make("B", calls, filter=ok),
    }
    framework = Framework(profile("A", "B"), registry)
    state = CycleState()
    framework.run_pre_filter(state, pod(), SNAPSHOT.node_infos)
    assert state.skip_filter == {"A"}
    node = SNAPSHOT.get("a")
    assert node is not None
    assert framework.run_filter(state, pod(), node).ok
    assert ("filter", "A", "a") not in calls


def test_filter_stops_at_the_first_plugin_rejecting_the_node() -> None:
    calls: Calls = []
    registry = {
        "A": make("A", calls, filter=ok),
        "B": make("B", calls, filter=reject_on(unschedulable("b1", "b2"), "a")),
        "C": make("C", calls, filter=reject_on(unresolvable("c"), "a")),
    }
    framework = Framework(profile("A", "B", "C"), registry)
    node = SNAPSHOT.get("a")
    assert node is not None
    status = framework.run_filter(CycleState(), pod(), node)
    assert status == Status(Code.UNSCHEDULABLE, ("b1", "b2"), "B")
    assert [c[1] for c in calls] == ["A", "B"]


def test_a_filter_answering_neither_success_nor_rejection_is_an_error() -> None:
    calls: Calls = []
    framework = Framework(profile("A"), {"A": make("A", calls, filter=lambda _: error("x"))})
    node = SNAPSHOT.get("a")
    assert node is not None
    status = framework.run_filter(CycleState(), pod(), node)
    assert status == Status(Code.ERROR, ('running filter plugin "A": x',), "A")


def test_post_filter_takes_the_first_success_and_else_collects_reasons() -> None:
    calls: Calls = []
    registry = {
        "A": make("A", calls, post_filter=post_filter(unschedulable("a failed"))),
        "B": make("B", calls, post_filter=post_filter(SUCCESS, "node-b")),
        "C": make("C", calls, post_filter=post_filter(SUCCESS, "node-c")),
    }
    framework = Framework(profile("A", "B", "C"), registry)
    result, status = framework.run_post_filter(CycleState(), pod(), {})
    assert status.ok and result is not None and result.nominated_node_name == "node-b"
    assert [c[1] for c in calls] == ["A", "B"]

    framework = Framework(
        profile("A", "D"),
        {
            "A": registry["A"],
            "D": make("D", calls, post_filter=post_filter(unschedulable("d failed"))),
        },
    )
    result, status = framework.run_post_filter(CycleState(), pod(), {})
    assert result is None
    assert status == Status(Code.UNSCHEDULABLE, ("a failed", "d failed"), "A")


def test_scores_are_normalized_weighted_and_summed_and_pre_score_skip_drops_a_scorer() -> None:
    calls: Calls = []
    registry = {
        "Raw": make("Raw", calls, score=score_by({"a": 10, "b": 20, "c": 30})),
        "Scaled": make("Scaled", calls, score=score_by({"a": 1, "b": 4}), normalize=scaled),
        "Skipped": make("Skipped", calls, pre_score=lambda _: SKIP, score=score_by({"a": 100})),
    }
    framework = Framework(
        profile("Raw", "Scaled", "Skipped", weights=FrozenMap({"Scaled": 2})), registry
    )
    state = CycleState()
    assert framework.run_pre_score(state, pod(), SNAPSHOT.node_infos).ok
    assert state.skip_score == {"Skipped"}
    scores = framework.run_score(state, pod(), SNAPSHOT.node_infos)
    assert not isinstance(scores, Status)
    assert [(s.name, s.total) for s in scores] == [("a", 10 + 2 * 25), ("b", 20 + 200), ("c", 30)]
    assert not any(c[1] == "Skipped" and c[0] == "score" for c in calls)


def test_a_score_out_of_range_after_normalizing_is_an_error() -> None:
    calls: Calls = []
    registry = {"Big": make("Big", calls, score=score_by({"a": 101}))}
    framework = Framework(profile("Big"), registry)
    scores = framework.run_score(CycleState(), pod(), SNAPSHOT.node_infos)
    assert isinstance(scores, Status) and scores.code is Code.ERROR
    assert 'plugin "Big" returns an invalid score 101' in scores.reasons[0]


def test_unreserve_runs_every_reserve_plugin_in_reverse_order() -> None:
    calls: Calls = []
    registry = {
        "A": make("A", calls, reserve=ok),
        "B": make("B", calls, reserve=lambda _: unschedulable("b is full")),
        "C": make("C", calls, reserve=ok),
    }
    framework = Framework(profile("A", "B", "C"), registry)
    state = CycleState()
    status = framework.run_reserve(state, pod(), "a")
    assert status == Status(Code.UNSCHEDULABLE, ("b is full",), "B")
    framework.run_unreserve(state, pod(), "a")
    assert calls == [
        ("reserve", "A", "a"),
        ("reserve", "B", "a"),
        ("unreserve", "C", "a"),
        ("unreserve", "B", "a"),
        ("unreserve", "A", "a"),
    ]


def test_permit_collects_waits_capped_at_fifteen_minutes_unless_a_plugin_rejects() -> None:
    calls: Calls = []
    wait = Status(Code.WAIT)
    registry = {
        "A": make("A", calls, permit=lambda _: (wait, 5.0)),
        "B": make("B", calls, permit=lambda _: (wait, 3600.0)),
        "C": make("C", calls, permit=lambda _: (SUCCESS, 0.0)),
    }
    framework = Framework(profile("A", "B", "C"), registry)
    status, waits = framework.run_permit(CycleState(), pod(), "a")
    assert status.code is Code.WAIT
    assert waits == {"A": 5.0, "B": MAX_PERMIT_TIMEOUT}

    registry["C"] = make("C", calls, permit=lambda _: (unschedulable("not now"), 0.0))
    framework = Framework(profile("A", "B", "C"), registry)
    status, waits = framework.run_permit(CycleState(), pod(), "a")
    assert status == Status(Code.UNSCHEDULABLE, ("not now",), "C") and waits == {}


async def test_bind_falls_through_skips_and_pre_bind_stops_at_a_failure() -> None:
    calls: Calls = []
    registry = {
        "PB1": make("PB1", calls, pre_bind=lambda _: SKIP),
        "PB2": make("PB2", calls, pre_bind=ok),
        "B1": make("B1", calls, bind=lambda _: SKIP),
        "B2": make("B2", calls, bind=ok),
        "B3": make("B3", calls, bind=ok),
    }
    framework = Framework(profile("PB1", "PB2", "B1", "B2", "B3"), registry)
    assert (await framework.run_pre_bind(CycleState(), pod(), "a")).ok
    status = await framework.run_bind(CycleState(), pod(), "a")
    assert status == Status(plugin="B2")
    assert ("bind", "B3", "a") not in calls

    framework = Framework(profile("B1"), registry)
    assert await framework.run_bind(CycleState(), pod(), "a") == SKIP

    registry["PB1"] = make("PB1", calls, pre_bind=lambda _: error("write failed"))
    framework = Framework(profile("PB1", "PB2"), registry)
    calls.clear()
    status = await framework.run_pre_bind(CycleState(), pod(), "a")
    assert status == Status(Code.ERROR, ('running PreBind plugin "PB1": write failed',), "PB1")
    assert [c[1] for c in calls] == ["PB1"]


def test_pre_enqueue_keeps_a_pod_out_with_the_first_plugins_reason() -> None:
    calls: Calls = []
    gated = unresolvable("waiting for scheduling gates: [example.com/gate]")
    registry = {
        "Gate": make("Gate", calls, pre_enqueue=lambda _: gated),
        "Other": make("Other", calls, pre_enqueue=lambda _: unresolvable("other")),
    }
    framework = Framework(profile("Gate", "Other"), registry)
    assert framework.run_pre_enqueue(pod()) == gated.with_plugin("Gate")


def test_normalize_sees_the_raw_scores_of_every_node() -> None:
    seen: list[list[NodeScore]] = []

    def remember(scores: list[NodeScore]) -> Status:
        seen.append([NodeScore(s.name, s.score) for s in scores])
        return SUCCESS

    calls: Calls = []
    registry = {"S": make("S", calls, score=score_by({"a": 7, "c": 9}), normalize=remember)}
    framework = Framework(profile("S"), registry)
    framework.run_score(CycleState(), pod(), SNAPSHOT.node_infos)
    assert seen == [[NodeScore("a", 7), NodeScore("b", 0), NodeScore("c", 9)]]
