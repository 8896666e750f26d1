"""Claim name resolution, ownership, the 57-character generateName, and when pods need work."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dra_operator.controllers.claims import (
    MAX_GENERATE_NAME,
    Resolved,
    Unresolved,
    generate_name,
    is_for_pod,
    is_pod_done,
    pod_needs_claims,
    pod_needs_work,
    resolve,
)
from dra_operator.model import Pod

from .builders import (
    GENERATED,
    NS,
    OTHER_POD,
    POD_CLAIM,
    POD_WITH_RESOURCE,
    View,
    claim,
    pod,
    with_node,
)


@pytest.mark.parametrize(
    ("pod_name", "claim_name", "expected"),
    [
        pytest.param("test-pod", "acme-resource", "test-pod-acme-resource-", id="short"),
        pytest.param("p" * 27, "c" * 28, "p" * 27 + "-" + "c" * 28 + "-", id="exactly-57"),
        pytest.param("p" * 28, "c" * 28, "p" * 27 + "-" + "c" * 27, id="58-cut-both"),
        pytest.param("p" * 50, "c" * 20, "p" * 39 + "-" + "c" * 15, id="long-pod-keeps-claim"),
        pytest.param("p" * 5, "c" * 100, "p" * 2 + "-" + "c" * 53, id="long-claim"),
    ],
)
def test_generate_name_truncates_proportionally(
    pod_name: str, claim_name: str, expected: str
) -> None:
    name = generate_name(pod_name, claim_name)
    assert name == expected
    assert len(name) <= MAX_GENERATE_NAME


names_ = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=253)


@given(names_, names_.filter(lambda n: len(n) <= 63))
def test_generate_name_is_a_prefix_of_each_part_within_57(pod_name: str, claim: str) -> None:
    name = generate_name(pod_name, claim)
    assert len(name) <= MAX_GENERATE_NAME
    if len(pod_name) + len(claim) + 2 <= MAX_GENERATE_NAME:
        assert name == f"{pod_name}-{claim}-"
        return
    splits = [
        i
        for i in range(len(pod_name) + 1)
        if name[:i] == pod_name[:i] and name[i : i + 1] == "-" and claim.startswith(name[i + 1 :])
    ]
    whole = len(pod_name) + len(claim) + 2

    def proportional(i: int) -> bool:
        """Both parts shrank by the same factor, to within rounding down."""
        j = len(name) - i - 1
        pod_share = len(pod_name) * MAX_GENERATE_NAME / whole
        claim_share = len(claim) * MAX_GENERATE_NAME / whole
        return 0 <= pod_share - i < 1 and 0 <= claim_share - j < 1

    assert any(proportional(i) for i in splits)  # pod prefix, one dash, claim prefix


def test_resolution_of_each_kind_of_entry() -> None:
    subject = pod(
        template_claims=["made", "skipped", "pending"],
        claim_refs=[("shared", "team-gpu")],
        statuses=[("made", GENERATED), ("skipped", None)],
    )
    made, skipped, pending, shared = subject.spec.resource_claims
    assert resolve(subject, made) == Resolved(GENERATED, must_check_owner=True)
    assert resolve(subject, skipped) == Resolved(None, must_check_owner=True)
    assert resolve(subject, shared) == Resolved("team-gpu", must_check_owner=False)
    assert resolve(subject, pending) == Unresolved(
        f'pod "{NS}/test-pod": ResourceClaim not created yet', not_created=True
    )


def test_ownership_errors_use_upstream_text() -> None:
    assert is_for_pod(POD_WITH_RESOURCE, claim()) is None
    assert is_for_pod(POD_WITH_RESOURCE, claim(owned_by=OTHER_POD)) == (
        f"ResourceClaim {NS}/test-pod-acme-resource was not created for Pod {NS}/test-pod "
        "(Pod is not owner)"
    )
    assert is_for_pod(POD_WITH_RESOURCE, claim(namespace="elsewhere")) == (
        f"ResourceClaim elsewhere/test-pod-acme-resource is not in the same namespace as "
        f"Pod {NS}/test-pod"
    )


@pytest.mark.parametrize(
    ("subject", "done", "needs_claims"),
    [
        pytest.param(pod(), False, True, id="pending"),
        pytest.param(pod(phase="Succeeded"), True, False, id="succeeded"),
        pytest.param(pod(phase="Failed"), True, False, id="failed"),
        pytest.param(pod(deleting=True), True, False, id="deleted-before-scheduling"),
        pytest.param(with_node(pod(deleting=True)), False, True, id="deleted-while-bound"),
    ],
)
def test_pod_done_and_needing_claims(subject: Pod, done: bool, needs_claims: bool) -> None:
    assert is_pod_done(subject) is done
    assert pod_needs_claims(subject, deleted=False)[0] is needs_claims
    assert pod_needs_claims(subject, deleted=True) == (False, "pod got removed")


WITH_STATUS = pod(template_claims=[POD_CLAIM], statuses=[(POD_CLAIM, GENERATED)])
ALLOCATED = claim(GENERATED, pod_claim=POD_CLAIM, allocated=True)


@pytest.mark.parametrize(
    ("subject", "view", "expected"),
    [
        pytest.param(
            POD_WITH_RESOURCE,
            View(),
            (True, f'pod "{NS}/test-pod": ResourceClaim not created yet'),
            id="template-claim-not-created",
        ),
        pytest.param(
            WITH_STATUS,
            View(),
            (True, "must create ResourceClaim from template"),
            id="generated-claim-missing",
        ),
        pytest.param(
            WITH_STATUS,
            View(claims=[ALLOCATED]),
            (False, "nothing to do for any claim: "),
            id="unbound-pod-with-claim",
        ),
        pytest.param(
            with_node(WITH_STATUS),
            View(claims=[ALLOCATED]),
            (True, f"need to reserve claim {NS}/{GENERATED}"),
            id="bound-pod-unreserved",
        ),
        pytest.param(
            with_node(WITH_STATUS),
            View(claims=[claim(GENERATED, allocated=True, reserved_for=[WITH_STATUS])]),
            (False, "nothing to do for any claim: "),
            id="bound-pod-reserved",
        ),
        pytest.param(
            pod(template_claims=[POD_CLAIM], deleting=True),
            View(),
            (False, "pod is deleted"),
            id="deleted",
        ),
        pytest.param(
            pod(template_claims=[POD_CLAIM], statuses=[(POD_CLAIM, None)]),
            View(),
            (False, f"nothing to do for any claim: claim {POD_CLAIM} is not needed"),
            id="not-needed",
        ),
        pytest.param(
            pod(claim_refs=[("shared", "team-gpu")]),
            View(),
            (
                False,
                "nothing to do for any claim: "
                "ResourceClaim for claim shared is missing and must be created",
            ),
            id="user-claim-missing",
        ),
        pytest.param(
            WITH_STATUS,
            View(claims=[claim(GENERATED, owned_by=OTHER_POD)]),
            (
                False,
                f"nothing to do for any claim: claim {POD_CLAIM}: "
                f"ResourceClaim {NS}/{GENERATED} was not created for Pod {NS}/test-pod "
                "(Pod is not owner)",
            ),
            id="foreign-claim",
        ),
    ],
)
def test_pod_needs_work(subject: Pod, view: View, expected: tuple[bool, str]) -> None:
    assert pod_needs_work(subject, view) == expected
