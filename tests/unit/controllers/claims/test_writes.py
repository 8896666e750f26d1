"""The wire shapes of the claims controller's writes."""

from __future__ import annotations

from dra_operator.cluster import ObjectKey
from dra_operator.controllers.claims import (
    ApplyPodClaimStatuses,
    CreatedFor,
    PruneReservedFor,
    RemoveFinalizer,
    ReserveClaim,
    render_consumer,
    sync_pod,
)
from dra_operator.model import ResourceClaimConsumerReference

from .builders import NS, POD_NAME, POD_UID, POD_WITH_RESOURCE, TEMPLATE_SPEC, View, template


def test_generated_claim_manifest() -> None:
    plan = sync_pod(POD_WITH_RESOURCE, View(templates=[template(labels={"app": "x"})]))
    create = plan.writes[0]
    assert create.manifest() == {  # type: ignore[union-attr]
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "generateName": "test-pod-acme-resource-",
            "namespace": NS,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": POD_NAME,
                    "uid": POD_UID,
                    "controller": True,
                }
            ],
            "annotations": {"team": "ml", "resource.kubernetes.io/pod-claim-name": "acme-resource"},
            "labels": {"app": "x"},
        },
        "spec": TEMPLATE_SPEC,
    }


def test_pod_status_apply_body_fills_in_created_names() -> None:
    write = ApplyPodClaimStatuses(
        namespace=NS, pod_name=POD_NAME, entries=(("a", CreatedFor("a")), ("b", "existing"))
    )
    assert write.apply_body({"a": "test-pod-a-x7k2q"}) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD_NAME, "namespace": NS},
        "status": {
            "resourceClaimStatuses": [
                {"name": "a", "resourceClaimName": "test-pod-a-x7k2q"},
                {"name": "b", "resourceClaimName": "existing"},
            ]
        },
    }


RAW_CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {
        "name": "c",
        "namespace": NS,
        "resourceVersion": "7",
        "finalizers": ["example.com/keep", "resource.kubernetes.io/delete-protection"],
        "futureField": {"kept": True},
    },
    "spec": {"devices": {"requests": []}},
    "status": {
        "allocation": {"devices": {"results": []}},
        "reservedFor": [
            {"resource": "pods", "name": "a", "uid": "ua", "futureField": 1},
            {"apiGroup": "foo.com", "resource": "foo", "name": "f", "uid": "uf"},
            {"resource": "pods", "name": "b", "uid": "ub"},
        ],
        "devices": [{"driver": "d", "pool": "p", "device": "x"}],
    },
}
KEY = ObjectKey(NS, "c")
POD_A = ResourceClaimConsumerReference(resource="pods", name="a", uid="ua")
FOO = ResourceClaimConsumerReference(api_group="foo.com", resource="foo", name="f", uid="uf")


def test_prune_keeps_the_raw_entries_still_valid() -> None:
    body = PruneReservedFor(
        claim=KEY, resource_version="8", reserved_for=(POD_A, FOO), deallocate=False
    ).status_body(RAW_CLAIM)
    assert body["status"]["reservedFor"] == RAW_CLAIM["status"]["reservedFor"][:2]  # type: ignore[index]
    assert body["metadata"]["resourceVersion"] == "8"
    assert body["metadata"]["futureField"] == {"kept": True}
    assert "allocation" in body["status"]
    assert len(RAW_CLAIM["status"]["reservedFor"]) == 3  # type: ignore[arg-type]  # not mutated


def test_prune_to_nothing_can_deallocate() -> None:
    body = PruneReservedFor(
        claim=KEY, resource_version=None, reserved_for=(), deallocate=True
    ).status_body(RAW_CLAIM)
    assert "reservedFor" not in body["status"]
    assert "allocation" not in body["status"]
    assert body["status"]["devices"] == RAW_CLAIM["status"]["devices"]  # type: ignore[index]
    assert body["metadata"]["resourceVersion"] == "7"  # chained: the version in hand


def test_reserve_appends_the_pod() -> None:
    body = ReserveClaim(claim=KEY, resource_version="7", consumer=POD_A).status_body(
        {"metadata": {"name": "c", "namespace": NS, "resourceVersion": "6"}, "status": {}}
    )
    assert body["status"]["reservedFor"] == [{"resource": "pods", "name": "a", "uid": "ua"}]
    assert body["metadata"]["resourceVersion"] == "7"


def test_remove_finalizer_removes_only_ours() -> None:
    body = RemoveFinalizer(claim=KEY, resource_version=None).body(RAW_CLAIM)
    assert body["metadata"]["finalizers"] == ["example.com/keep"]


def test_consumers_render_like_the_api() -> None:
    assert render_consumer(FOO) == {
        "apiGroup": "foo.com",
        "resource": "foo",
        "name": "f",
        "uid": "uf",
    }
