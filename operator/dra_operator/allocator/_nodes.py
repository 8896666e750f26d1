"""Node selection: does a slice or device with nodeName/allNodes/nodeSelector fit a node.

Upstream's `NodeMatches` precedence (nodeName, then allNodes, then nodeSelector); the selector
semantics are the model's `node_matches`. Upstream parses the selector strictly first
(`nodeaffinity.NewNodeSelector`), so a malformed one is an error here (callers turn it into
upstream's fatal texts) where the model's lenient matcher would just not match that term.
"""

from __future__ import annotations

from dra_operator.allocator._inputs import Node
from dra_operator.errors import AllocationInputError
from dra_operator.model import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from dra_operator.model import node_matches as matches


def node_matches(
    node: Node | None, node_name: str | None, all_nodes: bool | None, selector: NodeSelector | None
) -> bool:
    """Upstream's `NodeMatches`; raises AllocationInputError for a malformed selector."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        for term in selector.node_selector_terms:
            _validate_term(term)
        return node is not None and matches(node.name, node.labels, selector)
    return False


def _validate_term(term: NodeSelectorTerm) -> None:
    for req in term.match_expressions:
        _validate_requirement(req, fields=False)
    for req in term.match_fields:
        _validate_requirement(req, fields=True)


def _validate_requirement(req: NodeSelectorRequirement, *, fields: bool) -> None:
    if fields:
        if req.key != "metadata.name":
            raise AllocationInputError(f"{req.key}: not a supported field selector")
        if req.operator not in ("In", "NotIn"):
            raise AllocationInputError(f"{req.operator}: not a valid field selector operator")
        if len(req.values) != 1:
            raise AllocationInputError(f"{req.key}: values: must have one element")
        return
    if req.operator in ("In", "NotIn"):
        if not req.values:
            raise AllocationInputError(
                f"{req.key}: values: for 'in', 'notin' operators, values set can't be empty"
            )
    elif req.operator in ("Exists", "DoesNotExist"):
        if req.values:
            raise AllocationInputError(
                f"{req.key}: values: values set must be empty for exists and does not exist"
            )
    elif req.operator in ("Gt", "Lt"):
        if len(req.values) != 1 or not _is_int(req.values[0]):
            raise AllocationInputError(
                f"{req.key}: values: for 'Gt', 'Lt' operators, exactly one integer value is "
                "required"
            )
    else:
        raise AllocationInputError(f"{req.operator}: not a valid selector operator")


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True
