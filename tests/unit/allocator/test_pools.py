"""Pool gathering: generations, completeness, obsolete and invalid pools, node relevance.

Ported from upstream's pool-generation family; the last tests pin the search order
(lexicographic pools and slices, binding-condition pools last).
"""

from __future__ import annotations

import pytest
from allocator_builders import (
    NODE1,
    NODE2,
    PER_DEVICE,
    Case,
    Features,
    all_request,
    allocation,
    check,
    claim,
    device,
    device_class,
    local_node_selector,
    node,
    pool,
    request,
    result,
    slice_with_devices,
)

from dra_operator.allocator._pools import gather_pools as gather

A = "driver-a"
CLASS_A = device_class("class-a", A)
LOCAL = local_node_selector()
ONE = [claim("claim-0", request("req-0", "class-a"))]


def s(name: str, node_name: str, pool_name: str, *names: str, count: int = 1, gen: int = 1):
    return slice_with_devices(
        name, node_name, pool(pool_name, count, gen), A, *(device(n) for n in names)
    )


SCENARIOS = [
    pytest.param(
        Case(
            claims=ONE,
            classes=[CLASS_A],
            slices=[
                s("slice-1", NODE1, "pool-1", "device-1", count=2),
                s("slice-1-2", NODE1, "pool-1", "device-1", count=2),
            ],
            error="",
            expect=None,
        ),
        id="duplicate-slice",
    ),
    pytest.param(
        Case(
            claims=ONE,
            classes=[CLASS_A],
            slices=[s("slice-1", NODE1, "pool-1", "device-1", count=2)],
            expect=None,
        ),
        id="no-allocation-from-incomplete-pools",
    ),
    pytest.param(
        Case(
            claims=ONE,
            classes=[CLASS_A],
            slices=[
                s("slice-1", NODE1, "pool-1", "device-1", count=2),
                s("slice-2", NODE1, "pool-1", "device-1", count=2),
                s("slice-3", NODE1, "pool-2", "device-2"),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-2", "device-2"))],
        ),
        id="invalid-pool-is-ok-if-devices-can-be-allocated-from-other",
    ),
    pytest.param(
        Case(
            claims=ONE,
            classes=[CLASS_A],
            slices=[
                s("slice-1", NODE2, "pool-1", "device-1", count=2),
                s("slice-2", NODE1, "pool-1", "device-2", count=2),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-2"))],
        ),
        id="different-resourceslices-in-pool-can-target-different-nodes",
    ),
    pytest.param(
        Case(
            claims=ONE,
            classes=[CLASS_A],
            slices=[
                s("slice-1", NODE1, "pool-1", "device-1", count=2, gen=1),
                s("slice-2", NODE2, "pool-1", "device-2", count=2, gen=2),
            ],
            expect=None,
        ),
        id="multi-host-resource-pool-with-stale-slice-for-current-node",
    ),
    pytest.param(
        Case(
            claims=ONE,
            classes=[CLASS_A],
            slices=[
                s("slice-1", NODE1, "pool-1", "device-1", count=2),
                s("slice-1", NODE1, "pool-1", "device-2", count=2),
                s("slice-2", NODE2, "pool-1", "device-1", count=2, gen=2),
                s("slice-2", NODE2, "pool-1", "device-2", count=2, gen=2),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="multi-host-resource-pool-complete-update-from-node-1-to-node-2",
    ),
    pytest.param(
        Case(
            claims=ONE,
            classes=[CLASS_A],
            slices=[
                s("slice-1", NODE1, "pool-1", "device-1", count=2),
                s("slice-1", NODE1, "pool-1", "device-2", count=2),
                s("slice-2", NODE2, "pool-1", "device-1", count=2, gen=2),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="multi-host-resource-pool-incomplete-update-from-node-1-to-node-2",
    ),
    pytest.param(
        Case(
            claims=ONE,
            classes=[CLASS_A],
            slices=[
                s("slice-1", NODE2, "pool-1", "device-1", count=2),
                s("slice-1", NODE2, "pool-1", "device-2", count=2),
                s("slice-2", NODE1, "pool-1", "device-1", count=2, gen=2),
            ],
            expect=None,
        ),
        id="multi-host-resource-pool-incomplete-update-from-node-2-to-node-1",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", all_request("req-0", "class-a"))],
            classes=[CLASS_A],
            slices=[
                s("slice-1", NODE1, "pool-1", "device-1", count=2),
                s("slice-2", NODE2, "pool-1", "device-2", count=2),
            ],
            expect=[allocation(LOCAL, result("req-0", A, "pool-1", "device-1"))],
        ),
        id="allocation-mode-all-with-multi-host-resource-pool",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2))],
            classes=[CLASS_A],
            slices=[
                s("slice-1", NODE1, "pool-3", "device-1"),
                s("slice-2", NODE1, "pool-2", "device-1"),
                s("slice-3", NODE1, "pool-1", "device-1"),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-0", A, "pool-2", "device-1"),
                )
            ],
        ),
        id="lexicographical-sorting-pools",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2))],
            classes=[CLASS_A],
            slices=[
                s("slice-3", NODE1, "pool-1", "device-3", count=3),
                s("slice-2", NODE1, "pool-1", "device-2", count=3),
                s("slice-1", NODE1, "pool-1", "device-1", count=3),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-1", "device-1"),
                    result("req-0", A, "pool-1", "device-2"),
                )
            ],
        ),
        id="lexicographical-sorting-slices",
    ),
    pytest.param(
        Case(
            claims=[claim("claim-0", request("req-0", "class-a", 2))],
            classes=[CLASS_A],
            slices=[
                slice_with_devices(
                    "slice-1", NODE1, "pool-1", A, device("device-1", binding=["ready"])
                ),
                s("slice-2", NODE1, "pool-2", "device-1"),
                s("slice-3", NODE1, "pool-3", "device-1"),
            ],
            expect=[
                allocation(
                    LOCAL,
                    result("req-0", A, "pool-2", "device-1"),
                    result("req-0", A, "pool-3", "device-1"),
                )
            ],
        ),
        id="lexicographical-sorting-pools-with-binding-conditions",
    ),
]


