"""The wire shapes of the claims controller's writes."""

from __future__ import annotations

from dra_operator.controllers.claims import ApplyPodClaimStatuses, CreatedFor, sync_pod

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
