"""`sync_pod` and `sync_claim`: upstream's TestSyncHandler scenarios (kubernetes v1.36.4
`pkg/controller/resourceclaim/controller_test.go`, PodGroup rows left out), as plans of writes.

Covers: claim creation from templates (owner, annotations, labels, spec passed through, the
57-character generateName), orphan reuse, re-creation of a deleted claim, feature-gate and
missing-template failures with their event, reservations of pods bound without us, pruning of
stale reservations with the API double-check for pods the cache does not know, deallocation and
finalizer removal, deletion of generated claims of finished pods, non-pod consumers kept.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from dra_operator import names
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.claims import (
    ApplyPodClaimStatuses,
    ClaimsFeatures,
    CreateClaim,
    CreatedFor,
    DeleteClaim,
    Event,
    NeedClaims,
    NeedPods,
    Plan,
    PruneReservedFor,
    RemoveFinalizer,
    ReserveClaim,
    claims_to_check,
    consumer_ref,
    creation_failed,
    sync_claim,
    sync_pod,
)
from dra_operator.model import FrozenMap, Pod, ResourceClaimConsumerReference

from .builders import (
    GENERATED,
    NS,
    OTHER_POD,
    POD_CLAIM,
    POD_NAME,
    POD_UID,
    POD_WITH_RESOURCE,
    TEMPLATE_SPEC,
    TEMPLATED_CLAIM,
    TEST_CLAIM,
    TEST_POD,
    View,
    claim,
    pod,
    ref,
    template,
    with_node,
)

CLAIM_KEY = ObjectKey(NS, TEST_CLAIM.metadata.name)
ADMIN_OFF = "admin access is requested, but the feature is disabled"
MISSING_TEMPLATE = (
    'resource claim template "my-template": '
    'resourceclaimtemplate.resource.k8s.io "my-template" not found'
)


def create(**overrides: object) -> CreateClaim:
    values: dict[str, object] = {
        "namespace": NS,
        "pod_claim_name": POD_CLAIM,
        "generate_name": f"{POD_NAME}-{POD_CLAIM}-",
        "pod_name": POD_NAME,
        "pod_uid": POD_UID,
        "api_version": "resource.k8s.io/v1",
        "labels": FrozenMap(),
        "annotations": FrozenMap({"team": "ml", names.POD_CLAIM_NAME_ANNOTATION: POD_CLAIM}),
        "spec": TEMPLATE_SPEC,
        "admin_access": False,
    }
    values.update(overrides)
    return CreateClaim(**values)  # type: ignore[arg-type]


CREATED = CreatedFor(POD_CLAIM)


def apply(claim_name: str | CreatedFor = CREATED) -> ApplyPodClaimStatuses:
    return ApplyPodClaimStatuses(
        namespace=NS, pod_name=POD_NAME, entries=((POD_CLAIM, claim_name),)
    )


def failed(message: str) -> Plan:
    return Plan(
        writes=(creation_failed(POD_WITH_RESOURCE, POD_CLAIM, message),),
        error=f"pod {NS}/{POD_NAME}, PodResourceClaim {POD_CLAIM}: {message}",
    )


POD_WITH_STATUS = pod(template_claims=[POD_CLAIM], statuses=[(POD_CLAIM, GENERATED)])


@pytest.mark.parametrize(
    ("view", "subject", "features", "expected"),
    [
        pytest.param(
            View(templates=[template()]),
            POD_WITH_RESOURCE,
            ClaimsFeatures(),
            Plan(writes=(create(), apply())),
            id="create",
        ),
        pytest.param(
            View(templates=[template(admin_access=True)]),
            POD_WITH_RESOURCE,
            ClaimsFeatures(admin_access=False),
            failed(ADMIN_OFF),
            id="create with admin and feature gate off",
        ),
        pytest.param(
            View(templates=[template(admin_access=True)]),
            POD_WITH_RESOURCE,
            ClaimsFeatures(),
            Plan(
                writes=(
                    create(admin_access=True, spec=template(admin_access=True).raw["spec"]["spec"]),
                    apply(),
                )
            ),
            id="create with admin and feature gate on",
        ),
        pytest.param(
            View(templates=[template()], claims=[TEMPLATED_CLAIM]),
            POD_WITH_STATUS,
            ClaimsFeatures(),
            Plan(),
            id="nop",
        ),
        pytest.param(
            View(templates=[template()]),
            POD_WITH_STATUS,
            ClaimsFeatures(),
            Plan(writes=(create(), apply())),
            id="recreate",
        ),
        pytest.param(
            View(),
            POD_WITH_RESOURCE,
            ClaimsFeatures(),
            failed(MISSING_TEMPLATE),
            id="missing-template",
        ),
        pytest.param(
            View(claims=[TEMPLATED_CLAIM]),
            POD_WITH_RESOURCE,
            ClaimsFeatures(),
            Plan(writes=(apply(GENERATED),)),
            id="find-existing-claim-by-label",
        ),
        pytest.param(
            View(templates=[template()]),
            None,
            ClaimsFeatures(),
            Plan(reason="pod is gone"),
            id="no-such-pod",
        ),
        pytest.param(
            View(templates=[template()]),
            pod(template_claims=[POD_CLAIM], deleting=True),
            ClaimsFeatures(),
            Plan(reason="pod is marked for deletion"),
            id="pod-deleted",
        ),
        pytest.param(
            View(),
            TEST_POD,
            ClaimsFeatures(),
            Plan(reason="pod is not scheduled: the scheduler reserves"),
            id="no-volumes",
        ),
        pytest.param(
            View(
                templates=[template()], claims=[claim(namespace="not-my-namespace", owned_by=None)]
            ),
            POD_WITH_RESOURCE,
            ClaimsFeatures(),
            Plan(writes=(create(), apply())),
            id="create-with-other-claim",
        ),
        pytest.param(
            View(claims=[claim(owned_by=None)]),
            POD_WITH_RESOURCE,
            ClaimsFeatures(),
            failed(MISSING_TEMPLATE),
            id="wrong-claim-owner",
        ),
        pytest.param(
            View(
                templates=[template()],
                claims=[claim(GENERATED, owned_by=None, pod_claim=POD_CLAIM)],
            ),
            POD_WITH_STATUS,
            ClaimsFeatures(),
            Plan(writes=(create(), apply())),
            id="recorded-claim-not-owned-is-replaced",
        ),
        pytest.param(
            View(
                templates=[template()],
                claims=[claim(GENERATED, pod_claim=POD_CLAIM, allocated=True)],
            ),
            with_node(POD_WITH_STATUS),
            ClaimsFeatures(),
            Plan(
                writes=(
                    ReserveClaim(
                        claim=ObjectKey(NS, GENERATED),
                        resource_version="7",
                        consumer=consumer_ref(POD_WITH_STATUS),
                    ),
                )
            ),
            id="add-reserved",
        ),
        pytest.param(
            View(
                templates=[template()],
                claims=[
                    claim(
                        GENERATED,
                        pod_claim=POD_CLAIM,
                        allocated=True,
                        reserved_for=[POD_WITH_STATUS],
                    )
                ],
            ),
            with_node(POD_WITH_STATUS),
            ClaimsFeatures(),
            Plan(),
            id="already-reserved",
        ),
        pytest.param(
            View(templates=[template()], claims=[claim(GENERATED, pod_claim=POD_CLAIM)]),
            with_node(POD_WITH_STATUS),
            ClaimsFeatures(),
            Plan(),
            id="bound-but-not-allocated",
        ),
        pytest.param(
            View(templates=[template()]),
            with_node(POD_WITH_RESOURCE),
            ClaimsFeatures(),
            Plan(writes=(create(), apply())),
            id="bound-pod-claim-created-now",
        ),
        pytest.param(
            View(
                templates=[template()],
                claims=[claim(GENERATED, owned_by=OTHER_POD, allocated=True)],
            ),
            with_node(POD_WITH_STATUS),
            ClaimsFeatures(),
            Plan(
                writes=(create(), apply()),
                error=f"ResourceClaim {NS}/{GENERATED} was not created for Pod {NS}/{POD_NAME} "
                "(Pod is not owner)",
            ),
            id="bound-with-foreign-claim",
        ),
    ],
)
def test_sync_pod(
    view: View, subject: Pod | None, features: ClaimsFeatures, expected: Plan
) -> None:
    plan = sync_pod(subject, view, features)
    assert (plan.writes, plan.error) == (expected.writes, expected.error)


def test_create_copies_template_labels() -> None:
    view = View(templates=[template(labels={"app": "train"})])
    plan = sync_pod(POD_WITH_RESOURCE, view)
    assert plan.writes[0] == create(labels=FrozenMap({"app": "train"}))


def test_a_failed_create_is_reported_like_upstream() -> None:
    """create-conflict: the driver reports a failed POST with this event."""
    event = creation_failed(POD_WITH_RESOURCE, POD_CLAIM, "create ResourceClaim : conflict")
    assert event == Event(
        involved=ObjectKey(NS, POD_NAME),
        uid=POD_UID,
        type="Warning",
        reason="FailedResourceClaimCreation",
        message="PodResourceClaim acme-resource: create ResourceClaim : conflict",
    )


def test_orphans_are_found_per_pod_claim_and_deterministically() -> None:
    two = pod(template_claims=["a", "b"])
    view = View(
        claims=[
            claim("z-b", owned_by=two, pod_claim="b"),
            claim("y-b", owned_by=two, pod_claim="b"),
            claim("x-a", owned_by=OTHER_POD, pod_claim="a"),
            claim("w-a", owned_by=two, pod_claim=None),
        ],
        templates=[template()],
    )
    plan = sync_pod(two, view)
    assert [type(w).__name__ for w in plan.writes] == ["CreateClaim", "ApplyPodClaimStatuses"]
    assert plan.writes[1] == ApplyPodClaimStatuses(
        namespace=NS, pod_name=POD_NAME, entries=(("a", CreatedFor("a")), ("b", "y-b"))
    )


def test_a_pod_claim_not_needed_creates_nothing() -> None:
    skipped = pod(template_claims=[POD_CLAIM], statuses=[(POD_CLAIM, None)])
    assert sync_pod(skipped, View(templates=[template()])).writes == ()


def test_an_entry_with_no_known_field_fails() -> None:
    from dra_operator.model import PodResourceClaim, PodSpec

    odd = replace(TEST_POD, spec=PodSpec(resource_claims=(PodResourceClaim(name="x"),)))
    plan = sync_pod(odd, View())
    assert plan.error == (
        f"pod {NS}/{POD_NAME}, PodResourceClaim x: checking for claim before creating it: "
        f'pod "{NS}/{POD_NAME}", spec.resourceClaim "x": none of the supported fields are set'
    )


# -- merged pod statuses; 1.37: the existence check on the server (upstream-1.37.md §7) ---------

V136, V137 = ClaimsFeatures(), ClaimsFeatures(since_137=True)
# "b" is recorded and cached; "c" is recorded, the claim gone; "a" is new. "skip" needs no claim.
MIXED = pod(
    template_claims=["c", "b", "a", "skip"],
    statuses=[("b", "pod-b"), ("c", "pod-c"), ("skip", None)],
)
MIXED_VIEW_CLAIMS = [claim("pod-b", owned_by=MIXED, pod_claim="b")]


def _applied(plan: Plan) -> tuple[tuple[str, str | CreatedFor], ...]:
    return next(w for w in plan.writes if isinstance(w, ApplyPodClaimStatuses)).entries


def test_the_existing_entries_are_applied_merged_and_sorted_by_name() -> None:
    """#138408, on every release: with only the new entries, server-side apply dropped the
    field manager's earlier ones (1.36 does that; see the module docstring of `_sync`)."""
    view = View(claims=MIXED_VIEW_CLAIMS, templates=[template()])
    merged = (("a", CreatedFor("a")), ("b", "pod-b"), ("c", CreatedFor("c")))
    assert _applied(sync_pod(MIXED, view, V136)) == merged
    assert claims_to_check(MIXED, view, V137) == NeedClaims(
        namespace=NS, names=("pod-c",), pod_claims=("c",)
    )
    assert _applied(sync_pod(MIXED, view, V137, checked={"pod-c": None})) == merged


