"""Pod affinity, anti-affinity and topology spread constraints: parsing and label selectors.

Covers the parse of every field of `spec.affinity.podAffinity`/`podAntiAffinity` and
`spec.topologySpreadConstraints`, the presence flags NodeInfo's lists use, and label selector
compilation and matching as apimachinery's `LabelSelectorAsSelector` does it (nil selects
nothing, empty selects everything, invalid selectors are errors).
"""

from typing import Any

import pytest

from dra_operator.errors import InvalidObjectError
from dra_operator.model import (
    FrozenMap,
    LabelSelector,
    LabelSelectorRequirement,
    PodAffinityTerm,
    SelectorError,
    TopologySpreadConstraint,
    compile_selector,
    parse_pod,
)


def _pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c"}], **spec},
    }


def test_pod_affinity_and_anti_affinity_are_parsed() -> None:
    term = {
        "labelSelector": {
            "matchLabels": {"app": "db"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
        },
        "namespaces": ["x", "y"],
        "namespaceSelector": {"matchLabels": {"team": "t"}},
        "topologyKey": "topology.kubernetes.io/zone",
        "matchLabelKeys": ["rev"],
        "mismatchLabelKeys": ["tenant"],
    }
    pod = parse_pod(
        _pod(
            {
                "affinity": {
                    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 7, "podAffinityTerm": {"topologyKey": "h"}}
                        ]
                    },
                }
            }
        )
    )
    rules = pod.spec.pod_affinity
    assert rules is not None and rules.affinity is not None and rules.anti_affinity is not None
    assert rules.affinity.required == (
        PodAffinityTerm(
            label_selector=LabelSelector(
                match_labels=FrozenMap({"app": "db"}),
                match_expressions=(
                    LabelSelectorRequirement(key="tier", operator="In", values=("a", "b")),
                ),
            ),
            namespaces=("x", "y"),
            namespace_selector=LabelSelector(match_labels=FrozenMap({"team": "t"})),
            topology_key="topology.kubernetes.io/zone",
            match_label_keys=("rev",),
            mismatch_label_keys=("tenant",),
        ),
    )
    assert rules.affinity.preferred == ()
    assert rules.anti_affinity.required == ()
    (weighted,) = rules.anti_affinity.preferred
    assert weighted.weight == 7 and weighted.term == PodAffinityTerm(topology_key="h")
    assert rules.any and not rules.required_anti_affinity


def test_no_pod_affinity_is_none_but_node_affinity_alone_is_not_pod_affinity() -> None:
    assert parse_pod(_pod({})).spec.pod_affinity is None
    node_only: dict[str, Any] = {"affinity": {"nodeAffinity": {}}}
    assert parse_pod(_pod(node_only)).spec.pod_affinity is None


def test_an_empty_anti_affinity_still_counts_as_affinity_but_not_as_required() -> None:
    rules = parse_pod(_pod({"affinity": {"podAntiAffinity": {}}})).spec.pod_affinity
    assert rules is not None and rules.any and not rules.required_anti_affinity
    required = {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "h"}]}
    rules = parse_pod(_pod({"affinity": {"podAntiAffinity": required}})).spec.pod_affinity
    assert rules is not None and rules.required_anti_affinity


def test_topology_spread_constraints_are_parsed_with_unset_fields_as_none() -> None:
    spec = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 2,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "a"}},
                "minDomains": 3,
                "nodeAffinityPolicy": "Ignore",
                "nodeTaintsPolicy": "Honor",
                "matchLabelKeys": ["pod-template-hash"],
            },
            {"maxSkew": 1, "topologyKey": "h", "whenUnsatisfiable": "ScheduleAnyway"},
        ]
    }
    assert parse_pod(_pod(spec)).spec.topology_spread_constraints == (
        TopologySpreadConstraint(
            max_skew=2,
            topology_key="zone",
            when_unsatisfiable="DoNotSchedule",
            label_selector=LabelSelector(match_labels=FrozenMap({"app": "a"})),
            min_domains=3,
            node_affinity_policy="Ignore",
            node_taints_policy="Honor",
            match_label_keys=("pod-template-hash",),
        ),
        TopologySpreadConstraint(max_skew=1, topology_key="h", when_unsatisfiable="ScheduleAnyway"),
    )


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        pytest.param(
            {"topologySpreadConstraints": [{"topologyKey": "z", "whenUnsatisfiable": "X"}]},
            "spec.topologySpreadConstraints[0].maxSkew",
            id="maxSkew missing",
        ),
        pytest.param(
            {
                "affinity": {
                    "podAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": "1"}]
                    }
                }
            },
            "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            id="weight not an integer",
        ),
    ],
)
def test_malformed_fields_name_their_path(spec: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidObjectError, match=path.replace("[", r"\[").replace("]", r"\]")):
        parse_pod(_pod(spec))


def _sel(labels: dict[str, str] | None = None, *exprs: tuple[str, str, tuple[str, ...]]) -> Any:
    return LabelSelector(
        match_labels=FrozenMap(labels or {}),
        match_expressions=tuple(
            LabelSelectorRequirement(key=k, operator=op, values=v) for k, op, v in exprs
        ),
    )


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        pytest.param(None, {"a": "1"}, False, id="nil selects nothing"),
        pytest.param(_sel(), {}, True, id="empty selects everything"),
        pytest.param(_sel({"a": "1"}), {"a": "1", "b": "2"}, True, id="matchLabels subset"),
        pytest.param(_sel({"a": "1"}), {"a": "2"}, False, id="matchLabels other value"),
        pytest.param(_sel({}, ("a", "In", ("1", "2"))), {"a": "2"}, True, id="In"),
        pytest.param(_sel({}, ("a", "In", ("1",))), {}, False, id="In absent"),
        pytest.param(_sel({}, ("a", "NotIn", ("1",))), {}, True, id="NotIn absent"),
        pytest.param(_sel({}, ("a", "NotIn", ("1",))), {"a": "1"}, False, id="NotIn listed"),
        pytest.param(_sel({}, ("a", "Exists", ())), {"a": ""}, True, id="Exists"),
        pytest.param(_sel({}, ("a", "DoesNotExist", ())), {"a": "x"}, False, id="DoesNotExist"),
        pytest.param(
            _sel({"b": "2"}, ("a", "Exists", ())), {"a": "1"}, False, id="labels and expr AND"
        ),
    ],
)
def test_selector_matching(selector: Any, labels: dict[str, str], expected: bool) -> None:
    assert compile_selector(selector).matches(labels) is expected


@pytest.mark.parametrize(
    "selector",
    [
        pytest.param(_sel({}, ("a", "In", ())), id="In without values"),
        pytest.param(_sel({}, ("a", "Exists", ("x",))), id="Exists with values"),
        pytest.param(_sel({}, ("a", "Gt", ("1",))), id="Gt is not a label selector operator"),
        pytest.param(_sel({"-bad": "1"}), id="invalid key"),
        pytest.param(_sel({"a": "not valid!"}), id="invalid value"),
    ],
)
def test_invalid_selectors_raise(selector: LabelSelector) -> None:
    with pytest.raises(SelectorError):
        compile_selector(selector)


def test_with_labels_ands_equalities_and_keeps_nothing() -> None:
    base = compile_selector(_sel({}, ("tier", "Exists", ())))
    merged = base.with_labels({"rev": "7"})
    assert merged.matches({"tier": "x", "rev": "7"})
    assert not merged.matches({"tier": "x", "rev": "8"})
    assert compile_selector(None).with_labels({"a": "1"}).nothing
    assert compile_selector(_sel()).everything and not compile_selector(None).everything
