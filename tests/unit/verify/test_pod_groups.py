"""Group reservations (DRAWorkloadResourceClaims): a PodGroup's claim reserved for the group
serves each member pod; a stale group reservation or an orphaned group claim is caught."""

from __future__ import annotations

from dataclasses import replace

from dra_operator.model import (
    ObjectMeta,
    OwnerReference,
    Pod,
    PodGroup,
    ResourceClaim,
    ResourceClaimConsumerReference,
)
from dra_operator.verify import ClusterState, Code, check

from .builders import NS, claim, device, pod, resource_slice, result

SLICES = (resource_slice("s", [device("gpu-0")]),)


def group(uid: str = "uid-gang") -> PodGroup:
    return PodGroup(metadata=ObjectMeta(name="gang", namespace=NS, uid=uid))


def group_ref(uid: str = "uid-gang") -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference(
        api_group="scheduling.k8s.io", resource="podgroups", name="gang", uid=uid
    )


def group_claim(reserved: tuple[ResourceClaimConsumerReference, ...]) -> ResourceClaim:
    c = claim(
        "gang-gpu-x",
        [result("gpu-0")],
        reserved=reserved,
        annotations={"resource.kubernetes.io/pod-claim-name": "gpu"},
    )
    owner = OwnerReference(
        api_version="scheduling.k8s.io/v1beta1",
        kind="PodGroup",
        name="gang",
        uid="uid-gang",
        controller=True,
    )
    return replace(c, metadata=replace(c.metadata, owner_references=(owner,)))


def member(name: str) -> Pod:
    p = pod(name, templates={"gpu": "t"}, generated={"gpu": "gang-gpu-x"}, node="n1")
    return replace(p, spec=replace(p.spec, pod_group_name="gang"))


def codes(
    claims: list[ResourceClaim], pods: list[Pod], groups: list[PodGroup] | None
) -> list[tuple[Code, str]]:
    state = ClusterState(
        claims=tuple(claims),
        slices=SLICES,
        pods=tuple(pods),
        pod_groups=None if groups is None else tuple(groups),
    )
    return [(v.code, v.message) for v in check(state)]


def test_a_group_reservation_serves_every_member() -> None:
    members = [member("worker-0"), member("worker-1")]
    assert codes([group_claim((group_ref(),))], members, [group()]) == []


def test_a_member_whose_claim_is_reserved_for_nobody_is_caught() -> None:
    found = codes([group_claim(())], [member("worker-0")], [group()])
    assert [c for c, _ in found] == [Code.POD_CLAIM_UNRESERVED]


def test_a_reservation_for_a_gone_group_is_stale() -> None:
    found = codes([group_claim((group_ref(),))], [], [])
    assert (
        Code.RESERVATION_STALE,
        f"The claim is reserved for PodGroup {NS}/gang, which does not exist.",
    ) in found
    assert (
        Code.OWNER_MISSING,
        f"The claim was generated for PodGroup {NS}/gang, which no longer exists.",
    ) in found


def test_a_reservation_for_a_replaced_group_is_stale() -> None:
    found = codes([group_claim((group_ref(),))], [], [group("uid-new")])
    assert (
        Code.RESERVATION_STALE,
        f"The claim is reserved for PodGroup {NS}/gang with UID uid-gang, but that PodGroup "
        "has UID uid-new.",
    ) in found