def test_1_36_recreates_a_claim_missing_from_the_cache_without_asking() -> None:
    assert claims_to_check(POD_WITH_STATUS, View(templates=[template()]), V136) is None
    plan = sync_pod(POD_WITH_STATUS, View(templates=[template()]), V136)
    assert plan.writes == (create(), apply())


@pytest.mark.parametrize(
    ("on_server", "recreated"),
    [
        pytest.param(None, True, id="not-found"),
        pytest.param(TEMPLATED_CLAIM, False, id="owned"),
        pytest.param(claim(GENERATED, owned_by=OTHER_POD), True, id="not-owned"),
    ],
)
def test_1_37_recreates_only_what_the_server_does_not_have_for_the_pod(
    on_server: object, recreated: bool
) -> None:
    view = View(templates=[template()])
    need = claims_to_check(POD_WITH_STATUS, view, V137)
    assert need == NeedClaims(namespace=NS, names=(GENERATED,), pod_claims=(POD_CLAIM,))
    plan = sync_pod(POD_WITH_STATUS, view, V137, checked={GENERATED: on_server})  # type: ignore[dict-item]
    assert plan.writes == ((create(), apply()) if recreated else ())
    assert plan.error is None


def test_1_37_never_recreates_an_unchecked_claim() -> None:
    plan = sync_pod(POD_WITH_STATUS, View(templates=[template()]), V137)
    assert plan.writes == ()
    assert plan.error == f"pod {NS}/{POD_NAME}: claims {GENERATED} not checked yet"


