"""Consumer invariants: live reservations, ready claims of bound pods, owned generated claims,
and the delete-protection finalizer (a warning)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dra_operator.model import Node, Pod, ResourceClaim, ResourceClaimConsumerReference
from dra_operator.verify import RESERVED_FOR_MAX_SIZE, ClusterState, Code, Severity, check

from .builders import claim, device, node, on_node, pod, ref, resource_slice, result

SLICES = (resource_slice("s", [device("gpu-0"), device("gpu-1")]),)
GPU = [result("gpu-0")]
NODES = [node("n1", zone="a"), node("n2", zone="b")]

Expected = list[tuple[Severity, Code, str, str]]


def _run(claims: list[ResourceClaim], pods: list[Pod], nodes: list[Node] = NODES) -> Expected:
    state = ClusterState(claims=tuple(claims), slices=SLICES, pods=tuple(pods), nodes=tuple(nodes))
    return [(v.severity, v.code, v.kind, v.name) for v in check(state)]


def _error(code: Code, kind: str, name: str) -> tuple[Severity, Code, str, str]:
    return (Severity.ERROR, code, kind, name)


CLEAN = [
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")])],
        [pod("p", claims={"gpu": "a"}, node="n1", phase="Running")],
        id="bound-pod-uses-its-claim-directly",
    ),
    pytest.param(
        [claim("p-gpu-x", GPU, reserved=[ref("p")], owner="p")],
        [pod("p", templates={"gpu": "t"}, generated={"gpu": "p-gpu-x"}, node="n1")],
        id="bound-pod-uses-a-generated-claim",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p"), ref("q")])],
        [pod("p", claims={"gpu": "a"}, node="n1"), pod("q", claims={"gpu": "a"})],
        id="shared-claim-reserved-before-binding",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")])],
        [pod("p", extended="a", node="n1")],
        id="extended-resource-claim",
    ),
    pytest.param(
        [],
        [pod("p", templates={"gpu": "t"}, generated={"gpu": None}, node="n1")],
        id="template-claim-not-needed",
    ),
    pytest.param(
        [claim("a", GPU)],
        [pod("p", claims={"gpu": "a"}, node="n1", phase="Succeeded")],
        id="finished-pod-needs-no-reservation",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")], node_selector=on_node("n1"))],
        [pod("p", claims={"gpu": "a"}, node="n1")],
        id="node-selector-admits-node",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")], node_selector=on_node("gone"))],
        [pod("p", claims={"gpu": "a"}, node="gone")],
        id="node-object-missing",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")])],
        [pod("p", claims={"gpu": "a"}, node="n1", deleting=True)],
        id="bound-pod-being-deleted-keeps-reservation",
    ),
    pytest.param(
        [claim("p-gpu-x", GPU, owner="p", deleting=True)],
        [],
        id="generated-claim-being-deleted",
    ),
    pytest.param([claim("a")], [pod("p", claims={"gpu": "a"})], id="pending-pod-unallocated"),
]


@pytest.mark.parametrize(("claims", "pods"), CLEAN)
def test_clean_states_have_no_violations(claims: list[ResourceClaim], pods: list[Pod]) -> None:
    assert _run(claims, pods) == []


def _many_refs(n: int) -> list[ResourceClaimConsumerReference]:
    return [ref(f"p{i}") for i in range(n)]


VIOLATING = [
    pytest.param(
        [claim("a", GPU, reserved=[ref("ghost")])],
        [],
        [_error(Code.RESERVATION_STALE, "ResourceClaim", "ns/a")],
        id="reserved-for-missing-pod",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p", uid="old")])],
        [pod("p", claims={"gpu": "a"})],
        [_error(Code.RESERVATION_STALE, "ResourceClaim", "ns/a")],
        id="reserved-for-replaced-pod",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")])],
        [pod("p", claims={"gpu": "a"}, node="n1", phase="Failed")],
        [_error(Code.RESERVATION_STALE, "ResourceClaim", "ns/a")],
        id="reserved-for-terminated-pod",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")])],
        [pod("p", claims={"gpu": "a"}, deleting=True)],
        [_error(Code.RESERVATION_STALE, "ResourceClaim", "ns/a")],
        id="reserved-for-pod-deleted-before-scheduling",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")])],
        [pod("p", claims={"gpu": "b"})],
        [_error(Code.RESERVATION_STALE, "ResourceClaim", "ns/a")],
        id="reserved-for-pod-that-does-not-use-it",
    ),
    pytest.param(
        [
            claim(
                "a",
                GPU,
                reserved=[
                    ResourceClaimConsumerReference(
                        api_group="scheduling.k8s.io", resource="podgroups", name="g", uid="u"
                    )
                ],
            )
        ],
        [],
        [_error(Code.RESERVATION_STALE, "ResourceClaim", "ns/a")],
        id="reserved-for-non-pod",
    ),
    pytest.param(
        [claim("a", GPU, reserved=_many_refs(RESERVED_FOR_MAX_SIZE + 1))],
        [pod(f"p{i}", claims={"gpu": "a"}) for i in range(RESERVED_FOR_MAX_SIZE + 1)],
        [_error(Code.RESERVED_FOR_INVALID, "ResourceClaim", "ns/a")],
        id="too-many-reservations",
    ),
    pytest.param(
        [claim("a", GPU, reserved=_many_refs(RESERVED_FOR_MAX_SIZE))],
        [pod(f"p{i}", claims={"gpu": "a"}) for i in range(RESERVED_FOR_MAX_SIZE)],
        [],
        id="as-many-reservations-as-allowed",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p"), ref("p")])],
        [pod("p", claims={"gpu": "a"})],
        [_error(Code.RESERVED_FOR_INVALID, "ResourceClaim", "ns/a")],
        id="duplicate-reservation",
    ),
    pytest.param(
        [],
        [pod("p", claims={"gpu": "a"}, node="n1")],
        [_error(Code.POD_CLAIM_MISSING, "Pod", "ns/p")],
        id="bound-pod-claim-missing",
    ),
    pytest.param(
        [],
        [pod("p", templates={"gpu": "t"}, node="n1")],
        [_error(Code.POD_CLAIM_MISSING, "Pod", "ns/p")],
        id="bound-pod-template-claim-not-created",
    ),
    pytest.param(
        [claim("a")],
        [pod("p", claims={"gpu": "a"}, node="n1")],
        [_error(Code.POD_CLAIM_UNALLOCATED, "Pod", "ns/p")],
        id="bound-pod-claim-unallocated",
    ),
    pytest.param(
        [claim("a", GPU)],
        [pod("p", claims={"gpu": "a"}, node="n1", phase="Running")],
        [_error(Code.POD_CLAIM_UNRESERVED, "Pod", "ns/p")],
        id="bound-pod-claim-unreserved",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")], node_selector=on_node("n2"))],
        [pod("p", claims={"gpu": "a"}, node="n1")],
        [_error(Code.POD_NODE_NOT_ADMITTED, "Pod", "ns/p")],
        id="bound-pod-on-node-its-claim-excludes",
    ),
    pytest.param(
        [claim("a")],
        [pod("p", extended="a", node="n1")],
        [_error(Code.POD_CLAIM_UNALLOCATED, "Pod", "ns/p")],
        id="extended-resource-claim-unallocated",
    ),
    pytest.param(
        [claim("p-gpu-x", owner="p")],
        [],
        [_error(Code.OWNER_MISSING, "ResourceClaim", "ns/p-gpu-x")],
        id="generated-claim-owner-gone",
    ),
    pytest.param(
        [
            claim(
                "p-extended-x",
                owner="p",
                annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
            )
        ],
        [],
        [_error(Code.OWNER_MISSING, "ResourceClaim", "ns/p-extended-x")],
        id="extended-resource-claim-owner-gone",
    ),
    pytest.param(
        [claim("a", owner="p", annotations={"unrelated": "x"})],
        [],
        [],
        id="pod-owned-claim-not-generated-is-not-checked",
    ),
    pytest.param(
        [claim("p-gpu-x", owner="p", owner_uid="old")],
        [pod("p", templates={"gpu": "t"}, generated={"gpu": "p-gpu-x"})],
        [_error(Code.OWNER_MISSING, "ResourceClaim", "ns/p-gpu-x")],
        id="generated-claim-owner-replaced",
    ),
    pytest.param(
        [claim("p-gpu-x", owner="p")],
        [pod("p", templates={"gpu": "t"}, generated={"gpu": "p-gpu-x"}, phase="Succeeded")],
        [_error(Code.OWNER_MISSING, "ResourceClaim", "ns/p-gpu-x")],
        id="generated-claim-owner-finished",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("p")], finalizer=False)],
        [pod("p", claims={"gpu": "a"}, node="n1")],
        [(Severity.WARNING, Code.FINALIZER_MISSING, "ResourceClaim", "ns/a")],
        id="allocated-without-finalizer-warns",
    ),
    pytest.param(
        [claim("a", GPU, reserved=[ref("ghost")], finalizer=False)],
        [pod("p", claims={"gpu": "a"}, node="n1")],
        [
            _error(Code.POD_CLAIM_UNRESERVED, "Pod", "ns/p"),
            _error(Code.RESERVATION_STALE, "ResourceClaim", "ns/a"),
            (Severity.WARNING, Code.FINALIZER_MISSING, "ResourceClaim", "ns/a"),
        ],
        id="errors-sort-before-warnings",
    ),
]


@pytest.mark.parametrize(("claims", "pods", "expected"), VIOLATING)
def test_violating_states_report_exactly_their_violations(
    claims: list[ResourceClaim], pods: list[Pod], expected: Expected
) -> None:
    assert _run(claims, pods) == expected


@pytest.mark.parametrize(("claims", "pods", "expected"), VIOLATING)
def test_violations_are_sentences(
    claims: list[ResourceClaim], pods: list[Pod], expected: Expected
) -> None:
    state = ClusterState(claims=tuple(claims), slices=SLICES, pods=tuple(pods), nodes=tuple(NODES))
    for violation in check(state):
        assert violation.message[0].isupper()
        assert violation.message.endswith(".")


@given(
    claims_per_pod=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=5),
    victim=st.integers(min_value=0),
)
def test_consistent_pods_are_clean_and_a_lost_reservation_is_caught(
    claims_per_pod: list[int], victim: int
) -> None:
    slices = (resource_slice("s", [device(f"gpu-{i}") for i in range(sum(claims_per_pod))]),)
    claims: list[ResourceClaim] = []
    pods: list[Pod] = []
    for p, count in enumerate(claims_per_pod):
        names = {f"c{p}-{i}": f"p{p}-c{i}" for i in range(count)}
        for claim_name in names.values():
            claims.append(
                claim(claim_name, [result(f"gpu-{len(claims)}")], reserved=[ref(f"p{p}")])
            )
        pods.append(pod(f"p{p}", claims=names, node="n1", phase="Running"))

    def run(claims: list[ResourceClaim]) -> list[tuple[Code, str, str]]:
        state = ClusterState(
            claims=tuple(claims), slices=slices, pods=tuple(pods), nodes=tuple(NODES)
        )
        return [(v.code, v.kind, v.name) for v in check(state)]

    assert run(claims) == []
    if claims:
        lost = victim % len(claims)
        owner = claims[lost].status.reserved_for[0].name
        claims[lost] = replace(claims[lost], status=replace(claims[lost].status, reserved_for=()))
        assert run(claims) == [(Code.POD_CLAIM_UNRESERVED, "Pod", f"ns/{owner}")]
