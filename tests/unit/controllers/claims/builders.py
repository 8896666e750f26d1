"""Builders and an in-memory view for the claims controller tests, named after upstream's
fixtures in `pkg/controller/resourceclaim/controller_test.go` (v1.36.4)."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from dra_operator import names
from dra_operator.cluster import Entry, ObjectKey, pod_claim_keys, pod_template_keys
from dra_operator.model import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceClaim,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ExactDeviceRequest,
    FrozenMap,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodGroup,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    PodStatus,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
    ResourceClaimTemplate,
)

NS = "my-namespace"
POD_NAME = "test-pod"
POD_UID = "uidpod1"
POD_CLAIM = "acme-resource"
TEMPLATE = "my-template"
CLASS = "my-resource-class"
NODE = "worker"
GENERATED = "test-pod-acme-resource-x7k2q"
NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def pod(
    name: str = POD_NAME,
    uid: str = POD_UID,
    *,
    template_claims: Iterable[str] = (),
    claim_refs: Iterable[tuple[str, str]] = (),
    statuses: Iterable[tuple[str, str | None]] = (),
    node: str = "",
    phase: str = "",
    deleting: bool = False,
) -> Pod:
    entries = [
        PodResourceClaim(name=c, resource_claim_template_name=TEMPLATE) for c in template_claims
    ] + [PodResourceClaim(name=c, resource_claim_name=n) for c, n in claim_refs]
    return Pod(
        metadata=ObjectMeta(
            name=name, namespace=NS, uid=uid, deletion_timestamp=NOW if deleting else None
        ),
        spec=PodSpec(node_name=node, resource_claims=tuple(entries)),
        status=PodStatus(
            phase=phase,
            resource_claim_statuses=tuple(
                PodResourceClaimStatus(name=c, resource_claim_name=n) for c, n in statuses
            ),
        ),
    )


TEST_POD = pod()
POD_WITH_RESOURCE = pod(template_claims=[POD_CLAIM])
OTHER_POD = pod(POD_NAME + "-II", POD_UID + "-II")


def owner(p: Pod) -> OwnerReference:
    return OwnerReference(
        api_version="v1", kind="Pod", name=p.metadata.name, uid=p.metadata.uid, controller=True
    )


def ref(p: Pod) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference(resource="pods", name=p.metadata.name, uid=p.metadata.uid)


ALLOCATION = AllocationResult(
    devices=DeviceAllocationResult(
        results=(
            DeviceRequestAllocationResult(request="req-0", driver="d", pool="p", device="dev"),
        )
    )
)


def claim(
    name: str = f"{POD_NAME}-{POD_CLAIM}",
    *,
    namespace: str = NS,
    owned_by: Pod | None = POD_WITH_RESOURCE,
    pod_claim: str | None = None,
    allocated: bool = False,
    reserved_for: Iterable[Pod | ResourceClaimConsumerReference] = (),
    finalizer: bool = False,
    deleting: bool = False,
) -> ResourceClaim:
    refs = tuple(
        r if isinstance(r, ResourceClaimConsumerReference) else ref(r) for r in reserved_for
    )
    annotations = {names.POD_CLAIM_NAME_ANNOTATION: pod_claim} if pod_claim else {}
    return ResourceClaim(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=f"uid-{name}",
            resource_version="7",
            annotations=FrozenMap(annotations),
            finalizers=(names.DELETE_PROTECTION_FINALIZER,) if finalizer else (),
            owner_references=(owner(owned_by),) if owned_by else (),
            deletion_timestamp=NOW if deleting else None,
        ),
        status=ResourceClaimStatus(allocation=ALLOCATION if allocated else None, reserved_for=refs),
    )


TEST_CLAIM = claim()
TEMPLATED_CLAIM = claim(GENERATED, pod_claim=POD_CLAIM)

TEMPLATE_SPEC: dict[str, Any] = {
    "devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": CLASS}}]}
}


def template(
    *, admin_access: bool = False, labels: dict[str, str] | None = None
) -> Entry[ResourceClaimTemplate]:
    spec = {
        "devices": {
            "requests": [
                {
                    "name": "req-0",
                    "exactly": {
                        "deviceClassName": CLASS,
                        **({"adminAccess": True} if admin_access else {}),
                    },
                }
            ]
        }
    }
    obj = ResourceClaimTemplate(
        metadata=ObjectMeta(name=TEMPLATE, namespace=NS, resource_version="1"),
        template_metadata=ObjectMeta(
            name="",
            labels=FrozenMap(labels or {}),
            annotations=FrozenMap({"team": "ml"}),
        ),
        spec=DeviceClaim(
            requests=(
                DeviceRequest(
                    name="req-0",
                    exactly=ExactDeviceRequest(
                        device_class_name=CLASS, admin_access=admin_access or None
                    ),
                ),
            )
        ),
    )
    raw = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE, "namespace": NS, "resourceVersion": "1"},
        "spec": {"metadata": {"annotations": {"team": "ml"}}, "spec": spec},
    }
    return Entry(ObjectKey(NS, TEMPLATE), obj, raw, "1")


@dataclass
class View:
    """The caches as the claims controller sees them; implements ClaimsView and PodsByClaim."""

    pods: list[Pod] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    templates: list[Entry[ResourceClaimTemplate]] = field(default_factory=list)
    deleted: set[str] = field(default_factory=set)
    groups: list[PodGroup] | None = None  # None: the server serves no PodGroups

    @property
    def serves_pod_groups(self) -> bool:
        return self.groups is not None

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return next(
            (
                g
                for g in self.groups or ()
                if (g.metadata.namespace, g.metadata.name) == (namespace, name)
            ),
            None,
        )

    def claims_owned_by_group(self, group_uid: str) -> list[ResourceClaim]:
        return [
            c
            for c in self.claims
            if any(
                o.controller and o.kind == "PodGroup" and o.uid == group_uid
                for o in c.metadata.owner_references
            )
        ]

    def pods_in_group(self, namespace: str, name: str) -> list[Pod]:
        return [
            p
            for p in self.pods
            if p.metadata.namespace == namespace and p.spec.pod_group_name == name
        ]

    def pod(self, namespace: str, name: str) -> Pod | None:
        return next(
            (p for p in self.pods if (p.metadata.namespace, p.metadata.name) == (namespace, name)),
            None,
        )

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return next(
            (
                c
                for c in self.claims
                if (c.metadata.namespace, c.metadata.name) == (namespace, name)
            ),
            None,
        )

    def claims_owned_by(self, pod_uid: str) -> list[ResourceClaim]:
        return [
            c
            for c in self.claims
            if any(
                o.controller and o.kind == "Pod" and o.uid == pod_uid
                for o in c.metadata.owner_references
            )
        ]

    def template(self, namespace: str, name: str) -> Entry[ResourceClaimTemplate] | None:
        return next((t for t in self.templates if t.key == ObjectKey(namespace, name)), None)

    def pod_was_deleted(self, uid: str) -> bool:
        return uid in self.deleted

    def pods_using_claim(self, namespace: str, name: str) -> list[Pod]:
        return [p for p in self.pods if ObjectKey(namespace, name) in pod_claim_keys(p)]

    def pods_using_template(self, namespace: str, name: str) -> list[Pod]:
        return [p for p in self.pods if ObjectKey(namespace, name) in pod_template_keys(p)]


def with_node(p: Pod, node: str = NODE) -> Pod:
    return replace(p, spec=replace(p.spec, node_name=node))
