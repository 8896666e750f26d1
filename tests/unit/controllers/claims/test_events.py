"""Watch events to claims-controller keys: pods, claims, templates (upstream's enqueue*)."""

from __future__ import annotations

from dataclasses import replace

from dra_operator.controllers.claims import (
    WorkKey,
    keys_for_claim,
    keys_for_pod,
    keys_for_template,
)
from dra_operator.model import PodExtendedResourceClaimStatus

from .builders import (
    GENERATED,
    NS,
    POD_CLAIM,
    POD_NAME,
    POD_WITH_RESOURCE,
    TEST_POD,
    View,
    claim,
    pod,
    template,
    with_node,
)

WITH_STATUS = pod(template_claims=[POD_CLAIM], statuses=[(POD_CLAIM, GENERATED)])
POD_KEY = WorkKey("pod", NS, POD_NAME)
CLAIM_KEY = WorkKey("claim", NS, GENERATED)


def test_pods_without_claims_are_ignored() -> None:
    assert keys_for_pod(TEST_POD, View()) == []


def test_a_pod_waiting_for_its_claim_is_enqueued() -> None:
    assert keys_for_pod(POD_WITH_RESOURCE, View()) == [POD_KEY]
    assert str(POD_KEY) == f"pod:{NS}/{POD_NAME}"


def test_a_finished_pod_releases_its_claims() -> None:
    done = pod(template_claims=[POD_CLAIM], statuses=[(POD_CLAIM, GENERATED)], phase="Succeeded")
    assert keys_for_pod(done, View(claims=[claim(GENERATED)])) == [CLAIM_KEY]


def test_a_deleted_pod_releases_its_claims_and_needs_no_work() -> None:
    assert keys_for_pod(WITH_STATUS, View(), deleted=True) == [CLAIM_KEY]


def test_a_claim_event_enqueues_the_claim_and_pods_needing_work() -> None:
    allocated = claim(GENERATED, pod_claim=POD_CLAIM, allocated=True)
    bound = with_node(WITH_STATUS)
    view = View(pods=[bound], claims=[allocated])
    assert keys_for_claim(allocated, view, view) == [CLAIM_KEY, POD_KEY]
    assert keys_for_claim(allocated, view, view, deleted=True) == [POD_KEY]


def test_a_template_event_enqueues_the_pods_waiting_for_it() -> None:
    view = View(pods=[POD_WITH_RESOURCE, TEST_POD])
    assert keys_for_template(template().obj, view, view) == [POD_KEY]


def test_a_finished_pod_releases_its_extended_resource_claim() -> None:
    status = PodExtendedResourceClaimStatus(request_mappings=(), resource_claim_name="ext-claim")
    done = pod(phase="Failed")
    done = replace(done, status=replace(done.status, extended_resource_claim_status=status))
    assert keys_for_pod(done, View()) == [WorkKey("claim", NS, "ext-claim")]
    running = replace(done, status=replace(done.status, phase="Running"))
    assert keys_for_pod(running, View()) == []
