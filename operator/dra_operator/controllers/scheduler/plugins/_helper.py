"""Score helpers shared by plugins (kube-scheduler v1.37.2, plugins/helper/normalize_score.go)."""

from __future__ import annotations

from dra_operator.controllers.scheduler.framework import MAX_NODE_SCORE, NodeScore


def default_normalize_score(scores: list[NodeScore], *, reverse: bool) -> None:
    """Rescale in place so the highest raw score becomes 100; `reverse` flips the scale.

    Integer division as upstream's. When every score is 0 they stay 0, or all become 100 with
    `reverse` (no node is worse than another).
    """
    highest = max((s.score for s in scores), default=0)
    if highest == 0:
        if reverse:
            for s in scores:
                s.score = MAX_NODE_SCORE
        return
    for s in scores:
        scaled = MAX_NODE_SCORE * s.score // highest
        s.score = MAX_NODE_SCORE - scaled if reverse else scaled
