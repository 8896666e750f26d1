"""InterPodAffinity's PreScore, Score and NormalizeScore (kube-scheduler v1.37.2).

PreScore sums weights per topology pair: the incoming pod's preferred affinity terms add and its
preferred anti-affinity terms subtract, for each existing pod they select; existing pods' required
affinity terms that select the incoming pod add `hardPodAffinityWeight`, their preferred terms
add or subtract their weight. A node scores the sum over the pairs of its labels; NormalizeScore
maps the lowest to 0 and the highest to 100.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    CycleState,
    NodeInfo,
    NodeScore,
    PodInfo,
    Snapshot,
    Status,
    error,
)
from dra_operator.controllers.scheduler.plugins import _helper
from dra_operator.controllers.scheduler.plugins.interpodaffinity._filtering import NAME
from dra_operator.controllers.scheduler.plugins.interpodaffinity._terms import (
    AffinityTerm,
    NamespaceLabels,
    PodTerms,
    WeightedTerm,
    cached_terms,
    pod_terms,
)
from dra_operator.model import Pod

PRE_SCORE_KEY = "PreScore" + NAME

TopologyScore = dict[str, dict[str, int]]  # topology key -> value -> summed weight


@dataclass(frozen=True, slots=True)
class PreScoreState:
    topology_score: TopologyScore


@dataclass(frozen=True, slots=True)
class ScoreArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def _add(score: TopologyScore, key: str, labels: Mapping[str, str], amount: int) -> None:
    value = labels.get(key)
    if value is not None:
        by_value = score.setdefault(key, {})
        by_value[value] = by_value.get(value, 0) + amount


class _Scorer:
    """Accumulates one cycle's topology score; see the module docstring."""

    def __init__(self, args: ScoreArgs, pod: Pod, terms: PodTerms, labels_of: NamespaceLabels):
        self.args = args
        self.pod = pod
        self.terms = terms
        self.labels_of = labels_of
        self.ns_labels = labels_of(pod.metadata.namespace) or {}
        self.score: TopologyScore = {}

    def _incoming(
        self, terms: tuple[WeightedTerm, ...], other: Pod, labels: Mapping[str, str], sign: int
    ) -> None:
        for w in terms:
            if w.term.matches_in(other, self.labels_of):
                _add(self.score, w.term.topology_key, labels, w.weight * sign)

    def _existing(
        self, terms: tuple[WeightedTerm, ...], labels: Mapping[str, str], sign: int
    ) -> None:
        for w in terms:
            if w.term.matches(self.pod, self.ns_labels):
                _add(self.score, w.term.topology_key, labels, w.weight * sign)

    def _hard(self, terms: tuple[AffinityTerm, ...], labels: Mapping[str, str]) -> None:
        for t in terms:
            if t.matches(self.pod, self.ns_labels):
                _add(self.score, t.topology_key, labels, self.args.hard_pod_affinity_weight)

    def existing_pod(self, existing: PodInfo, node: NodeInfo) -> None:
        labels = node.node.labels
        if not labels:
            return
        self._incoming(self.terms.preferred_affinity, existing.pod, labels, 1)
        self._incoming(self.terms.preferred_anti_affinity, existing.pod, labels, -1)
        theirs = cached_terms(existing, NAME)
        if self.args.hard_pod_affinity_weight > 0:
            self._hard(theirs.affinity, labels)
        self._existing(theirs.preferred_affinity, labels, 1)
        self._existing(theirs.preferred_anti_affinity, labels, -1)


def _has_preferred(pod: Pod) -> bool:
    rules = pod.spec.pod_affinity
    if rules is None:
        return False
    aff, anti = rules.affinity, rules.anti_affinity
    return bool((aff is not None and aff.preferred) or (anti is not None and anti.preferred))


def pre_score(
    state: CycleState, pod: Pod, snapshot: Snapshot, args: ScoreArgs, labels_of: NamespaceLabels
) -> Status:
    has_constraints = _has_preferred(pod)
    if args.ignore_preferred_terms_of_existing_pods and not has_constraints:
        return SKIP
    terms = pod_terms(pod)
    if terms.error:
        return error(f"failed to parse pod: {terms.error}")
    scorer = _Scorer(args, pod, terms, labels_of)
    # Without preferred terms of its own, only pods with affinity can change the score.
    nodes = snapshot.node_infos if has_constraints else snapshot.have_pods_with_affinity
    for info in nodes:
        for existing in info.pods if has_constraints else info.pods_with_affinity:
            scorer.existing_pod(existing, info)
    if not scorer.score:
        return SKIP
    state.write(PRE_SCORE_KEY, PreScoreState(scorer.score))
    return SUCCESS


def read_state(state: CycleState) -> PreScoreState | Status:
    return _helper.read_state(state, PRE_SCORE_KEY, PreScoreState, "PreScore")


def score_node(s: PreScoreState, node: NodeInfo) -> int:
    labels = node.node.labels
    total = 0
    for key, by_value in s.topology_score.items():
        value = labels.get(key)
        if value is not None:
            total += by_value.get(value, 0)
    return total


def normalize(s: PreScoreState, scores: list[NodeScore]) -> None:
    if not s.topology_score or not scores:
        return
    low = min(n.score for n in scores)
    spread = max(n.score for n in scores) - low
    for n in scores:
        # Upstream scales in float64 and truncates.
        n.score = int(MAX_NODE_SCORE * ((n.score - low) / spread)) if spread > 0 else 0
