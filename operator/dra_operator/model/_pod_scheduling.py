"""Pod affinity, anti-affinity and topology spread constraints (core/v1), and label selectors.

A `LabelSelector` is the API shape; `Selector` is what it compiles to (apimachinery's
`metav1.LabelSelectorAsSelector`): a nil selector selects nothing, an empty one everything, and a
selector the API server would have refused (unknown operator, values where none belong or none
where some do, a bad key or value) raises `SelectorError`, as upstream returns an error. Compiled
selectors are cached per `LabelSelector`, so matching a pod costs a few dict lookups.

`matchLabelKeys` / `mismatchLabelKeys` of a pod affinity term are kept as read: the API server
merges them into the term's `labelSelector` when the pod is created (MatchLabelKeysInPodAffinity),
and kube-scheduler reads only the merged selector. A topology spread constraint's
`matchLabelKeys` is merged by the scheduler itself (PodTopologySpread does it per cycle).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

from dra_operator.model._frozen import FrozenMap
from dra_operator.model._nodeaffinity import is_label_key, is_label_value

IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "In", "NotIn", "Exists", "DoesNotExist"


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelector:
    """metav1.LabelSelector: the match labels and expressions are ANDed."""

    match_labels: FrozenMap[str, str] = field(default_factory=FrozenMap)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()


class SelectorError(ValueError):
    """A label selector that apimachinery refuses to compile."""


@dataclass(frozen=True, slots=True)
class Selector:
    """A compiled selector: `requirements` ANDed; `nothing` selects no set of labels at all."""

    requirements: tuple[tuple[str, str, frozenset[str]], ...] = ()
    nothing: bool = False

    @property
    def everything(self) -> bool:
        """No requirement: every label set matches (apimachinery's `Selector.Empty()`)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        # Hot: called for every pod against every term; read a FrozenMap's dict directly.
        get = labels._data.get if type(labels) is FrozenMap else labels.get
        for key, op, values in self.requirements:
            value = get(key)
            if op == IN:
                if value is None or value not in values:
                    return False
            elif op == NOT_IN:
                if value is not None and value in values:
                    return False
            elif op == EXISTS:
                if value is None:
                    return False
            elif value is not None:  # DoesNotExist
                return False
        return True

    def with_labels(self, labels: Mapping[str, str]) -> Selector:
        """`labels` as equality requirements ANDed in front of this selector's."""
        if self.nothing:
            return self
        added = tuple((k, IN, frozenset((v,))) for k, v in sorted(labels.items()))
        return Selector(added + self.requirements)


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
"""apimachinery's message for a bad label value, as kube-scheduler reports it."""


def _requirement(key: str, op: str, values: tuple[str, ...]) -> tuple[str, str, frozenset[str]]:
    if not is_label_key(key):
        raise SelectorError(f"invalid label key {key!r}")
    if op in (IN, NOT_IN):
        if not values:
            raise SelectorError(f"{key}: values must be non-empty for {op}")
        for i, v in enumerate(values):
            if not is_label_value(v):
                raise SelectorError(f'values[{i}][{key}]: Invalid value: "{v}": {_VALUE_RULE}')
    elif op in (EXISTS, DOES_NOT_EXIST):
        if values:
            raise SelectorError(f"{key}: values must be empty for {op}")
    else:
        raise SelectorError(f"{key}: {op!r} is not a valid label selector operator")
    return key, op, frozenset(values)


@functools.lru_cache(maxsize=4096)
def compile_selector(selector: LabelSelector | None) -> Selector:
    """`metav1.LabelSelectorAsSelector`; raises `SelectorError` where upstream errs."""
    if selector is None:
        return NOTHING
    reqs = [_requirement(k, IN, (v,)) for k, v in selector.match_labels.items()]
    reqs += [_requirement(r.key, r.operator, r.values) for r in selector.match_expressions]
    # apimachinery sorts requirements by key; order does not change the verdict.
    return Selector(tuple(sorted(reqs, key=lambda r: r[0])))


@dataclass(frozen=True, slots=True, kw_only=True)
class PodAffinityTerm:
    """One pod (anti-)affinity term; namespaces empty and no selector mean the pod's own."""

    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    topology_key: str = ""
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True, kw_only=True)
class PodAffinity:
    """`podAffinity` or `podAntiAffinity`: required terms ANDed, preferred ones weighted."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PodAffinityRules:
    """`spec.affinity`'s pod parts; None where the API object has no such field."""

    affinity: PodAffinity | None = None
    anti_affinity: PodAffinity | None = None

    @property
    def any(self) -> bool:
        """Either part is present: the pod goes on NodeInfo's pods-with-affinity list."""
        return self.affinity is not None or self.anti_affinity is not None

    @property
    def required_anti_affinity(self) -> bool:
        """... and this puts it on the pods-with-required-anti-affinity list too."""
        return self.anti_affinity is not None and bool(self.anti_affinity.required)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySpreadConstraint:
    """`spec.topologySpreadConstraints[]`; None where unset (the plugin applies defaults)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule, ScheduleAnyway
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None  # Honor, Ignore
    node_taints_policy: str | None = None  # Honor, Ignore
    match_label_keys: tuple[str, ...] = ()
