"""CycleState clones deep enough for preemption's simulation, and the snapshot's views."""

from __future__ import annotations

from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    NodeInfo,
    PodInfo,
    Snapshot,
    unresolvable,
)
from dra_operator.model import Node, ObjectMeta, Pod


class _Counter:
    def __init__(self, n: int) -> None:
        self.n = n

    def clone(self) -> _Counter:
        return _Counter(self.n)


def test_a_clone_does_not_share_cloneable_values() -> None:
    state = CycleState()
    state.write("PreFilterX", _Counter(1))
    state.skip_filter.add("X")
    copy = state.clone()
    counter = copy.read("PreFilterX")
    assert isinstance(counter, _Counter)
    counter.n = 5
    copy.skip_filter.add("Y")
    original = state.read("PreFilterX")
    assert isinstance(original, _Counter) and original.n == 1
    assert state.skip_filter == {"X"}


def _node_info(name: str, *, anti: bool = False) -> NodeInfo:
    info = NodeInfo(node=Node(metadata=ObjectMeta(name=name)), allocatable={})
    if anti:
        pod = PodInfo(
            pod=Pod(metadata=ObjectMeta(name="p", namespace="ns")),
            requests={},
            non_zero_requests={},
        )
        info.pods.append(pod)
        info.pods_with_required_anti_affinity.append(pod)
    return info


def test_the_snapshot_orders_nodes_by_name_and_lists_anti_affinity_holders() -> None:
    snapshot = Snapshot([_node_info("b", anti=True), _node_info("a")])
    assert [n.name for n in snapshot] == ["a", "b"]
    assert [n.name for n in snapshot.have_pods_with_required_anti_affinity] == ["b"]
    assert snapshot.get("b") is not None and snapshot.get("c") is None


def test_a_clone_of_a_node_info_leaves_the_original_alone() -> None:
    info = _node_info("a", anti=True)
    copy = info.clone()
    copy.pods.clear()
    copy.requested["cpu"] = 5
    assert len(info.pods) == 1 and info.requested == {}


def test_unresolvable_rejects() -> None:
    status = unresolvable("node(s) didn't match Pod's node affinity/selector")
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.rejects


def test_a_profile_disables_per_point_and_everywhere() -> None:
    from dra_operator.controllers.scheduler.framework import Profile
    from dra_operator.model import FrozenMap

    profile = Profile(
        scheduler_name="dra-operator",
        multi_point=("NodeName", "TaintToleration", "ImageLocality"),
        disabled=FrozenMap({"score": frozenset({"TaintToleration"}), "*": frozenset({"NodeName"})}),
        weights=FrozenMap({"TaintToleration": 3}),
    )
    assert profile.enabled_at("filter") == ("TaintToleration", "ImageLocality")
    assert profile.enabled_at("score") == ("ImageLocality",)
    assert profile.weight("TaintToleration") == 3 and profile.weight("ImageLocality") == 1
