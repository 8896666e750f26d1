"""Helpers shared by plugins: score normalisation (kube-scheduler v1.37.2,
plugins/helper/normalize_score.go) and reading what an earlier extension point wrote."""

from __future__ import annotations

from typing import TypeVar

from dra_operator.controllers.scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    NodeScore,
    Status,
    error,
)

S = TypeVar("S")


def read_state(state: CycleState, key: str, kind: type[S], point: str) -> S | Status:
    """The `kind` that extension point `point` wrote under `key`, or the error upstream's
    plugins return when it did not run (`reading "<key>" from cycleState: <point> did not
    run`, as interpodaffinity's and podtopologyspread's getPreFilterState/getPreScoreState)."""
    found = state.get(key)
    if isinstance(found, kind):
        return found
    return error(f'reading "{key}" from cycleState: {point} did not run')


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
