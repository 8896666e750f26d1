"""core/v1 pod affinity, anti-affinity and topology spread constraints from raw JSON."""

from __future__ import annotations

from dra_operator.model._parse_common import (
    Raw,
    as_int,
    as_object,
    child,
    list_of,
    opt_int,
    opt_object,
    opt_str,
    req_str,
    required,
    str_list,
    str_map,
    str_or_empty,
)
from dra_operator.model._pod_scheduling import (
    LabelSelector,
    LabelSelectorRequirement,
    PodAffinity,
    PodAffinityRules,
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)


def _req_int(raw: Raw, name: str, path: str) -> int:
    return as_int(required(raw, name, path), child(path, name))


def _requirement(value: object, path: str) -> LabelSelectorRequirement:
    raw = as_object(value, path)
    return LabelSelectorRequirement(
        key=req_str(raw, "key", path),
        operator=req_str(raw, "operator", path),
        values=str_list(raw, "values", path),
    )


def label_selector(value: object, path: str) -> LabelSelector:
    raw = as_object(value, path)
    return LabelSelector(
        match_labels=str_map(raw, "matchLabels", path),
        match_expressions=list_of(raw, "matchExpressions", path, _requirement),
    )


def _opt_selector(raw: Raw, name: str, path: str) -> LabelSelector | None:
    value = opt_object(raw, name, path)
    return None if value is None else label_selector(value, child(path, name))


def _term(value: object, path: str) -> PodAffinityTerm:
    raw = as_object(value, path)
    return PodAffinityTerm(
        label_selector=_opt_selector(raw, "labelSelector", path),
        namespaces=str_list(raw, "namespaces", path),
        namespace_selector=_opt_selector(raw, "namespaceSelector", path),
        topology_key=str_or_empty(raw, "topologyKey", path),
        match_label_keys=str_list(raw, "matchLabelKeys", path),
        mismatch_label_keys=str_list(raw, "mismatchLabelKeys", path),
    )


def _weighted(value: object, path: str) -> WeightedPodAffinityTerm:
    raw = as_object(value, path)
    term = opt_object(raw, "podAffinityTerm", path) or {}
    return WeightedPodAffinityTerm(
        weight=_req_int(raw, "weight", path), term=_term(term, child(path, "podAffinityTerm"))
    )


def _pod_affinity(raw: Raw | None, path: str) -> PodAffinity | None:
    if raw is None:
        return None
    return PodAffinity(
        required=list_of(raw, "requiredDuringSchedulingIgnoredDuringExecution", path, _term),
        preferred=list_of(raw, "preferredDuringSchedulingIgnoredDuringExecution", path, _weighted),
    )


def pod_affinity_rules(spec: Raw) -> PodAffinityRules | None:
    """`spec.affinity.podAffinity` and `.podAntiAffinity`; None when both are absent."""
    affinity = opt_object(spec, "affinity", "spec") or {}
    path = "spec.affinity"
    rules = PodAffinityRules(
        affinity=_pod_affinity(
            opt_object(affinity, "podAffinity", path), child(path, "podAffinity")
        ),
        anti_affinity=_pod_affinity(
            opt_object(affinity, "podAntiAffinity", path), child(path, "podAntiAffinity")
        ),
    )
    return rules if rules.any else None


def topology_spread_constraint(value: object, path: str) -> TopologySpreadConstraint:
    """One constraint (a pod's, or a scheduler profile's default one)."""
    raw = as_object(value, path)
    return TopologySpreadConstraint(
        max_skew=_req_int(raw, "maxSkew", path),
        topology_key=req_str(raw, "topologyKey", path),
        when_unsatisfiable=req_str(raw, "whenUnsatisfiable", path),
        label_selector=_opt_selector(raw, "labelSelector", path),
        min_domains=opt_int(raw, "minDomains", path),
        node_affinity_policy=opt_str(raw, "nodeAffinityPolicy", path),
        node_taints_policy=opt_str(raw, "nodeTaintsPolicy", path),
        match_label_keys=str_list(raw, "matchLabelKeys", path),
    )


def topology_spread_constraints(spec: Raw) -> tuple[TopologySpreadConstraint, ...]:
    return list_of(spec, "topologySpreadConstraints", "spec", topology_spread_constraint)