def test_1_37_asks_nothing_for_cached_claims_or_claims_the_pod_names_itself() -> None:
    named = pod(claim_refs=[("x", "missing")])
    view = View(claims=[TEMPLATED_CLAIM], templates=[template()])
    assert claims_to_check(POD_WITH_STATUS, view, V137) is None
    assert claims_to_check(named, view, V137) is None


# -- sync_claim ----------------------------------------------------------------------------------

RESERVED = claim(allocated=True, reserved_for=[POD_WITH_RESOURCE])
RESERVED_STRUCTURED = claim(allocated=True, reserved_for=[POD_WITH_RESOURCE], finalizer=True)
SUCCEEDED = pod(template_claims=[POD_CLAIM], phase="Succeeded")
NON_POD = ResourceClaimConsumerReference(api_group="foo.com", resource="foo", name="foo", uid="123")


def prune(
    *keep: ResourceClaimConsumerReference, deallocate: bool = False, rv: str | None = "7"
) -> PruneReservedFor:
    return PruneReservedFor(
        claim=CLAIM_KEY, resource_version=rv, reserved_for=keep, deallocate=deallocate
    )


@pytest.mark.parametrize(
    ("view", "subject", "checked", "expected"),
    [
        pytest.param(
            View(pods=[POD_WITH_RESOURCE]), RESERVED, None, Plan(), id="stay-reserved-seen"
        ),
        pytest.param(
            View(), RESERVED, {POD_NAME: POD_WITH_RESOURCE}, Plan(), id="stay-reserved-not-seen"
        ),
        pytest.param(
            View(),
            RESERVED_STRUCTURED,
            {POD_NAME: None},
            Plan(
                writes=(
                    prune(deallocate=True),
                    RemoveFinalizer(claim=CLAIM_KEY, resource_version=None),
                )
            ),
            id="clear-reserved-structured",
        ),
        pytest.param(
            View(pods=[POD_WITH_RESOURCE]),
            claim(allocated=True, finalizer=True, reserved_for=[POD_WITH_RESOURCE, OTHER_POD]),
            {OTHER_POD.metadata.name: None},
            Plan(writes=(prune(ref(POD_WITH_RESOURCE)),)),
            id="dont-clear-reserved-structured",
        ),
        pytest.param(
            View(),
            claim(allocated=True, reserved_for=[POD_WITH_RESOURCE], finalizer=True, deleting=True),
            {POD_NAME: None},
            Plan(
                writes=(
                    prune(deallocate=True),
                    RemoveFinalizer(claim=CLAIM_KEY, resource_version=None),
                )
            ),
            id="clear-reserved-structured-deleted",
        ),
        pytest.param(
            View(),
            claim(allocated=True, finalizer=True, deleting=True),
            None,
            Plan(
                writes=(
                    prune(deallocate=True),
                    RemoveFinalizer(claim=CLAIM_KEY, resource_version=None),
                )
            ),
            id="structured-deleted",
        ),
        pytest.param(
            View(),
            claim(finalizer=True, deleting=True),
            None,
            Plan(writes=(RemoveFinalizer(claim=CLAIM_KEY, resource_version="7"),)),
            id="unallocated-deleted",
        ),
        pytest.param(
            View(pods=[SUCCEEDED]),
            claim(allocated=True, reserved_for=[SUCCEEDED], owned_by=None),
            None,
            Plan(writes=(prune(),)),
            id="clear-reserved-when-done",
        ),
        pytest.param(
            View(pods=[TEST_POD]),
            claim(allocated=True, reserved_for=[TEST_POD, OTHER_POD]),
            {OTHER_POD.metadata.name: None},
            Plan(writes=(prune(ref(TEST_POD)),)),
            id="remove-reserved",
        ),
        pytest.param(
            View(pods=[SUCCEEDED]),
            claim(allocated=True, reserved_for=[SUCCEEDED]),
            None,
            Plan(writes=(prune(), DeleteClaim(claim=CLAIM_KEY, uid=TEST_CLAIM.metadata.uid))),
            id="delete-claim-when-done",
        ),
        pytest.param(
            View(pods=[SUCCEEDED]),
            claim(allocated=True, reserved_for=[SUCCEEDED, NON_POD]),
            None,
            Plan(writes=(prune(NON_POD),)),
            id="clean up pod reservation with non-pod reservation present",
        ),
        pytest.param(
            View(deleted={POD_UID}),
            claim(allocated=True, reserved_for=[POD_WITH_RESOURCE], finalizer=True, owned_by=None),
            None,
            Plan(
                writes=(
                    prune(deallocate=True),
                    RemoveFinalizer(claim=CLAIM_KEY, resource_version=None),
                )
            ),
            id="known-deleted-pod-needs-no-api-check",
        ),
        pytest.param(
            View(deleted={POD_UID}),
            RESERVED_STRUCTURED,
            None,
            Plan(
                writes=(
                    prune(deallocate=True),
                    RemoveFinalizer(claim=CLAIM_KEY, resource_version=None),
                    DeleteClaim(claim=CLAIM_KEY, uid=TEST_CLAIM.metadata.uid),
                )
            ),
            id="claim-of-a-pod-seen-deleted-is-deleted-without-garbage-collector",
        ),
        pytest.param(
            View(),
            claim(finalizer=False),
            None,
            Plan(),
            id="owner-not-in-cache-is-left-to-the-garbage-collector",
        ),
        pytest.param(
            View(pods=[pod(uid="new-uid", template_claims=[POD_CLAIM])]),
            RESERVED,
            None,
            Plan(writes=(prune(), DeleteClaim(claim=CLAIM_KEY, uid=TEST_CLAIM.metadata.uid))),
            id="pod-replaced-under-the-same-name",
        ),
        pytest.param(
            View(),
            RESERVED,
            {POD_NAME: pod(uid="new-uid")},
            Plan(writes=(prune(),)),
            id="api-shows-a-replaced-pod",
        ),
        pytest.param(
            View(pods=[pod(template_claims=[POD_CLAIM], deleting=True)]),
            RESERVED,
            None,
            Plan(writes=(prune(), DeleteClaim(claim=CLAIM_KEY, uid=TEST_CLAIM.metadata.uid))),
            id="pod-deleted-before-scheduling",
        ),
        pytest.param(
            View(pods=[with_node(pod(template_claims=[POD_CLAIM], deleting=True))]),
            RESERVED,
            None,
            Plan(),
            id="bound-pod-being-deleted-keeps-its-claim",
        ),
        pytest.param(
            View(), claim(allocated=True), None, Plan(), id="allocated-never-reserved-is-kept"
        ),
        pytest.param(View(), None, None, Plan(reason="claim is gone"), id="claim-gone"),
    ],
)
def test_sync_claim(
    view: View, subject: object, checked: dict[str, Pod | None] | None, expected: Plan
) -> None:
    assert sync_claim(subject, view, checked) == expected  # type: ignore[arg-type]


