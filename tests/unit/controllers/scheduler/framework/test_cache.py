"""The live scheduler's NodeInfo cache: events, assumed pods, snapshots copied on change."""

from __future__ import annotations

import random

from dra_operator.controllers.scheduler.framework import (
    CPU,
    NodeInfoCache,
    Snapshot,
    build_snapshot,
)
from dra_operator.model import Node, Pod, parse_pod

from .test_snapshot import make_node, make_pod


def test_the_cache_counts_assumed_pods_until_the_watch_shows_them_and_forgets_failures() -> None:
    cache = NodeInfoCache()
    cache.node_changed(make_node("a"))
    pending = make_pod("p", containers=[{"cpu": "1"}])
    cache.assume(pending, "a")
    assert cache.node_of("uid-p") == "a" and cache.is_assumed("uid-p")
    cache.pod_changed(pending)  # a watch event from before the binding: still assumed
    assert cache.snapshot().node_infos[0].requested == {CPU: 1000}
    cache.pod_changed(make_pod("p", "a"))
    assert not cache.is_assumed("uid-p")
    assert cache.snapshot().node_infos[0].requested == {CPU: 1000}
    cache.pod_changed(make_pod("p", "a", phase="Succeeded"))
    assert cache.node_of("uid-p") is None
    assert cache.snapshot().node_infos[0].requested == {}

    cache.assume(make_pod("q"), "a")
    cache.forget("uid-q")
    assert cache.snapshot().node_infos[0].pods == []


def test_pods_seen_before_their_node_count_once_it_appears() -> None:
    cache = NodeInfoCache()
    cache.pod_changed(make_pod("early", "late"))
    assert len(cache.snapshot()) == 0
    cache.node_changed(make_node("late"))
    (info,) = cache.snapshot().node_infos
    assert [p.key for p in info.pods] == ["ns/early"]
    cache.node_deleted("late")
    assert len(cache.snapshot()) == 0
    cache.node_changed(make_node("late"))
    assert [p.key for p in cache.snapshot().node_infos[0].pods] == ["ns/early"]


def test_a_snapshot_copies_only_changed_nodes_and_never_changes_afterwards() -> None:
    cache = NodeInfoCache()
    for name in ("a", "b", "c"):
        cache.node_changed(make_node(name))
    first = cache.snapshot()
    assert cache.snapshot() is first  # nothing changed: the same snapshot
    cache.assume(make_pod("p"), "b")
    second = cache.snapshot()
    assert second is not first
    assert second.get("a") is first.get("a") and second.get("c") is first.get("c")
    old_b, new_b = first.get("b"), second.get("b")
    assert old_b is not None and new_b is not None
    assert old_b.pods == [] and [p.key for p in new_b.pods] == ["ns/p"]
    assert new_b.generation > old_b.generation

    cache.node_changed(make_node("b", cpu="8"))  # an update keeps the pods
    third = cache.snapshot()
    b = third.get("b")
    assert b is not None and b.allocatable[CPU] == 8000 and [p.key for p in b.pods] == ["ns/p"]
    assert new_b.allocatable[CPU] == 4000


def test_a_status_update_leaves_the_node_info_alone_and_a_label_change_does_not() -> None:
    cache = NodeInfoCache()
    cache.node_changed(make_node("a"))
    cache.pod_changed(make_pod("p", "a"))
    first = cache.snapshot()
    cache.pod_changed(make_pod("p", "a", phase="Running"))
    assert cache.snapshot() is first
    cache.pod_changed(make_pod("p", "a", phase="Running", labels={"app": "x"}))
    second = cache.snapshot()
    assert second is not first
    b = second.get("a")
    assert b is not None and b.pods[0].pod.metadata.labels == {"app": "x"}
    assert b.requested == {CPU: 1000}


def _affine(name: str, node: str, kind: str) -> Pod:
    """A pod on `node` with a required pod (anti-)affinity term (`kind`: podAffinity or
    podAntiAffinity)."""
    term = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
    return parse_pod(
        {
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
            "spec": {
                "nodeName": node,
                "containers": [{"name": "c"}],
                "affinity": {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
            },
        }
    )


def _seen(snapshot: Snapshot) -> tuple[object, ...]:
    """What a cycle can read of a snapshot, by every way it can read it."""
    infos = [(n.name, n.generation, sorted(p.key for p in n.pods)) for n in snapshot.node_infos]
    looked_up = [snapshot.get(name) for name, _, _ in infos]
    return (
        len(snapshot),
        infos,
        [info.name if info is not None else None for info in looked_up],
        [n.name for n in snapshot.have_pods_with_affinity],
        [n.name for n in snapshot.have_pods_with_required_anti_affinity],
    )


def test_layered_snapshots_match_a_fresh_build_and_never_change_afterwards() -> None:
    """Many nodes changing, coming and going, with the layers folded into new bases on the way:
    every snapshot reads as one built from scratch, and still does after later changes."""
    rng = random.Random(32)
    cache = NodeInfoCache()
    nodes: dict[str, Node] = {}
    pods: dict[str, Pod] = {}
    taken: list[tuple[Snapshot, tuple[object, ...]]] = []
    for step in range(600):
        roll = rng.random()
        name = f"n{rng.randrange(60):02d}"
        if roll < 0.15:
            nodes[name] = make_node(name, cpu=str(rng.randrange(2, 9)))
            cache.node_changed(nodes[name])
        elif roll < 0.2 and name in nodes:
            del nodes[name]
            cache.node_deleted(name)
        elif roll < 0.75:
            kind = rng.choice(["", "", "podAffinity", "podAntiAffinity"])
            pod = _affine(f"p{step}", name, kind) if kind else make_pod(f"p{step}", name)
            pods[pod.metadata.uid] = pod
            cache.pod_changed(pod)
        elif pods:
            uid = rng.choice(sorted(pods))
            del pods[uid]
            cache.forget(uid)
        if step % 3 == 0:
            snapshot = cache.snapshot()
            expected = build_snapshot(nodes.values(), pods.values())
            seen = _seen(snapshot)
            assert seen[0] == len(expected)
            assert [(n, keys) for n, _, keys in seen[1]] == [  # type: ignore[attr-defined]
                (n.name, sorted(p.key for p in n.pods)) for n in expected.node_infos
            ]
            assert seen[3:] == _seen(expected)[3:]
            taken.append((snapshot, seen))
    assert len(taken) == 200
    for snapshot, seen in taken:
        assert _seen(snapshot) == seen
