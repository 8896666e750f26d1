"""NodeAffinity (PreFilter, Filter, PreScore, Score): nodeSelector and node affinity.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/nodeaffinity. Filter requires the
pod's `nodeSelector` and required node affinity, and the scheduler-enforced `addedAffinity`
(plugin args) when configured. PreFilter narrows the nodes when every required term names
nodes by `metadata.name In (...)`. Score sums the weights of the preferred terms a node matches
(the pod's and the added ones) and normalizes so that the best node scores 100.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    NodeScore,
    PreFilterResult,
    Status,
    error,
    unresolvable,
)
from dra_operator.controllers.scheduler.plugins._args import (
    PluginArgsError,
    as_mapping,
    check_known,
)
from dra_operator.controllers.scheduler.plugins._helper import default_normalize_score
from dra_operator.errors import InvalidObjectError
from dra_operator.model import (
    Node,
    NodeSelector,
    Pod,
    PreferredSchedulingTerm,
    node_matches,
    parse_node_affinity,
    term_is_valid,
    term_matches,
)

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_REJECT_POD = unresolvable(ERR_REASON_POD).with_plugin(NAME)
_REJECT_ENFORCED = unresolvable(ERR_REASON_ENFORCED).with_plugin(NAME)
_CONFLICT = unresolvable(ERR_REASON_CONFLICT).with_plugin(NAME)
_NAME_FIELD = "metadata.name"


def required_matches(pod: Pod, node: Node) -> bool:
    """`nodeSelector` and required node affinity (`RequiredNodeAffinity.Match`)."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.spec.node_selector.items()):
        return False
    required = pod.spec.required_node_affinity
    return required is None or node_matches(node.name, labels, required)


_POD_PREFERRED = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"


def _scored_terms(
    terms: Sequence[PreferredSchedulingTerm], path: str
) -> tuple[PreferredSchedulingTerm, ...]:
    """The terms that count (weight > 0, not empty); ValueError names an unparsable one."""
    kept = []
    for i, term in enumerate(terms):
        pref = term.preference
        if term.weight == 0 or (not pref.match_expressions and not pref.match_fields):
            continue
        if not term_is_valid(pref):
            raise ValueError(f"{path}[{i}].preference: invalid node selector requirement")
        kept.append(term)
    return tuple(kept)


def _preferred_score(terms: Sequence[PreferredSchedulingTerm], node: Node) -> int:
    return sum(t.weight for t in terms if term_matches(t.preference, node.name, node.labels))


def _named_nodes(selector: NodeSelector) -> frozenset[str] | None:
    """The node names the required terms allow, or None when some term does not name them."""
    names: set[str] = set()
    for term in selector.node_selector_terms:
        term_names: set[str] | None = None
        for req in term.match_fields:
            if req.key == _NAME_FIELD and req.operator == "In":
                values = set(req.values)
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class _PreScore:
    preferred: tuple[PreferredSchedulingTerm, ...]


class NodeAffinity:
    def __init__(
        self,
        added_required: NodeSelector | None,
        added_preferred: tuple[PreferredSchedulingTerm, ...],
    ) -> None:
        self._added_required = added_required
        self._added_preferred = added_preferred

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable:
        spec = pod.spec
        return spec.node_selector, spec.required_node_affinity, spec.preferred_node_affinity

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        required = pod.spec.required_node_affinity
        if required is None and self._added_required is None and not pod.spec.node_selector:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, True)
        if required is None or not required.node_selector_terms:
            return None, SUCCESS
        names = _named_nodes(required)
        if names is None:
            return None, SUCCESS
        if not names:
            return None, _CONFLICT
        return PreFilterResult(names), SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        n = node.node
        added = self._added_required
        if added is not None and not node_matches(n.name, n.labels, added):
            return _REJECT_ENFORCED
        return SUCCESS if required_matches(pod, n) else _REJECT_POD

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        try:
            preferred = _scored_terms(pod.spec.preferred_node_affinity, _POD_PREFERRED)
        except ValueError as e:
            return error(str(e)).with_plugin(NAME)
        if not pod.spec.preferred_node_affinity and not self._added_preferred:
            return SKIP
        state.write(_PRE_SCORE_KEY, _PreScore(preferred))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        pre = state.get(_PRE_SCORE_KEY)
        if not isinstance(pre, _PreScore):
            try:
                pre = _PreScore(_scored_terms(pod.spec.preferred_node_affinity, _POD_PREFERRED))
            except ValueError as e:
                return 0, error(str(e)).with_plugin(NAME)
        n = node.node
        return _preferred_score(self._added_preferred, n) + _preferred_score(
            pre.preferred, n
        ), SUCCESS

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        default_normalize_score(scores, reverse=False)
        return SUCCESS


def new(args: Mapping[str, object], handle: Handle) -> NodeAffinity:
    """NodeAffinityArgs: `addedAffinity`, a core/v1 NodeAffinity every pod must also meet."""
    check_known(args, "args", ("addedAffinity",))
    raw = args.get("addedAffinity")
    if raw is None:
        return NodeAffinity(None, ())
    path = "args.addedAffinity"
    try:
        required, preferred = parse_node_affinity(dict(as_mapping(raw, path)), path)
    except InvalidObjectError as e:
        raise PluginArgsError(str(e)) from e
    if required is not None:
        for i, term in enumerate(required.node_selector_terms):
            if not term_is_valid(term):
                raise PluginArgsError(
                    f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
                    f"[{i}]: invalid node selector requirement"
                )
    try:
        scored = _scored_terms(preferred, f"{path}.preferredDuringSchedulingIgnoredDuringExecution")
    except ValueError as e:
        raise PluginArgsError(str(e)) from e
    return NodeAffinity(required, scored)
