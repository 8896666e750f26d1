"""Who allocated a claim, from its managedFields (`_foreign`).

Covers: the manager owning `f:status.f:allocation` is found; a claim allocated just now by
another manager is foreign, by us or already allocated before it is not; the pools of the
allocation, each once; the creator of a generated claim is the manager of its pod-claim-name
annotation.
"""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.app._foreign import (
    allocated_pools,
    allocation_manager,
    claim_creator,
    is_foreign_allocation,
)

RESULTS = [
    {"request": "gpu", "driver": "d.example.com", "pool": "node-a", "device": "gpu-0"},
    {"request": "gpu", "driver": "d.example.com", "pool": "node-a", "device": "gpu-1"},
]


def claim(manager: str | None, *, allocated: bool) -> dict[str, Any]:
    fields: list[dict[str, Any]] = [
        {"manager": "kube-controller-manager", "fieldsV1": {"f:metadata": {}}}
    ]
    if manager is not None:
        fields.append(
            {
                "manager": manager,
                "fieldsV1": {"f:status": {"f:allocation": {}, "f:reservedFor": {}}},
            }
        )
    status = {"allocation": {"devices": {"results": RESULTS}}} if allocated else {}
    return {"metadata": {"name": "c", "managedFields": fields}, "status": status}


def test_the_manager_of_the_allocation_is_found() -> None:
    assert allocation_manager(claim("kube-scheduler", allocated=True)) == "kube-scheduler"
    assert allocation_manager(claim(None, allocated=False)) is None


@pytest.mark.parametrize(
    ("old", "new", "foreign"),
    [
        pytest.param(
            claim(None, allocated=False),
            claim("kube-scheduler", allocated=True),
            "kube-scheduler",
            id="kube-scheduler-just-allocated",
        ),
        pytest.param(
            claim(None, allocated=False),
            claim("dra-operator", allocated=True),
            None,
            id="we-allocated",
        ),
        pytest.param(
            claim("kube-scheduler", allocated=True),
            claim("kube-scheduler", allocated=True),
            None,
            id="allocated-before",
        ),
        pytest.param(
            None, claim("kube-scheduler", allocated=True), None, id="first-sight-not-an-allocation"
        ),
    ],
)
def test_a_fresh_allocation_by_another_manager_is_foreign(
    old: dict[str, Any] | None, new: dict[str, Any], foreign: str | None
) -> None:
    assert is_foreign_allocation(old, new) == foreign


def test_a_classic_drivers_allocation_is_not_foreign() -> None:
    new = claim("classic-driver", allocated=True)
    new["status"]["allocation"]["controller"] = "classic.example.com"
    assert is_foreign_allocation(claim(None, allocated=False), new) is None


@pytest.mark.parametrize(
    ("handle", "foreign"),
    [
        pytest.param({"driverName": "classic.example.com", "data": "{}"}, None, id="driver"),
        pytest.param(
            {"driverName": "named.example.com", "structuredData": {"nodeName": "n", "results": []}},
            "kube-scheduler",
            id="1.30-named-resources-by-kube-scheduler",
        ),
    ],
)
def test_a_v1alpha2_allocation_is_foreign_only_with_named_resources(
    handle: dict[str, Any], foreign: str | None
) -> None:
    """A classic driver allocates its own claims; 1.30's named resources are a scheduler's,
    as ours are (docs/classic.md), so another one's is a second allocator."""
    new = claim("kube-scheduler", allocated=True)
    new["status"]["allocation"] = {"resourceHandles": [handle]}
    assert is_foreign_allocation(claim(None, allocated=False), new) == foreign
    if foreign:
        assert allocated_pools(new) == ["named.example.com/n"]


def test_pools_are_listed_once() -> None:
    assert allocated_pools(claim("kube-scheduler", allocated=True)) == ["d.example.com/node-a"]


def test_the_creator_of_a_generated_claim_is_found() -> None:
    annotation = {"f:annotations": {"f:resource.kubernetes.io/pod-claim-name": {}}}
    generated = {
        "metadata": {
            "managedFields": [
                {"manager": "kube-scheduler", "fieldsV1": {"f:status": {"f:allocation": {}}}},
                {"manager": "kube-controller-manager", "fieldsV1": {"f:metadata": annotation}},
            ]
        }
    }
    assert claim_creator(generated) == "kube-controller-manager"
    assert claim_creator(claim("kube-scheduler", allocated=True)) is None
