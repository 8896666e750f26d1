"""InterPodAffinity's PreFilter, its AddPod/RemovePod and Filter (kube-scheduler v1.37.2).

PreFilter counts, per topology pair (label key, value), the existing pods whose required
anti-affinity terms select the incoming pod, and the existing pods that match the incoming pod's
required affinity (all terms at once) and anti-affinity terms. Filter then decides per node from
those counts alone. This is upstream's general path; its alpha InterPodAffinityHostnameFastPath
(off by default in v1.37) only changes how the same verdicts are reached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    NodeInfo,
    PodInfo,
    Snapshot,
    Status,
    unresolvable,
    unschedulable,
)
from dra_operator.controllers.scheduler.plugins import _helper
from dra_operator.controllers.scheduler.plugins.interpodaffinity._terms import (
    AffinityTerm,
    NamespaceLabels,
    PodTerms,
    cached_terms,
    matches_all,
    pod_terms,
)
from dra_operator.model import Node, Pod

NAME = "InterPodAffinity"
PRE_FILTER_KEY = "PreFilter" + NAME

ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

Pair = tuple[str, str]


def _bump(counts: dict[Pair, int], node: Node, key: str, delta: int) -> None:
    value = node.labels.get(key)
    if value is None:
        return
    pair = (key, value)
    n = counts.get(pair, 0) + delta
    if n:
        counts[pair] = n
    else:
        counts.pop(pair, None)


@dataclass(slots=True)
class PreFilterState:
    """What Filter reads; cloned (counts copied) when preemption simulates removals."""

    terms: PodTerms
    pod: Pod
    ns_labels: Mapping[str, str]  # the incoming pod's namespace's labels
    labels_of: NamespaceLabels
    existing_anti: dict[Pair, int] = field(default_factory=dict)
    affinity: dict[Pair, int] = field(default_factory=dict)
    anti_affinity: dict[Pair, int] = field(default_factory=dict)

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.terms,
            self.pod,
            self.ns_labels,
            self.labels_of,
            dict(self.existing_anti),
            dict(self.affinity),
            dict(self.anti_affinity),
        )

    def count_existing(self, existing: PodInfo, node: Node, delta: int) -> None:
        """Tally `existing`'s anti-affinity against the incoming pod ..."""
        for t in cached_terms(existing, NAME).anti_affinity:
            if t.matches(self.pod, self.ns_labels):
                _bump(self.existing_anti, node, t.topology_key, delta)

    def count_incoming(self, existing: Pod, node: Node, delta: int) -> None:
        """... and the incoming pod's affinity and anti-affinity against `existing`."""
        terms = self.terms
        if terms.affinity and matches_all(terms.affinity, existing, self.labels_of):
            for t in terms.affinity:
                _bump(self.affinity, node, t.topology_key, delta)
        for t in terms.anti_affinity:
            if t.matches_in(existing, self.labels_of):
                _bump(self.anti_affinity, node, t.topology_key, delta)

    def update(self, pod: PodInfo, node: Node, delta: int) -> None:
        self.count_existing(pod, node, delta)
        self.count_incoming(pod.pod, node, delta)


def pre_filter(
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    snapshot: Snapshot,
    labels_of: NamespaceLabels,
) -> Status:
    terms = pod_terms(pod)
    if terms.error:
        return unresolvable(f"parsing pod: {terms.error}")
    s = PreFilterState(terms, pod, labels_of(pod.metadata.namespace) or {}, labels_of)
    for info in snapshot.have_pods_with_required_anti_affinity:
        for existing in info.pods_with_required_anti_affinity:
            s.count_existing(existing, info.node, 1)
    if terms.affinity or terms.anti_affinity:
        count = s.count_incoming
        for info in nodes:
            node = info.node
            for existing in info.pods:
                count(existing.pod, node, 1)
    if not s.existing_anti and not terms.affinity and not terms.anti_affinity:
        return SKIP
    state.write(PRE_FILTER_KEY, s)
    return SUCCESS


def read_state(state: CycleState) -> PreFilterState | Status:
    return _helper.read_state(state, PRE_FILTER_KEY, PreFilterState, "PreFilter")


def _satisfies_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    terms = s.terms.affinity
    if not terms:
        return True
    pods_exist = True
    for t in terms:
        value = labels.get(t.topology_key)
        if value is None:
            return False  # every topology label must exist, self-affinity included
        if s.affinity.get((t.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first of a group of pods with affinity to each other: no pod anywhere matches yet,
    # and the pod matches its own terms.
    return not s.affinity and matches_all(terms, s.pod, s.labels_of)


def _violates(
    counts: Mapping[Pair, int], terms: tuple[AffinityTerm, ...], labels: Mapping[str, str]
) -> bool:
    for t in terms:
        value = labels.get(t.topology_key)
        if value is not None and counts.get((t.topology_key, value), 0) > 0:
            return True
    return False


def filter_node(s: PreFilterState, node: NodeInfo) -> Status:
    labels = node.node.labels
    if not _satisfies_affinity(s, labels):
        return unresolvable(ERR_AFFINITY)
    if s.anti_affinity and _violates(s.anti_affinity, s.terms.anti_affinity, labels):
        return unschedulable(ERR_ANTI_AFFINITY)
    if s.existing_anti and any(s.existing_anti.get(pair, 0) > 0 for pair in labels.items()):
        return unschedulable(ERR_EXISTING_ANTI_AFFINITY)
    return SUCCESS
