"""Which controllers run (architecture §1, "Living beside upstream").

Covers: all three controllers on a bare control plane; claims and eviction left to
kube-controller-manager when it runs; an explicit --controllers list wins either way and keeps
the start order.
"""

from __future__ import annotations

import pytest

from dra_operator.app import choose_controllers


@pytest.mark.parametrize(
    ("requested", "upstream", "expected"),
    [
        pytest.param(None, False, ["claims", "scheduler", "eviction"], id="bare-control-plane"),
        pytest.param(None, True, ["scheduler"], id="beside-kube-controller-manager"),
        pytest.param(
            frozenset({"eviction", "claims"}), True, ["claims", "eviction"], id="explicit-wins"
        ),
        pytest.param(frozenset({"scheduler"}), False, ["scheduler"], id="explicit-subset"),
    ],
)
def test_choose_controllers(
    requested: frozenset[str] | None, upstream: bool, expected: list[str]
) -> None:
    assert choose_controllers(requested, upstream) == expected
