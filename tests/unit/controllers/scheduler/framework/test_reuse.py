"""Filter and Score results of signed plugins are reused per pod shape while a node is unchanged."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from dra_operator.controllers.scheduler.framework import (
    SUCCESS,
    CycleState,
    Framework,
    NodeInfo,
    NodeInfoCache,
    ShapeMemo,
    Snapshot,
    Status,
    build_snapshot,
    unresolvable,
)
from dra_operator.model import Pod

from .plugins import Calls, make, nodes, ok, pod, profile, reject_on, scaled, score_by

NO = unresolvable("no")


def _cache(*names: str) -> NodeInfoCache:
    cache = NodeInfoCache()
    for node in nodes(*names):
        cache.node_changed(node)
    return cache


def _by_name(p: Pod) -> Hashable:
    """A signature: pods named alike are alike."""
    return p.metadata.name.rstrip("0123456789")


def _filters(calls: Calls, **extra: Callable[..., Any]) -> Framework:
    registry = {
        "Signed": make("Signed", calls, filter=reject_on(NO, "b"), sign=_by_name, **extra),
        "Unsigned": make("Unsigned", calls, filter=ok),
    }
    return Framework(profile("Signed", "Unsigned"), registry)


def _filter_all(framework: Framework, p: Pod, snapshot: Snapshot) -> dict[str, Status]:
    state = CycleState()
    framework.run_pre_filter(state, p, snapshot.node_infos)
    return {n.name: framework.run_filter(state, p, n) for n in snapshot.node_infos}


def _called(calls: Calls, point: str, plugin: str) -> list[str]:
    found = [node for at, name, node in calls if at == point and name == plugin]
    calls.clear()
    return found


def test_a_signed_verdict_is_reused_for_a_pod_alike_until_the_node_changes() -> None:
    calls: Calls = []
    framework = _filters(calls)
    cache = _cache("a", "b", "c")
    first = _filter_all(framework, pod("web1"), cache.snapshot())
    assert first == {"a": SUCCESS, "b": NO.with_plugin("Signed"), "c": SUCCESS}
    assert _called(calls, "filter", "Signed") == ["a", "b", "c"]

    assert _filter_all(framework, pod("web2"), cache.snapshot()) == first
    assert _called(calls, "filter", "Signed") == []

    cache.assume(pod("other"), "c")
    assert _filter_all(framework, pod("web3"), cache.snapshot()) == first
    assert _called(calls, "filter", "Signed") == ["c"]

    _filter_all(framework, pod("db1"), cache.snapshot())
    assert _called(calls, "filter", "Signed") == ["a", "b", "c"]


def test_plugins_after_the_signed_ones_run_per_node_where_the_reused_verdict_passes() -> None:
    calls: Calls = []
    framework = _filters(calls)
    snapshot = _cache("a", "b", "c").snapshot()
    _filter_all(framework, pod("web1"), snapshot)
    calls.clear()
    _filter_all(framework, pod("web2"), snapshot)
    assert [(point, name, node) for point, name, node in calls] == [
        ("filter", "Unsigned", "a"),
        ("filter", "Unsigned", "c"),
    ]


def test_nothing_is_reused_without_a_signature_or_on_a_node_info_of_generation_zero() -> None:
    calls: Calls = []
    framework = _filters(calls)
    built = build_snapshot(nodes("a", "b"), [])  # outside the cache: generation 0
    assert {n.generation for n in built.node_infos} == {0}
    for name in ("web1", "web2"):
        _filter_all(framework, pod(name), built)
    assert _called(calls, "filter", "Signed") == ["a", "b", "a", "b"]

    unsigned: Calls = []
    framework = _filters(unsigned)
    framework.plugins["Signed"].sign_pod = lambda p: None  # type: ignore[attr-defined]
    snapshot = _cache("a", "b").snapshot()
    for name in ("web1", "web2"):
        _filter_all(framework, pod(name), snapshot)
    assert _called(unsigned, "filter", "Signed") == ["a", "b", "a", "b"]


def test_an_unsigned_plugin_first_keeps_every_plugin_per_node() -> None:
    calls: Calls = []
    registry = {
        "Unsigned": make("Unsigned", calls, filter=ok),
        "Signed": make("Signed", calls, filter=ok, sign=_by_name),
    }
    framework = Framework(profile("Unsigned", "Signed"), registry)
    snapshot = _cache("a").snapshot()
    for name in ("web1", "web2"):
        _filter_all(framework, pod(name), snapshot)
    assert _called(calls, "filter", "Signed") == ["a", "a"]


def _scoring(calls: Calls) -> Framework:
    registry = {
        "Signed": make(
            "Signed", calls, score=score_by({"a": 1, "b": 4}), normalize=scaled, sign=_by_name
        ),
        "Unsigned": make("Unsigned", calls, score=score_by({"a": 50, "b": 10})),
    }
    return Framework(profile("Signed", "Unsigned"), registry)


def _totals(framework: Framework, p: Pod, infos: tuple[NodeInfo, ...]) -> dict[str, int] | Status:
    state = CycleState()
    assert framework.run_pre_score(state, p, infos).ok
    return framework.run_score_totals(state, p, infos)


def test_signed_raw_scores_are_reused_and_normalized_again_each_cycle() -> None:
    calls: Calls = []
    framework = _scoring(calls)
    cache = _cache("a", "b")
    infos = cache.snapshot().node_infos
    first = _totals(framework, pod("web1"), infos)
    assert first == {"a": 25 + 50, "b": 100 + 10}
    assert _called(calls, "score", "Signed") == ["a", "b"]

    assert _totals(framework, pod("web2"), infos[:1]) == {"a": 100 + 50}  # normalized anew
    assert _called(calls, "score", "Signed") == []

    cache.assume(pod("other"), "b")
    assert _totals(framework, pod("web3"), cache.snapshot().node_infos) == first
    assert _called(calls, "score", "Signed") == ["b"]


def test_score_totals_are_run_scores_totals() -> None:
    calls: Calls = []
    framework = _scoring(calls)
    infos = _cache("a", "b").snapshot().node_infos
    state = CycleState()
    framework.run_pre_score(state, pod("web1"), infos)
    full = framework.run_score(state, pod("web1"), infos)
    assert not isinstance(full, Status)
    assert _totals(framework, pod("web2"), infos) == {n.name: n.total for n in full}
    assert [s.name for s in full[0].scores] == ["Signed", "Unsigned"]


def test_the_least_recently_used_shape_is_dropped_beyond_the_limit() -> None:
    memo: ShapeMemo[int] = ShapeMemo(limit=2)
    memo.for_shape("x")["a"] = (1, 1)
    memo.for_shape("y")
    memo.for_shape("x")
    memo.for_shape("z")  # drops y, used before x
    assert len(memo) == 2
    assert memo.for_shape("x") == {"a": (1, 1)}
    assert memo.for_shape("y") == {}


def test_a_node_new_to_the_cache_has_a_generation() -> None:
    assert all(n.generation for n in _cache("a", "b").snapshot().node_infos)
