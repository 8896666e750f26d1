"""Claims of a PodGroup (kube-controller-manager v1.37.2 `syncPodGroup`, `handleClaim` for
PodGroup members, `syncClaim` for PodGroup reservations)."""

from __future__ import annotations

from dataclasses import replace

from tests.unit.controllers.claims.builders import (
    NS,
    POD_CLAIM,
    TEMPLATE,
    TEMPLATE_SPEC,
    View,
    claim,
    pod,
    template,
    with_node,
)

from dra_operator import names
from dra_operator.controllers.claims import keys_for_claim, keys_for_pod_group, sync_claim, sync_pod
from dra_operator.controllers.claims._groups import sync_pod_group
from dra_operator.controllers.claims._writes import (
    ApplyPodClaimStatuses,
    CreateClaim,
    CreatedFor,
    DeleteClaim,
    PruneReservedFor,
    ReserveClaim,
)
from dra_operator.model import (
    ObjectMeta,
    OwnerReference,
    Pod,
    PodGroup,
    PodResourceClaim,
    PodResourceClaimStatus,
    ResourceClaim,
    ResourceClaimConsumerReference,
)

GROUP = "gang"
GROUP_UID = "uid-gang"
GROUP_CLAIM = "gang-acme-resource-a1b2c"


def group(*, recorded: str | None = None, uid: str = GROUP_UID) -> PodGroup:
    return PodGroup(
        metadata=ObjectMeta(name=GROUP, namespace=NS, uid=uid),
        api_version="scheduling.k8s.io/v1beta1",
        resource_claims=(PodResourceClaim(name=POD_CLAIM, resource_claim_template_name=TEMPLATE),),
        resource_claim_statuses=(
            PodResourceClaimStatus(name=POD_CLAIM, resource_claim_name=recorded),
        )
        if recorded
        else (),
    )


def member(name: str = "worker-0", **kwargs: object) -> Pod:
    p = pod(name, f"uid-{name}", template_claims=[POD_CLAIM], **kwargs)  # type: ignore[arg-type]
    return replace(p, spec=replace(p.spec, pod_group_name=GROUP))


def group_claim(
    *, allocated: bool = False, reserved: tuple[ResourceClaimConsumerReference, ...] = ()
) -> ResourceClaim:
    c = claim(GROUP_CLAIM, owned_by=None, pod_claim=POD_CLAIM, allocated=allocated)
    owner = OwnerReference(
        api_version="scheduling.k8s.io/v1beta1",
        kind="PodGroup",
        name=GROUP,
        uid=GROUP_UID,
        controller=True,
    )
    return replace(
        c,
        metadata=replace(c.metadata, owner_references=(owner,)),
        status=replace(c.status, reserved_for=reserved),
    )


GROUP_REF = ResourceClaimConsumerReference(
    api_group="scheduling.k8s.io", resource="podgroups", name=GROUP, uid=GROUP_UID
)


def test_a_group_template_claim_is_created_for_and_owned_by_the_group() -> None:
    view = View(templates=[template()], groups=[group()])
    plan = sync_pod_group(group(), view, admin_access=True, prioritized_list=True)
    create, record = plan.writes
    assert isinstance(create, CreateClaim)
    manifest = create.manifest()
    assert manifest["metadata"] == {
        "generateName": f"{GROUP}-{POD_CLAIM}-",
        "namespace": NS,
        "ownerReferences": [
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "name": GROUP,
                "uid": GROUP_UID,
                "controller": True,
            }
        ],
        "annotations": {"team": "ml", names.POD_CLAIM_NAME_ANNOTATION: POD_CLAIM},
    }
    assert manifest["spec"] == TEMPLATE_SPEC
    assert record == ApplyPodClaimStatuses(
        namespace=NS,
        pod_name=GROUP,
        entries=((POD_CLAIM, CreatedFor(POD_CLAIM)),),
        kind="PodGroup",
        api_version="scheduling.k8s.io/v1beta1",
    )
    body = record.apply_body({POD_CLAIM: GROUP_CLAIM})
    assert body["kind"] == "PodGroup"
    assert body["status"] == {
        "resourceClaimStatuses": [{"name": POD_CLAIM, "resourceClaimName": GROUP_CLAIM}]
    }


def test_a_recorded_group_claim_is_not_created_again() -> None:
    view = View(templates=[template()], claims=[group_claim()], groups=[group()])
    assert (
        sync_pod_group(
            group(recorded=GROUP_CLAIM), view, admin_access=True, prioritized_list=True
        ).writes
        == ()
    )