def test_a_reserving_pod_unknown_to_the_cache_needs_an_api_check() -> None:
    subject = claim(allocated=True, finalizer=True, reserved_for=[POD_WITH_RESOURCE, OTHER_POD])
    assert sync_claim(subject, View()) == NeedPods(
        namespace=NS, names=(POD_NAME, OTHER_POD.metadata.name)
    )


def test_classic_claim_is_handed_to_its_driver_when_its_last_consumer_goes() -> None:
    """1.31 kube-controller-manager: a claim a classic driver allocated gets
    `deallocationRequested` instead of losing its allocation; its finalizer is the driver's."""
    allocation = RESERVED.status.allocation
    assert allocation is not None
    classic = replace(
        RESERVED,
        status=replace(RESERVED.status, allocation=replace(allocation, controller="c.example.com")),
    )
    expected = PruneReservedFor(
        claim=CLAIM_KEY,
        resource_version="7",
        reserved_for=(),
        deallocate=False,
        request_deallocation=True,
    )
    assert sync_claim(classic, View(), {POD_NAME: None}) == Plan(writes=(expected,))
    body = expected.status_body({"metadata": {"name": "c"}, "status": {"allocation": {}}})
    assert body["status"] == {"allocation": {}, "deallocationRequested": True}


def test_classic_immediate_claim_stays_allocated_without_consumers() -> None:
    """1.27-1.30 kube-controller-manager: only WaitForFirstConsumer claims are handed back;
    an `Immediate` one loses its last reservation and stays allocated."""
    allocation = RESERVED.status.allocation
    assert allocation is not None
    immediate = replace(
        RESERVED,
        immediate=True,
        status=replace(RESERVED.status, allocation=replace(allocation, controller="c.example.com")),
    )
    expected = PruneReservedFor(
        claim=CLAIM_KEY, resource_version="7", reserved_for=(), deallocate=False
    )
    assert sync_claim(immediate, View(), {POD_NAME: None}) == Plan(writes=(expected,))


def test_a_1_30_named_resources_claim_is_deallocated_with_its_own_finalizer() -> None:
    """1.30 kube-controller-manager: kube-scheduler's `dra.k8s.io/delete-protection` marks a
    claim it allocated; the last consumer gone, the allocation is cleared and that finalizer
    removed (an Immediate one stays allocated)."""
    named = replace(
        RESERVED,
        metadata=replace(RESERVED.metadata, finalizers=("dra.k8s.io/delete-protection",)),
    )
    expected = PruneReservedFor(
        claim=CLAIM_KEY, resource_version="7", reserved_for=(), deallocate=True
    )
    remove = RemoveFinalizer(
        claim=CLAIM_KEY, resource_version=None, finalizer="dra.k8s.io/delete-protection"
    )
    assert sync_claim(named, View(), {POD_NAME: None}) == Plan(writes=(expected, remove))
    immediate = replace(named, immediate=True)
    kept = replace(expected, deallocate=False)
    assert sync_claim(immediate, View(), {POD_NAME: None}) == Plan(writes=(kept,))
