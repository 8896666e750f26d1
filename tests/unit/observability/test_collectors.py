"""The scrape-time `resourceclaim_controller_resource_claims` collector.

Covers: upstream's `source` rule (extended-resource annotation first, then pod-claim-name),
admin access only from `exactly` requests, the tally per label set, no samples before a source
is set, and a source that raises.
"""

from __future__ import annotations

import pytest
from tests.unit.observability.scrape import scrape

from dra_operator import names
from dra_operator.model import (
    AllocationResult,
    DeviceClaim,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    FrozenMap,
    ObjectMeta,
    ResourceClaim,
    ResourceClaimStatus,
)
from dra_operator.observability import ClaimSource, Metrics, claim_source, has_admin_access

FAMILY = "resourceclaim_controller_resource_claims"


def claim(
    name: str = "c",
    *,
    annotations: dict[str, str] | None = None,
    admin: bool | None = None,
    sub_only: bool = False,
    allocated: bool = False,
) -> ResourceClaim:
    if sub_only:
        request = DeviceRequest(
            name="r", first_available=(DeviceSubRequest(name="s", device_class_name="gpu"),)
        )
    else:
        request = DeviceRequest(
            name="r", exactly=ExactDeviceRequest(device_class_name="gpu", admin_access=admin)
        )
    return ResourceClaim(
        metadata=ObjectMeta(name=name, namespace="ns", annotations=FrozenMap(annotations or {})),
        spec=DeviceClaim(requests=(request,)),
        status=ResourceClaimStatus(allocation=AllocationResult() if allocated else None),
    )


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        pytest.param({}, ClaimSource.USER, id="user-created"),
        pytest.param(
            {names.POD_CLAIM_NAME_ANNOTATION: "gpu"}, ClaimSource.TEMPLATE, id="from-template"
        ),
        pytest.param(
            {names.POD_CLAIM_NAME_ANNOTATION: ""}, ClaimSource.USER, id="empty-pod-claim-name"
        ),
        pytest.param(
            {names.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            ClaimSource.EXTENDED_RESOURCE,
            id="extended-resource",
        ),
        pytest.param(
            {
                names.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true",
                names.POD_CLAIM_NAME_ANNOTATION: "gpu",
            },
            ClaimSource.EXTENDED_RESOURCE,
            id="extended-resource-wins",
        ),
        pytest.param(
            {names.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "false"},
            ClaimSource.USER,
            id="extended-resource-false",
        ),
    ],
)
def test_claim_source(annotations: dict[str, str], expected: ClaimSource) -> None:
    assert claim_source(claim(annotations=annotations)) is expected


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        pytest.param(claim(admin=True), True, id="admin-access"),
        pytest.param(claim(admin=False), False, id="admin-access-false"),
        pytest.param(claim(admin=None), False, id="admin-access-unset"),
        pytest.param(claim(sub_only=True), False, id="subrequests-never"),
    ],
)
def test_has_admin_access(built: ResourceClaim, expected: bool) -> None:
    assert has_admin_access(built) is expected


def test_claims_are_tallied_per_label_set() -> None:
    template = {names.POD_CLAIM_NAME_ANNOTATION: "gpu"}
    claims = [
        claim("a"),
        claim("b", allocated=True),
        claim("c", allocated=True),
        claim("d", annotations=template, admin=True),
    ]
    metrics = Metrics()
    metrics.count_claims(lambda: claims)
    found = {labels: count for (name, labels), count in scrape(metrics).items() if name == FAMILY}
    assert found == {
        (("admin_access", "false"), ("allocated", "false"), ("source", "")): 1.0,
        (("admin_access", "false"), ("allocated", "true"), ("source", "")): 2.0,
        (
            ("admin_access", "true"),
            ("allocated", "false"),
            ("source", "resource_claim_template"),
        ): 1.0,
    }


def test_no_samples_before_a_source_is_set() -> None:
    assert not [name for name, _ in scrape(Metrics()) if name == FAMILY]


def test_a_failing_claim_source_leaves_the_page_served() -> None:
    def broken() -> list[ResourceClaim]:
        raise RuntimeError("cache gone")

    metrics = Metrics()
    metrics.count_claims(broken)
    metrics.api_conflict("Pod")
    page = scrape(metrics)
    assert not [name for name, _ in page if name == FAMILY]
    assert page[("dra_operator_api_conflicts_total", (("kind", "Pod"),))] == 1.0
