"""Which controllers run (architecture §1, docs/coexistence.md).

Covers: all three controllers without --controllers, claims and eviction among them pausing
while kube-controller-manager holds its Lease; an explicit --controllers list keeps the start
order and never pauses.
"""

from __future__ import annotations

import pytest

from dra_operator.app import choose_controllers, yielding_controllers


@pytest.mark.parametrize(
    ("requested", "expected", "yielding"),
    [
        pytest.param(
            None,
            ["claims", "scheduler", "eviction", "poolstatus"],
            {"claims", "eviction", "poolstatus"},
            id="default-yields-to-kcm",
        ),
        pytest.param(
            frozenset({"eviction", "claims"}), ["claims", "eviction"], set(), id="explicit-wins"
        ),
        pytest.param(frozenset({"scheduler"}), ["scheduler"], set(), id="explicit-subset"),
    ],
)
def test_choose_controllers(
    requested: frozenset[str] | None, expected: list[str], yielding: set[str]
) -> None:
    assert choose_controllers(requested) == expected
    assert yielding_controllers(requested) == yielding
