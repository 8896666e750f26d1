"""Nominated pods in Filter, and the PreFilter extensions preemption runs through the framework."""

from __future__ import annotations

from dra_operator.controllers.scheduler.framework import (
    Code,
    CycleState,
    FitError,
    Framework,
    FrameworkHandle,
    NodeInfo,
    Nominator,
    PodInfo,
    Profile,
    Snapshot,
    Status,
    schedule_pod,
    unschedulable,
)
from dra_operator.controllers.scheduler.plugins import IN_TREE
from dra_operator.model import Pod

from ..plugins.builders import container, make_node, make_pod, node_info, pod_info


def _pod(name: str, cpu: str, priority: int) -> Pod:
    return make_pod(name, containers=[container(requests={"cpu": cpu})], priority=priority)


def _framework(nominator: Nominator) -> Framework:
    profile = Profile(scheduler_name="s", multi_point=("NodeResourcesFit",))
    return Framework(profile, IN_TREE, handle=FrameworkHandle(nominator=nominator))


def _node() -> NodeInfo:
    return node_info(make_node("n1", allocatable={"cpu": "1", "pods": "10"}))


def _filter(framework: Framework, pod: Pod, node: NodeInfo) -> Status:
    state = CycleState()
    framework.start_cycle(Snapshot([node]))
    framework.run_pre_filter(state, pod, [node])
    return framework.run_filter_with_nominated_pods(state, pod, node)


def test_a_nominated_pod_holds_room_against_equal_or_lower_priority_pods_only() -> None:
    nominator = Nominator()
    nominated = _pod("nominated", "600m", 10)
    nominator.add(nominated, "n1")
    framework = _framework(nominator)
    node = _node()
    assert _filter(framework, _pod("lower", "500m", 5), node).code is Code.UNSCHEDULABLE
    assert _filter(framework, _pod("equal", "500m", 10), node).code is Code.UNSCHEDULABLE
    assert _filter(framework, _pod("higher", "500m", 20), node).ok
    assert _filter(framework, nominated, node).ok  # a pod never competes with itself
    assert node.pods == []  # the real NodeInfo is untouched


def test_a_nomination_moves_and_is_dropped() -> None:
    nominator = Nominator()
    pod = _pod("p", "1", 0)
    nominator.add(pod, "n1")
    nominator.add(pod, "n2")
    assert nominator.for_node("n1") == []
    assert [i.pod for i in nominator.for_node("n2")] == [pod]
    assert nominator.node_of(pod.metadata.uid) == "n2"
    nominator.delete(pod.metadata.uid)
    assert nominator.for_node("n2") == []
    assert nominator.node_of(pod.metadata.uid) == ""


def test_schedule_pod_counts_nominated_pods() -> None:
    nominator = Nominator()
    nominator.add(_pod("nominated", "600m", 10), "n1")
    snapshot = Snapshot([_node()])
    found = schedule_pod(_framework(nominator), CycleState(), _pod("late", "500m", 0), snapshot)
    assert isinstance(found, FitError)
    assert found.message == "0/1 nodes are available: 1 Insufficient cpu."


class _Extensions:
    def add_pod(self, state: CycleState, pod: Pod, to_add: PodInfo, node: NodeInfo) -> Status:
        return unschedulable("cannot add")

    def remove_pod(self, state: CycleState, pod: Pod, to_remove: PodInfo, node: NodeInfo) -> Status:
        return unschedulable("cannot remove")


class _WithExtensions:
    name = "Ext"

    def pre_filter(self, state: CycleState, pod: Pod, nodes: object) -> tuple[None, Status]:
        return None, Status()

    def pre_filter_extensions(self) -> _Extensions:
        return _Extensions()


def test_a_failing_pre_filter_extension_is_an_error_naming_the_plugin() -> None:
    profile = Profile(scheduler_name="s", multi_point=("Ext",))
    framework = Framework(profile, {"Ext": lambda args, handle: _WithExtensions()})
    node, victim, pod = _node(), pod_info(_pod("v", "1", 0)), _pod("p", "1", 1)
    state = CycleState()
    removed = framework.run_pre_filter_extension_remove_pod(state, pod, victim, node)
    assert removed.code is Code.ERROR
    assert removed.reasons == ('running RemovePod on PreFilter plugin "Ext": cannot remove',)
    added = framework.run_pre_filter_extension_add_pod(state, pod, victim, node)
    assert added.reasons == ('running AddPod on PreFilter plugin "Ext": cannot add',)
    state.skip_filter = {"Ext"}  # a plugin whose PreFilter said Skip is not asked
    assert framework.run_pre_filter_extension_remove_pod(state, pod, victim, node).ok
