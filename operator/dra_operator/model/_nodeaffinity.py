"""Kubernetes NodeSelector matching (component-helpers `scheduling/corev1/nodeaffinity`).

Terms are ORed and the requirements inside a term ANDed. A term with neither expressions nor
fields matches nothing. A term that upstream cannot parse (unknown operator, bad label key or
value, wrong value count, a non-integer for Gt/Lt, a field operator other than In/NotIn) never
matches, while the other terms are still tried. `matchFields` sees only `metadata.name`, and
upstream skips field requirements altogether when the node has no name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from dra_operator.model._types import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_INT = re.compile(r"^[+-]?[0-9]+$")


def is_label_key(key: str) -> bool:
    """`validation.IsQualifiedName`: [prefix/]name, prefix a DNS subdomain."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_NAME.match(name))


def is_label_value(value: str) -> bool:
    return value == "" or (len(value) <= 63 and bool(_NAME.match(value)))


def _int64(text: str) -> int | None:
    """`strconv.ParseInt(text, 10, 64)`, or None where it fails."""
    if not _INT.match(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _is_valid_label_requirement(req: NodeSelectorRequirement) -> bool:
    if not is_label_key(req.key) or not all(is_label_value(v) for v in req.values):
        return False
    op, n = req.operator, len(req.values)
    if op in ("In", "NotIn"):
        return n > 0
    if op in ("Exists", "DoesNotExist"):
        return n == 0
    if op in ("Gt", "Lt"):
        return n == 1 and _int64(req.values[0]) is not None
    return False


def _label_matches(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    has = req.key in labels
    op = req.operator
    if op == "In":
        return has and labels[req.key] in req.values
    if op == "NotIn":
        return not has or labels[req.key] not in req.values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if not has:
        return False
    actual, bound = _int64(labels[req.key]), _int64(req.values[0])
    if actual is None or bound is None:
        return False
    return actual > bound if op == "Gt" else actual < bound


def _is_valid_field_requirement(req: NodeSelectorRequirement) -> bool:
    return req.operator in ("In", "NotIn") and len(req.values) == 1


def _field_matches(req: NodeSelectorRequirement, fields: Mapping[str, str]) -> bool:
    equal = fields.get(req.key, "") == req.values[0]
    return equal if req.operator == "In" else not equal


def term_is_valid(term: NodeSelectorTerm) -> bool:
    """Whether upstream can parse every requirement of `term` (a preferred term must be)."""
    return all(_is_valid_label_requirement(r) for r in term.match_expressions) and all(
        _is_valid_field_requirement(r) for r in term.match_fields
    )


def term_matches(term: NodeSelectorTerm, node_name: str, node_labels: Mapping[str, str]) -> bool:
    """One term: all its requirements hold; empty or unparsable terms never match."""
    if not term.match_expressions and not term.match_fields:
        return False
    if not term_is_valid(term):
        return False
    if not all(_label_matches(r, node_labels) for r in term.match_expressions):
        return False
    if term.match_fields and node_name:
        fields = {"metadata.name": node_name}
        return all(_field_matches(r, fields) for r in term.match_fields)
    return True


def node_matches(node_name: str, node_labels: Mapping[str, str], selector: NodeSelector) -> bool:
    """Whether a node satisfies `selector` (a required node affinity or an allocation's)."""
    return any(term_matches(t, node_name, node_labels) for t in selector.node_selector_terms)
