"""Claims of a PodGroup (DRAWorkloadResourceClaims): made once for the group, shared by its pods.

kube-controller-manager v1.37.2, pkg/controller/resourceclaim (`syncPodGroup`,
`handlePodGroupClaim`, `findPodGroupResourceClaim`) and k8s.io/dynamic-resource-allocation
v0.37.2 resourceclaim (`NameFromPodGroup`, `IsForPodGroup`, `BindTo`, `IsForPod`,
`IsReservedForPod`):

* a PodGroup's template claim is created once, named `<group>-<claim>-` by the API server,
  owned (controller) by the PodGroup, annotated with the PodGroup claim's name, and recorded in
  `status.resourceClaimStatuses`;
* a pod of the group whose claim entry equals one of the group's (same name, same claim or
  template) uses the group's claim: it records that claim in its own status, and the claim is
  reserved for the PodGroup (`scheduling.k8s.io`/`podgroups`), not for the pod;
* such a claim counts as the pod's when the pod's PodGroup controls it, and as reserved for
  the pod when the PodGroup is in `reservedFor`.

The operator sees the DRAWorkloadResourceClaims gate only through the API: `spec.resourceClaims`
of a PodGroup reaches it only when the gate is on (the API server drops the field otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from dra_operator import names
from dra_operator.cluster import Entry
from dra_operator.controllers.claims._resolve import generate_name
from dra_operator.controllers.claims._writes import (
    ApplyPodClaimStatuses,
    CreateClaim,
    CreatedFor,
    Plan,
    Write,
)
from dra_operator.model import (
    FrozenMap,
    Pod,
    PodGroup,
    PodResourceClaim,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    controller_of,
    not_controlled_by,
)


@dataclass(frozen=True, slots=True)
class _Failure:
    message: str


class GroupsView(Protocol):
    """What the PodGroup decisions read from the caches."""

    def pod_group(self, namespace: str, name: str) -> PodGroup | None: ...

    def claim(self, namespace: str, name: str) -> ResourceClaim | None: ...

    def claims_owned_by_group(self, group_uid: str) -> list[ResourceClaim]: ...

    def template(self, namespace: str, name: str) -> Entry[ResourceClaimTemplate] | None: ...


def group_consumer(group: PodGroup) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference(
        api_group=PodGroup.API_GROUP,
        resource=PodGroup.PLURAL,
        name=group.metadata.name,
        uid=group.metadata.uid,
    )


def is_group_consumer(ref: ResourceClaimConsumerReference) -> bool:
    return ref.api_group == PodGroup.API_GROUP and ref.resource == PodGroup.PLURAL


def shares_with_group(group: PodGroup | None, entry: PodResourceClaim) -> bool:
    """upstream `BindTo`: whether the pod's claim entry is one of its PodGroup's claims."""
    if group is None:
        return False
    return any(
        g.name == entry.name
        and g.resource_claim_name == entry.resource_claim_name
        and g.resource_claim_template_name == entry.resource_claim_template_name
        for g in group.resource_claims
    )


def is_for_group(group: PodGroup, claim: ResourceClaim) -> str | None:
    """upstream `IsForPodGroup`: None when the PodGroup controls the claim, else why not."""
    return not_controlled_by("PodGroup", group.metadata, claim)


def owned_by_pods_group(pod: Pod, claim: ResourceClaim) -> bool:
    """upstream `isForPodGroupByPod`: the pod's PodGroup (by name) controls the claim."""
    controller = controller_of(claim)
    return (
        pod.spec.pod_group_name is not None
        and controller is not None
        and controller.name == pod.spec.pod_group_name
        and controller.kind == "PodGroup"
        and controller.api_version.startswith(f"{PodGroup.API_GROUP}/")
    )


def reserved_for_pods_group(pod: Pod, claim: ResourceClaim) -> bool:
    """The group half of upstream `IsReservedForPod`: the pod's PodGroup is a consumer."""
    return pod.spec.pod_group_name is not None and any(
        is_group_consumer(ref) and ref.name == pod.spec.pod_group_name
        for ref in claim.status.reserved_for
    )


