"""A pod's (anti-)affinity terms, compiled once: kube-scheduler's `framework.AffinityTerm`.

A term matches a pod when the pod's namespace is one the term names (or, with no names and no
namespace selector, the term owner's own) or its namespace's labels match the term's namespace
selector, and the pod's labels match the term's label selector.

Upstream turns the incoming pod's namespace selector into names once per cycle by listing
namespaces; here the namespace of each pod looked at is asked for its labels instead, which
selects the same namespaces.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework import PodInfo
from dra_operator.model import (
    Pod,
    PodAffinityTerm,
    Selector,
    SelectorError,
    WeightedPodAffinityTerm,
    compile_selector,
)

NamespaceLabels = Callable[[str], Mapping[str, str] | None]
"""Labels of a namespace by name, None when it does not exist."""


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector

    def matches(self, pod: Pod, ns_labels: Mapping[str, str]) -> bool:
        """`pod` is selected, `ns_labels` being its namespace's labels (empty when unknown).

        How upstream matches an existing pod's term against the incoming pod.
        """
        if pod.metadata.namespace in self.namespaces or self.namespace_selector.matches(ns_labels):
            return self.selector.matches(pod.metadata.labels)
        return False

    def matches_in(self, pod: Pod, labels_of: NamespaceLabels) -> bool:
        """`pod` is selected, its namespace's labels looked up only when the names do not say.

        How upstream matches the incoming pod's terms (selector merged into names) against
        existing pods: an unknown namespace is selected only by a select-all selector.
        """
        ns = self.namespace_selector
        if not (pod.metadata.namespace in self.namespaces or ns.everything):
            if ns.nothing:
                return False
            labels = labels_of(pod.metadata.namespace)
            if labels is None or not ns.matches(labels):
                return False
        return self.selector.matches(pod.metadata.labels)


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodTerms:
    """Required and preferred terms of one pod; each list empty where its parse failed."""

    affinity: tuple[AffinityTerm, ...] = ()
    anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    error: str = ""  # the first parse error, for the incoming pod's PreFilter


NO_TERMS = PodTerms()


def _term(owner: Pod, term: PodAffinityTerm) -> AffinityTerm:
    if not term.namespaces and term.namespace_selector is None:
        names = frozenset((owner.metadata.namespace,))
    else:
        names = frozenset(term.namespaces)
    return AffinityTerm(
        names,
        compile_selector(term.label_selector),
        term.topology_key,
        compile_selector(term.namespace_selector),
    )


def pod_terms(pod: Pod) -> PodTerms:
    """Compile `pod`'s terms; a list with an invalid selector is dropped, as upstream does."""
    rules = pod.spec.pod_affinity
    if rules is None:
        return NO_TERMS
    errors: list[str] = []

    def required(terms: tuple[PodAffinityTerm, ...], what: str) -> tuple[AffinityTerm, ...]:
        try:
            return tuple(_term(pod, t) for t in terms)
        except SelectorError as e:
            errors.append(f"{what}: {e}")
            return ()

    def weighted(terms: tuple[WeightedPodAffinityTerm, ...], what: str) -> tuple[WeightedTerm, ...]:
        try:
            return tuple(WeightedTerm(_term(pod, w.term), w.weight) for w in terms)
        except SelectorError as e:
            errors.append(f"{what}: {e}")
            return ()

    aff, anti = rules.affinity, rules.anti_affinity
    result = PodTerms(
        affinity=required(aff.required, "requiredAffinityTerms") if aff else (),
        anti_affinity=required(anti.required, "requiredAntiAffinityTerms") if anti else (),
        preferred_affinity=weighted(aff.preferred, "preferredAffinityTerms") if aff else (),
        preferred_anti_affinity=weighted(anti.preferred, "preferredAntiAffinityTerms")
        if anti
        else (),
    )
    if errors:
        return PodTerms(
            result.affinity,
            result.anti_affinity,
            result.preferred_affinity,
            result.preferred_anti_affinity,
            errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]",
        )
    return result


def cached_terms(info: PodInfo, key: str) -> PodTerms:
    """An existing pod's terms, compiled on first use and kept on its PodInfo."""
    found = info.extra.get(key)
    if isinstance(found, PodTerms):
        return found
    terms = pod_terms(info.pod)
    info.extra[key] = terms
    return terms


def matches_all(terms: tuple[AffinityTerm, ...], pod: Pod, labels_of: NamespaceLabels) -> bool:
    """Upstream's podMatchesAllAffinityTerms: false for no terms."""
    return bool(terms) and all(t.matches_in(pod, labels_of) for t in terms)
