"""Device invariants: published in a complete pool; not allocated beyond admin access, shares,
capacity and counters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dra_operator.model import ResourceClaim, ResourceSlice
from dra_operator.verify import ClusterState, Code, check

from .builders import claim, device, resource_slice, result

GPU0 = "gpu.example.com/pool/gpu-0"
POOL = "gpu.example.com/pool"
ONE_GPU = [resource_slice("s", [device("gpu-0"), device("gpu-1")])]
SHARED = [resource_slice("s", [device("gpu-0", multi=True, capacity={"memory": "10Gi"})])]
PARTITIONS = [
    resource_slice("counters", count=2, counter_sets={"mem": {"memory": "8Gi"}}),
    resource_slice(
        "devices",
        [device(f"part-{i}", counters={"mem": {"memory": "4Gi"}}) for i in range(3)],
        count=2,
    ),
]

Expected = list[tuple[Code, str, str]]


def _run(claims: list[ResourceClaim], slices: list[ResourceSlice]) -> Expected:
    state = ClusterState(claims=tuple(claims), slices=tuple(slices))
    return [(v.code, v.kind, v.name) for v in check(state)]


CLEAN = [
    pytest.param([claim("a", [result("gpu-0")])], ONE_GPU, id="one-exclusive-allocation"),
    pytest.param(
        [claim("a", [result("gpu-0")]), claim("b", [result("gpu-1")])],
        ONE_GPU,
        id="two-claims-two-devices",
    ),
    pytest.param(
        [claim("a", [result("gpu-0")]), claim("b", [result("gpu-0", admin=True)])],
        ONE_GPU,
        id="admin-access-beside-exclusive",
    ),
    pytest.param(
        [claim("a", [result("gpu-0", admin=True)]), claim("b", [result("gpu-0", admin=True)])],
        ONE_GPU,
        id="two-admin-accesses",
    ),
    pytest.param(
        [
            claim("a", [result("gpu-0", share="s1", consumed={"memory": "4Gi"})]),
            claim("b", [result("gpu-0", share="s2", consumed={"gpu.example.com/memory": "6Gi"})]),
        ],
        SHARED,
        id="shares-fill-capacity-exactly",
    ),
    pytest.param(
        [claim("a", [result("part-0"), result("part-1")])],
        PARTITIONS,
        id="counters-used-up-exactly",
    ),
    pytest.param(
        [
            claim("a", [result("part-0"), result("part-1")]),
            claim("b", [result("part-2", admin=True)]),
        ],
        PARTITIONS,
        id="admin-access-consumes-no-counters",
    ),
    pytest.param(
        [claim("a", [result("gpu-0")])],
        [
            resource_slice("old", [], generation=1),
            resource_slice("new", [device("gpu-0")], generation=2),
        ],
        id="older-generation-ignored",
    ),
    pytest.param(
        [claim("a", [result("gpu-0"), result("gpu-1")])],
        [
            resource_slice("s1", [device("gpu-0")], count=2),
            resource_slice("s2", [device("gpu-1")], count=2),
        ],
        id="pool-of-two-slices",
    ),
    pytest.param([claim("a")], [], id="unallocated-claim-needs-no-pool"),
]


@pytest.mark.parametrize(("claims", "slices"), CLEAN)
def test_clean_states_have_no_violations(
    claims: list[ResourceClaim], slices: list[ResourceSlice]
) -> None:
    assert _run(claims, slices) == []


VIOLATING = [
    pytest.param(
        [claim("a", [result("gpu-0")]), claim("b", [result("gpu-0")])],
        ONE_GPU,
        [(Code.DEVICE_OVERALLOCATED, "Device", GPU0)],
        id="exclusive-device-in-two-claims",
    ),
    pytest.param(
        [claim("a", [result("gpu-0", request="x"), result("gpu-0", request="y")])],
        ONE_GPU,
        [(Code.DEVICE_OVERALLOCATED, "Device", GPU0)],
        id="exclusive-device-twice-in-one-claim",
    ),
    pytest.param(
        [claim("a", [result("gpu-0")]), claim("b", [result("gpu-0", share="s1")])],
        SHARED,
        [(Code.DEVICE_OVERALLOCATED, "Device", GPU0)],
        id="share-beside-exclusive-allocation",
    ),
    pytest.param(
        [claim("a", [result("gpu-0", share="s1")]), claim("b", [result("gpu-0", share="s2")])],
        ONE_GPU,
        [(Code.DEVICE_OVERALLOCATED, "Device", GPU0)],
        id="shares-of-a-single-allocation-device",
    ),
    pytest.param(
        [claim("a", [result("gpu-0", share="s1")]), claim("b", [result("gpu-0", share="s1")])],
        SHARED,
        [(Code.SHARE_DUPLICATED, "Device", GPU0)],
        id="share-id-twice",
    ),
    pytest.param(
        [
            claim("a", [result("gpu-0", share="s1", consumed={"memory": "6Gi"})]),
            claim("b", [result("gpu-0", share="s2", consumed={"memory": "6Gi"})]),
        ],
        SHARED,
        [(Code.CAPACITY_EXCEEDED, "Device", GPU0)],
        id="shares-exceed-capacity",
    ),
    pytest.param(
        [claim("a", [result("gpu-0", share="s1", consumed={"cores": "1"})])],
        SHARED,
        [(Code.CAPACITY_EXCEEDED, "Device", GPU0)],
        id="share-consumes-unknown-capacity",
    ),
    pytest.param(
        [claim("a", [result("part-0"), result("part-1")]), claim("b", [result("part-2")])],
        PARTITIONS,
        [(Code.COUNTERS_EXCEEDED, "ResourcePool", POOL)],
        id="counters-exceeded",
    ),
    pytest.param(
        [claim("a", [result("part-0")])],
        [
            resource_slice("counters", count=2, counter_sets={"other": {"memory": "8Gi"}}),
            resource_slice(
                "devices", [device("part-0", counters={"mem": {"memory": "4Gi"}})], count=2
            ),
        ],
        [(Code.COUNTERS_EXCEEDED, "ResourcePool", POOL)],
        id="counter-set-unknown",
    ),
    pytest.param(
        [claim("a", [result("gpu-0", pool="elsewhere")])],
        ONE_GPU,
        [(Code.DEVICE_NOT_PUBLISHED, "ResourceClaim", "ns/a")],
        id="pool-not-published",
    ),
    pytest.param(
        [claim("a", [result("gpu-0")])],
        [
            resource_slice("old", [device("gpu-0")], generation=1),
            resource_slice("new", [], generation=2),
        ],
        [(Code.DEVICE_NOT_PUBLISHED, "ResourceClaim", "ns/a")],
        id="device-only-in-older-generation",
    ),
    pytest.param(
        [claim("a", [result("gpu-9", admin=True)])],
        ONE_GPU,
        [(Code.DEVICE_NOT_PUBLISHED, "ResourceClaim", "ns/a")],
        id="admin-access-to-unpublished-device",
    ),
    pytest.param(
        [claim("a", [result("gpu-0")]), claim("b", [result("gpu-0", request="other")])],
        [resource_slice("s1", [device("gpu-0")], count=2)],
        [
            (Code.DEVICE_OVERALLOCATED, "Device", GPU0),
            (Code.POOL_INCOMPLETE, "ResourceClaim", "ns/a"),
            (Code.POOL_INCOMPLETE, "ResourceClaim", "ns/b"),
        ],
        id="incomplete-pool-and-double-allocation",
    ),
    pytest.param(
        [claim("a", [result("gpu-0")])],
        [
            resource_slice("old", [device("gpu-0")], generation=1),
            resource_slice("new-1", [device("gpu-0")], generation=2, count=2),
        ],
        [(Code.POOL_INCOMPLETE, "ResourceClaim", "ns/a")],
        id="newest-generation-incomplete",
    ),
]


@pytest.mark.parametrize(("claims", "slices", "expected"), VIOLATING)
def test_violating_states_report_exactly_their_violations(
    claims: list[ResourceClaim], slices: list[ResourceSlice], expected: Expected
) -> None:
    assert _run(claims, slices) == expected


@pytest.mark.parametrize(("claims", "slices", "expected"), VIOLATING)
def test_violations_are_sentences(
    claims: list[ResourceClaim], slices: list[ResourceSlice], expected: Expected
) -> None:
    state = ClusterState(claims=tuple(claims), slices=tuple(slices))
    for violation in check(state):
        assert violation.message[0].isupper()
        assert violation.message.endswith(".")


DEVICES = [f"gpu-{i}" for i in range(6)]


@given(
    owners=st.lists(st.sampled_from(["a", "b", "c", None]), min_size=6, max_size=6),
    duplicate=st.integers(min_value=0, max_value=5),
)
def test_each_device_once_is_clean_and_a_second_claim_is_caught(
    owners: list[str | None], duplicate: int
) -> None:
    slices = [resource_slice("s", [device(name) for name in DEVICES])]
    by_claim: dict[str, list[str]] = {}
    for name, owner in zip(DEVICES, owners, strict=True):
        if owner is not None:
            by_claim.setdefault(owner, []).append(name)
    claims = [claim(owner, [result(name) for name in names]) for owner, names in by_claim.items()]
    assert _run(claims, slices) == []

    extra = claim("intruder", [result(DEVICES[duplicate])])
    expected = (
        [(Code.DEVICE_OVERALLOCATED, "Device", f"gpu.example.com/pool/{DEVICES[duplicate]}")]
        if owners[duplicate] is not None
        else []
    )
    assert _run([*claims, extra], slices) == expected
