"""The FailedScheduling message: why no node fits, counted per reason, as kube-scheduler says it.

Upstream's `FitError` text is `0/<nodes> nodes are available: <count> <reason>, ...` with the
"<count> <reason>" strings sorted, or the PreFilter message alone when the pod failed before any
node was looked at. DynamicResources' own node reason (`cannot allocate all claims`) is replaced
by the allocator's explanation of the first claim request that is short of devices, so the
event says *what* is missing on how many nodes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from dra_operator.allocator import Explanation

NO_NODES = "no nodes available to schedule pods"
NOT_AVAILABLE_ON_NODE = "resourceclaim not available on the node"
"""An allocated claim whose node selector does not admit the node (upstream's text)."""


def claim_failure(explanation: Explanation, extended: Mapping[str, str] | None = None) -> str:
    """One node's reason from the allocator's explanation for that node.

    A request of the special claim for extended resources is named by its resource
    (`extended`: request name -> extended resource name).
    """
    short = [r for r in explanation.requests if r.is_short]
    if short:
        first = short[0]
        claim = first.claim.rpartition("/")[2]
        if extended and first.request in extended:
            return f"cannot allocate extended resource {extended[first.request]} ({first})"
        return f"{_CLAIM_PREFIX}{claim} ({first})"
    return f"cannot allocate all claims ({explanation.summary})"


_CLAIM_PREFIX = "cannot allocate claim "


def renamed_reason(reason: str, old: Sequence[str], new: Sequence[str]) -> str | None:
    """`reason`, given for claims named `old`, as it reads for alike claims named `new`.

    Only the claim a short request belongs to is named in a place known to be safe to
    substitute; None when `reason` names an old claim anywhere else (a constraint summary).
    """
    if tuple(old) == tuple(new):
        return reason
    for before, after in zip(old, new, strict=True):
        prefix = f"{_CLAIM_PREFIX}{before} ("
        if reason.startswith(prefix):
            return f"{_CLAIM_PREFIX}{after} (" + reason[len(prefix) :]
    if any(name in reason for name in old):
        return None
    return reason


def fit_error(node_count: int, reasons: Iterable[Iterable[str]]) -> str:
    """The message for `node_count` nodes, given each rejected node's reasons."""
    if node_count == 0:
        return NO_NODES
    histogram: Counter[str] = Counter()
    for node_reasons in reasons:
        histogram.update(set(node_reasons))
    text = f"0/{node_count} nodes are available"
    if not histogram:
        return text
    return text + ": " + ", ".join(sorted(f"{n} {r}" for r, n in histogram.items())) + "."


def prefilter_error(node_count: int, message: str) -> str:
    """The message when the pod failed before node filtering (PreFilter)."""
    return f"0/{node_count} nodes are available: {message}."
