"""What PodTopologySpread's filtering and scoring share (kube-scheduler v1.37.2, common.go).

A pod's constraints of one kind (DoNotSchedule for Filter, ScheduleAnyway for Score) are its own
when it has any, else the profile's default constraints, whose selector is the one of the
Services, ReplicationController, ReplicaSet or StatefulSet the pod belongs to (upstream's
`helper.DefaultSelector`). That selector needs those objects: a Handle that can give it
implements `SpreadSelectors`; with one that does not, default constraints never apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from dra_operator.controllers.scheduler.framework import PodInfo
from dra_operator.model import (
    Node,
    Pod,
    Selector,
    TopologySpreadConstraint,
    compile_selector,
    node_matches,
    tolerates_node_taint,
)

NAME = "PodTopologySpread"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"

SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(max_skew=3, topology_key=HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    TopologySpreadConstraint(max_skew=5, topology_key=ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)
"""Applied when `defaultingType` is System (upstream's default)."""


@runtime_checkable
class SpreadSelectors(Protocol):
    """A Handle that knows the workloads a pod belongs to."""

    def default_spread_selector(self, pod: Pod) -> Selector:
        """The pod's Services' selectors and its controller's selector, ANDed; empty if none."""
        ...


@dataclass(frozen=True, slots=True)
class Constraint:
    """A constraint with upstream's defaults applied and its selector compiled."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str

    def includes(self, pod: Pod, node: Node) -> bool:
        """nodeAffinityPolicy / nodeTaintsPolicy: whether `node` counts for this constraint."""
        if self.node_affinity_policy == HONOR and not matches_required_affinity(pod, node):
            return False
        return self.node_taints_policy != HONOR or tolerates_blocking_taints(pod, node)


def matches_required_affinity(pod: Pod, node: Node) -> bool:
    """nodeSelector and required node affinity (upstream's GetRequiredNodeAffinity)."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.spec.node_selector.items()):
        return False
    required = pod.spec.required_node_affinity
    return required is None or node_matches(node.name, labels, required)


def tolerates_blocking_taints(pod: Pod, node: Node) -> bool:
    """Every NoSchedule and NoExecute taint of `node` is tolerated (PreferNoSchedule is not)."""
    return all(
        any(tolerates_node_taint(t, taint) for t in pod.spec.tolerations)
        for taint in node.taints
        if taint.effect in ("NoSchedule", "NoExecute")
    )


def build_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> list[Constraint]:
    """The constraints of kind `action`; raises SelectorError for an invalid labelSelector."""
    result = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = compile_selector(c.label_selector)
        keys = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
        if keys:
            selector = selector.with_labels(keys)
        result.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=1 if c.min_domains is None else c.min_domains,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
            )
        )
    return result


def has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def count_matching(pods: Iterable[PodInfo], selector: Selector, namespace: str) -> int:
    """Pods of `namespace`, not terminating, that `selector` selects; an empty one counts none."""
    if selector.everything:
        return 0
    matches = selector.matches
    n = 0
    for p in pods:
        meta = p.pod.metadata
        if meta.namespace == namespace and meta.deletion_timestamp is None and matches(meta.labels):
            n += 1
    return n
