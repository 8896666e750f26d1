"""NodeSelector matching as component-helpers nodeaffinity does it.

Covers each operator, ANDed requirements and ORed terms, empty terms, unparsable terms (which
never match but leave the other terms alone), matchFields on metadata.name, and label key/value
validation.
"""

import pytest

from dra_operator.model import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, node_matches

LABELS = {"zone": "a", "gpu": "true", "cores": "64", "example.com/rack": "r7", "bad": "x1"}


def req(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=op, values=values)


def term(*exprs: NodeSelectorRequirement, fields: tuple[NodeSelectorRequirement, ...] = ()):
    return NodeSelectorTerm(match_expressions=exprs, match_fields=fields)


def sel(*terms: NodeSelectorTerm) -> NodeSelector:
    return NodeSelector(node_selector_terms=terms)


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        pytest.param(req("zone", "In", "a", "b"), True, id="in"),
        pytest.param(req("zone", "In", "b"), False, id="in-other-value"),
        pytest.param(req("missing", "In", "a"), False, id="in-missing-key"),
        pytest.param(req("zone", "NotIn", "b"), True, id="notin"),
        pytest.param(req("zone", "NotIn", "a"), False, id="notin-same-value"),
        pytest.param(req("missing", "NotIn", "a"), True, id="notin-missing-key"),
        pytest.param(req("gpu", "Exists"), True, id="exists"),
        pytest.param(req("missing", "Exists"), False, id="exists-missing"),
        pytest.param(req("missing", "DoesNotExist"), True, id="does-not-exist"),
        pytest.param(req("gpu", "DoesNotExist"), False, id="does-not-exist-present"),
        pytest.param(req("cores", "Gt", "32"), True, id="gt"),
        pytest.param(req("cores", "Gt", "64"), False, id="gt-equal"),
        pytest.param(req("cores", "Lt", "65"), True, id="lt"),
        pytest.param(req("cores", "Lt", "064"), False, id="lt-leading-zero-equal"),
        pytest.param(req("cores", "Lt", "+64"), False, id="lt-signed-is-no-label-value"),
        pytest.param(req("cores", "Gt", "-1"), False, id="gt-negative-is-no-label-value"),
        pytest.param(req("bad", "Gt", "1"), False, id="gt-label-not-integer"),
        pytest.param(req("missing", "Lt", "1"), False, id="lt-missing-key"),
        pytest.param(req("example.com/rack", "In", "r7"), True, id="prefixed-key"),
        pytest.param(req("zone", "Gt", "a"), False, id="invalid-gt-value"),
        pytest.param(req("zone", "Gt", "1", "2"), False, id="invalid-gt-two-values"),
        pytest.param(req("zone", "In"), False, id="invalid-in-without-values"),
        pytest.param(req("gpu", "Exists", "true"), False, id="invalid-exists-with-value"),
        pytest.param(req("zone", "Equals", "a"), False, id="invalid-operator"),
        pytest.param(req("-zone", "Exists"), False, id="invalid-key"),
        pytest.param(req("a/b/c", "Exists"), False, id="invalid-key-two-slashes"),
        pytest.param(req("zone", "NotIn", "not valid"), False, id="invalid-value"),
    ],
)
def test_label_requirement(requirement: NodeSelectorRequirement, expected: bool) -> None:
    assert node_matches("worker-1", LABELS, sel(term(requirement))) is expected


@pytest.mark.parametrize(
    ("fields", "node_name", "expected"),
    [
        pytest.param((req("metadata.name", "In", "worker-1"),), "worker-1", True, id="in"),
        pytest.param((req("metadata.name", "In", "worker-2"),), "worker-1", False, id="in-other"),
        pytest.param((req("metadata.name", "NotIn", "worker-2"),), "worker-1", True, id="notin"),
        pytest.param((req("metadata.name", "In", "a", "b"),), "a", False, id="two-values"),
        pytest.param((req("metadata.name", "Exists"),), "worker-1", False, id="exists-refused"),
        pytest.param((req("spec.x", "In", "worker-1"),), "worker-1", False, id="other-field"),
        pytest.param((req("spec.x", "NotIn", "worker-1"),), "worker-1", True, id="other-notin"),
        pytest.param((req("metadata.name", "In", "w"),), "", True, id="nameless-node-skips"),
    ],
)
def test_match_fields(fields: tuple[NodeSelectorRequirement, ...], node_name: str, expected: bool):
    assert node_matches(node_name, LABELS, sel(term(fields=fields))) is expected


def test_requirements_are_anded_and_terms_ored() -> None:
    both = term(req("zone", "In", "a"), req("gpu", "DoesNotExist"))
    assert not node_matches("n", LABELS, sel(both))
    assert node_matches("n", LABELS, sel(both, term(req("gpu", "Exists"))))
    with_field = term(req("zone", "In", "a"), fields=(req("metadata.name", "In", "m"),))
    assert not node_matches("n", LABELS, sel(with_field))


def test_empty_selector_and_empty_term_match_nothing() -> None:
    assert not node_matches("n", LABELS, sel())
    assert not node_matches("n", LABELS, sel(term()))


def test_invalid_term_does_not_spoil_the_others() -> None:
    invalid = term(req("zone", "Bogus"))
    assert node_matches("n", LABELS, sel(invalid, term(req("zone", "In", "a"))))
    half_invalid = term(req("zone", "In", "a"), req("zone", "Gt", "x"))
    assert not node_matches("n", LABELS, sel(half_invalid))