@pytest.mark.parametrize("case", SCENARIOS)
def test_scenario(case: Case) -> None:
    check(case)


def test_invalid_pool_explains_itself_when_nothing_fits() -> None:
    """`duplicate-slice`: upstream errors "invalid resource pools were encountered" (per node)."""
    got = check(SCENARIOS[0].values[0])  # type: ignore[arg-type]
    assert got is not None and got.explanation is not None
    assert "invalid resource pools were encountered" in got.explanation.summary
    assert [str(p) for p in got.explanation.pools] == [
        "pool driver-a/pool-1: invalid (duplicate device name device-1), its devices are not used"
    ]


def test_per_device_node_selection_makes_a_slice_relevant_when_one_device_matches() -> None:
    piece = slice_with_devices(
        "slice-1",
        PER_DEVICE,
        "pool-1",
        A,
        device("device-1", node_name=NODE2),
        device("device-2", node_name=NODE1),
    )
    pools = gather([piece], node(), Features(partitionable_devices=True))
    assert [str(p.id) for p in pools] == ["driver-a/pool-1"]
    assert gather([piece], node(NODE1), Features()) == []


def test_malformed_slice_node_selector_is_fatal() -> None:
    from dra_operator.errors import AllocationInputError
    from dra_operator.model import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm

    bad = NodeSelector(
        node_selector_terms=(
            NodeSelectorTerm(
                match_expressions=(NodeSelectorRequirement(key="k", operator="Bogus"),)
            ),
        )
    )
    piece = slice_with_devices("slice-1", bad, "pool-1", A, device("device-1"))
    with pytest.raises(
        AllocationInputError, match="failed to perform node selection for slice slice-1"
    ):
        gather([piece], node(), Features())
