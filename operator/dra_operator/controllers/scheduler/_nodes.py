"""Node filtering: the kube-scheduler Filter plugins a DRA pod needs besides DynamicResources.

Each check returns upstream's reason text (v1.36.4 NodeUnschedulable, TaintToleration,
NodeAffinity, NodeResourcesFit), so the FailedScheduling histogram reads like kube-scheduler's.
Readiness is checked directly, because no node lifecycle controller may be running to turn a
NotReady condition into the `node.kubernetes.io/not-ready` taint. A node can fail several
checks; every reason is counted, as upstream counts every status reason.
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator.controllers.scheduler._usage import NodeRequests
from dra_operator.model import Node, Pod, Quantity, node_matches, tolerates_node_taint

NOT_READY = "node(s) were not ready"
UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED_TAINT = "node(s) had untolerated taint(s)"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"

_UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
_ZERO = Quantity(0)


def node_problems(
    node: Node, pod: Pod, requests: Mapping[str, Quantity], placed: NodeRequests
) -> list[str]:
    """Why `pod` (asking for `requests`) cannot go to `node`; empty when it can."""
    problems: list[str] = []
    if not node.ready:
        problems.append(NOT_READY)
    if node.unschedulable and not _tolerates_unschedulable(pod):
        problems.append(UNSCHEDULABLE)
    if not _tolerates_taints(node, pod):
        problems.append(UNTOLERATED_TAINT)
    if not _matches_affinity(node, pod):
        problems.append(AFFINITY)
    problems += _insufficient(node, requests, placed)
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


def _insufficient(node: Node, requests: Mapping[str, Quantity], placed: NodeRequests) -> list[str]:
    """NodeResourcesFit: the pod count, then every resource the pod asks a non-zero amount of."""
    problems: list[str] = []
    allowed_pods = node.allocatable.get("pods")
    if allowed_pods is not None and placed.pods + 1 > allowed_pods.int_value():
        problems.append(TOO_MANY_PODS)
    for name in sorted(requests):
        wanted = requests[name]
        if wanted.sign <= 0:
            continue
        free = node.allocatable.get(name, _ZERO) - placed.requested.get(name, _ZERO)
        if wanted > free:
            problems.append(f"Insufficient {name}")
    return problems
