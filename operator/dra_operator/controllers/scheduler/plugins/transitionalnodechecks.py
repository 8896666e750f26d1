"""TransitionalNodeChecks: the node checks a DRA pod needs besides DynamicResources, as one plugin.

Transitional: it stands in for kube-scheduler's NodeUnschedulable, TaintToleration,
NodeAffinity (required) and NodeResourcesFit until those run as plugins of their own, and
keeps a Ready check that upstream leaves to the node lifecycle controller (which may not be
running to turn a NotReady condition into the `node.kubernetes.io/not-ready` taint). Each
check gives upstream's reason text (v1.37.2), so the FailedScheduling histogram reads like
kube-scheduler's; unlike upstream's separate plugins, a node failing several checks reports
every reason.

Extended resources that a DeviceClass maps and the node does not advertise are DynamicResources'
to fit (upstream's `shouldDelegateResourceToDRA`): the scheduler names them in the CycleState
with `delegate_to_dra` before Filter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dra_operator.controllers.scheduler.framework import (
    PODS,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    PreFilterExtensions,
    PreFilterResult,
    Status,
    to_units,
    unresolvable,
    unschedulable,
)
from dra_operator.model import (
    FrozenMap,
    Node,
    Pod,
    Quantity,
    node_matches,
    served_by_dra,
    tolerates_node_taint,
)

NAME = "TransitionalNodeChecks"

NOT_READY = "node(s) were not ready"
UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED_TAINT = "node(s) had untolerated taint(s)"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"

_UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
_REQUESTS = f"PreFilter{NAME}"
_DELEGATED = f"{NAME}/delegated"


def delegate_to_dra(state: CycleState, backed: Mapping[str, Quantity]) -> None:
    """The pod's extended resources a DeviceClass maps: not checked on nodes lacking them."""
    state.write(_DELEGATED, FrozenMap(backed))


class TransitionalNodeChecks:
    """See the module docstring."""

    name = NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        state.write(_REQUESTS, to_units(pod.effective_requests))
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        requests = state.get(_REQUESTS)
        if not isinstance(requests, Mapping):
            requests = to_units(pod.effective_requests)
        delegated = state.get(_DELEGATED)
        if isinstance(delegated, FrozenMap) and delegated:
            served = served_by_dra(delegated, node.node.allocatable)
            requests = {name: n for name, n in requests.items() if name not in served}
        unresolved = node_problems(node.node, pod)
        short = insufficient(node, requests)
        if unresolved:
            return unresolvable(*unresolved, *short)
        return unschedulable(*short) if short else SUCCESS


def new(args: Mapping[str, object], handle: Handle) -> TransitionalNodeChecks:
    return TransitionalNodeChecks()


def node_problems(node: Node, pod: Pod) -> list[str]:
    """Why `pod` cannot go to `node` whatever else runs there; empty when it can."""
    problems: list[str] = []
    if not node.ready:
        problems.append(NOT_READY)
    if node.unschedulable and not _tolerates_unschedulable(pod):
        problems.append(UNSCHEDULABLE)
    if not _tolerates_taints(node, pod):
        problems.append(UNTOLERATED_TAINT)
    if not _matches_affinity(node, pod):
        problems.append(AFFINITY)
    return problems


def insufficient(node: NodeInfo, requests: Mapping[str, int]) -> list[str]:
    """NodeResourcesFit: the pod count, then every resource the pod asks a non-zero amount of."""
    problems: list[str] = []
    allowed_pods = node.allocatable.get(PODS)
    if allowed_pods is not None and len(node.pods) + 1 > allowed_pods:
        problems.append(TOO_MANY_PODS)
    for name in sorted(requests):
        wanted = requests[name]
        if wanted > 0 and wanted > node.allocatable.get(name, 0) - node.requested.get(name, 0):
            problems.append(f"Insufficient {name}")
    return problems


def _tolerates_unschedulable(pod: Pod) -> bool:
    """NodeUnschedulable lets pods through that tolerate the unschedulable taint."""
    return any(
        t.key == _UNSCHEDULABLE_TAINT
        and t.operator in ("", "Exists", "Equal")
        and t.effect in ("", "NoSchedule")
        for t in pod.spec.tolerations
    )


def _tolerates_taints(node: Node, pod: Pod) -> bool:
    return all(
        any(tolerates_node_taint(t, taint) for t in pod.spec.tolerations)
        for taint in node.taints
        if taint.effect in _BLOCKING_EFFECTS
    )


def _matches_affinity(node: Node, pod: Pod) -> bool:
    labels = node.labels
    if any(labels.get(key) != value for key, value in pod.spec.node_selector.items()):
        return False
    affinity = pod.spec.required_node_affinity
    return affinity is None or node_matches(node.name, labels, affinity)
