"""The shared score normalization, upstream's TestDefaultNormalizeScore (plugins/helper)."""

from __future__ import annotations

import pytest

from dra_operator.controllers.scheduler.framework import NodeScore
from dra_operator.controllers.scheduler.plugins._helper import default_normalize_score


@pytest.mark.parametrize(
    ("reverse", "scores", "expected"),
    [
        pytest.param(False, [1, 2, 3, 4], [25, 50, 75, 100], id="case_0"),
        pytest.param(True, [1, 2, 3, 4], [75, 50, 25, 0], id="case_1"),
        pytest.param(False, [1000, 10, 20, 30], [100, 1, 2, 3], id="case_2"),
        pytest.param(True, [1000, 10, 20, 30], [0, 99, 98, 97], id="case_3"),
        pytest.param(False, [1, 1, 1, 1], [100, 100, 100, 100], id="case_4"),
        pytest.param(False, [1000, 1, 1, 1], [100, 0, 0, 0], id="case_5"),
        pytest.param(True, [0, 1, 1, 1], [100, 0, 0, 0], id="case_6"),
        pytest.param(False, [0, 0, 0, 0], [0, 0, 0, 0], id="case_7"),
        pytest.param(True, [0, 0, 0, 0], [100, 100, 100, 100], id="case_8"),
    ],
)
def test_default_normalize_score(reverse: bool, scores: list[int], expected: list[int]) -> None:
    node_scores = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    default_normalize_score(node_scores, reverse=reverse)
    assert [s.score for s in node_scores] == expected