def find_group_claim(group: PodGroup, claim_name: str, view: GroupsView) -> ResourceClaim | None:
    """upstream `findPodGroupResourceClaim`: the group's claim made for `claim_name`.

    Sorted by name so that, should there be several, every run picks the same one.
    """
    owned = sorted(view.claims_owned_by_group(group.metadata.uid), key=lambda c: c.metadata.name)
    return next(
        (
            c
            for c in owned
            if c.metadata.annotations.get(names.POD_CLAIM_NAME_ANNOTATION) == claim_name
        ),
        None,
    )


def sync_pod_group(
    group: PodGroup | None, view: GroupsView, *, admin_access: bool, prioritized_list: bool
) -> Plan:
    """upstream `syncPodGroup`: create the group's template claims, record them in its status."""
    if group is None:
        return Plan(reason="PodGroup is gone")
    if group.metadata.deletion_timestamp is not None:
        return Plan(reason="PodGroup is marked for deletion")
    meta = group.metadata
    writes: list[Write] = []
    statuses: list[tuple[str, str | CreatedFor]] = []
    for entry in group.resource_claims:
        outcome = _handle_group_claim(group, entry, view, admin_access, prioritized_list)
        if isinstance(outcome, _Failure):
            error = f"PodGroup {meta.namespace}/{meta.name}, PodGroupResourceClaim {entry.name}: "
            return Plan(writes=tuple(writes), error=error + outcome.message)
        if isinstance(outcome, CreateClaim):
            writes.append(outcome)
            statuses.append((entry.name, CreatedFor(entry.name)))
        elif isinstance(outcome, str):
            statuses.append((entry.name, outcome))
    if statuses:
        writes.append(
            ApplyPodClaimStatuses(
                namespace=meta.namespace,
                pod_name=meta.name,
                entries=tuple(statuses),
                kind="PodGroup",
                api_version=_api_version(group),
            )
        )
    return Plan(writes=tuple(writes))


def _handle_group_claim(
    group: PodGroup,
    entry: PodResourceClaim,
    view: GroupsView,
    admin_access: bool,
    prioritized_list: bool,
) -> CreateClaim | str | _Failure | None:
    """upstream `handlePodGroupClaim`: a claim to create, the name of one found (to record),
    None for nothing to do, or why it failed.

    A claim the status records counts as existing when the cache has it; upstream asks the API
    server too, here a claim missing from the cache is looked for among those the group owns.
    """
    namespace = group.metadata.namespace
    if entry.resource_claim_name is not None:
        return None  # a claim the group names itself is never created
    if entry.resource_claim_template_name is None:
        return _Failure(
            f"checking for claim before creating it: PodGroup {namespace}/"
            f"{group.metadata.name}, spec.resourceClaim {entry.name}: "
            "none of the supported fields are set"
        )
    recorded = next((s for s in group.resource_claim_statuses if s.name == entry.name), None)
    if recorded is not None:
        if recorded.resource_claim_name is None:
            return None
        claim = view.claim(namespace, recorded.resource_claim_name)
        if claim is not None and is_for_group(group, claim) is None:
            return None
    found = find_group_claim(group, entry.name, view)
    if found is not None:
        return found.metadata.name
    template_name = entry.resource_claim_template_name
    template = view.template(namespace, template_name)
    if template is None:
        return _Failure(
            f'resource claim template "{template_name}": '
            f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found'
        )
    requests = template.obj.spec.requests
    needs_admin = any(r.exactly is not None and r.exactly.admin_access for r in requests)
    if needs_admin and not admin_access:
        return _Failure("admin access is requested, but the feature is disabled")
    if not prioritized_list and any(r.first_available for r in requests):
        return _Failure(
            "template includes a prioritized list of subrequests, but the feature is disabled"
        )
    template_meta = template.obj.template_metadata
    return CreateClaim(
        namespace=namespace,
        pod_claim_name=entry.name,
        generate_name=generate_name(group.metadata.name, entry.name),
        pod_name=group.metadata.name,
        pod_uid=group.metadata.uid,
        api_version=str(template.raw.get("apiVersion") or "resource.k8s.io/v1"),
        labels=template_meta.labels,
        annotations=FrozenMap(
            {**template_meta.annotations, names.POD_CLAIM_NAME_ANNOTATION: entry.name}
        ),
        spec=(template.raw.get("spec") or {}).get("spec") or {},
        admin_access=needs_admin,
        owner_kind="PodGroup",
        owner_api_version=_api_version(group),
    )


def _api_version(group: PodGroup) -> str:
    return group.api_version or f"{PodGroup.API_GROUP}/{PodGroup.VERSIONS[0]}"