def test_a_group_claim_made_but_not_recorded_is_recorded() -> None:
    view = View(templates=[template()], claims=[group_claim()], groups=[group()])
    plan = sync_pod_group(group(), view, admin_access=True, prioritized_list=True)
    (record,) = plan.writes
    assert isinstance(record, ApplyPodClaimStatuses)
    assert record.entries == ((POD_CLAIM, GROUP_CLAIM),)


def test_a_missing_template_fails_like_upstream() -> None:
    plan = sync_pod_group(group(), View(groups=[group()]), admin_access=True, prioritized_list=True)
    assert plan.error == (
        f"PodGroup {NS}/{GROUP}, PodGroupResourceClaim {POD_CLAIM}: resource claim template "
        f'"{TEMPLATE}": resourceclaimtemplate.resource.k8s.io "{TEMPLATE}" not found'
    )


def test_a_member_waits_for_the_group_claim_then_records_it() -> None:
    waiting = View(templates=[template()], groups=[group()], pods=[member()])
    assert sync_pod(member(), waiting).writes == ()  # no claim of its own is ever made
    ready = View(templates=[template()], groups=[group()], claims=[group_claim()])
    (record,) = sync_pod(member(), ready).writes
    assert isinstance(record, ApplyPodClaimStatuses)
    assert record.kind == "Pod"
    assert record.entries == ((POD_CLAIM, GROUP_CLAIM),)


def test_a_member_of_an_unknown_group_is_retried() -> None:
    plan = sync_pod(member(), View(templates=[template()], groups=[]))
    assert plan.error == (
        f'get PodGroup for Pod {NS}/worker-0: podgroup.scheduling.k8s.io "{GROUP}" not found'
    )


def test_without_pod_groups_served_a_member_is_a_plain_pod() -> None:
    (create, _) = sync_pod(member(), View(templates=[template()])).writes
    assert isinstance(create, CreateClaim)
    assert create.owner_kind == "Pod"


def test_a_bound_member_reserves_the_group_claim_for_the_group() -> None:
    bound = with_node(member(statuses=[(POD_CLAIM, GROUP_CLAIM)]))
    view = View(groups=[group(recorded=GROUP_CLAIM)], claims=[group_claim(allocated=True)])
    (reserve,) = sync_pod(bound, view).writes
    assert isinstance(reserve, ReserveClaim)
    assert reserve.consumer == GROUP_REF


def test_a_claim_reserved_for_the_group_counts_for_every_member() -> None:
    view = View(
        groups=[group(recorded=GROUP_CLAIM)],
        claims=[group_claim(allocated=True, reserved=(GROUP_REF,))],
    )
    for name in ("worker-0", "worker-1"):
        bound = with_node(member(name, statuses=[(POD_CLAIM, GROUP_CLAIM)]))
        assert sync_pod(bound, view).writes == ()


def test_the_group_reservation_stays_while_the_group_exists() -> None:
    held = group_claim(allocated=True, reserved=(GROUP_REF,))
    plan = sync_claim(held, View(groups=[group()], claims=[held]))
    assert plan.writes == ()  # type: ignore[union-attr]


def test_a_deleted_group_releases_and_deletes_its_claim() -> None:
    held = group_claim(allocated=True, reserved=(GROUP_REF,))
    held = replace(
        held,
        metadata=replace(held.metadata, finalizers=(names.DELETE_PROTECTION_FINALIZER,)),
    )
    plan = sync_claim(held, View(groups=[], claims=[held]))
    prune, _finalizer, delete = plan.writes  # type: ignore[union-attr]
    assert isinstance(prune, PruneReservedFor)
    assert prune.reserved_for == ()
    assert prune.deallocate
    assert isinstance(delete, DeleteClaim)


def test_events_of_groups_and_their_claims() -> None:
    members = [member("worker-0"), member("worker-1")]
    view = View(templates=[template()], groups=[group()], pods=members)
    keys = {str(k) for k in keys_for_pod_group(group(), view, view)}
    assert keys == {f"podgroup:{NS}/{GROUP}", f"pod:{NS}/worker-0", f"pod:{NS}/worker-1"}
    gone = {
        str(k) for k in keys_for_pod_group(group(recorded=GROUP_CLAIM), view, view, deleted=True)
    }
    assert gone == {f"claim:{NS}/{GROUP_CLAIM}"}
    assert f"podgroup:{NS}/{GROUP}" in {str(k) for k in keys_for_claim(group_claim(), view, view)}
