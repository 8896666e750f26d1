"""Generated claim names per release (classic-dra.md §5.1): 1.26–1.27 name the claim
`<pod>-<pod claim>` and record nothing in the pod, 1.28 generates from `<pod>-<pod claim>`,
1.29+ from `<pod>-<pod claim>-`; the pod parse makes up 1.27's missing status entries."""

from __future__ import annotations

import pytest

from dra_operator import names
from dra_operator.controllers.claims import (
    ClaimsFeatures,
    CreateClaim,
    creation_failed,
    generate_name,
    sync_pod,
)
from dra_operator.model import (
    ClaimNaming,
    FrozenMap,
    PodResourceClaimStatus,
    is_for_pod,
    parse_pod,
    resolve_claim,
)

from .builders import (
    NS,
    OTHER_POD,
    POD_CLAIM,
    POD_NAME,
    POD_UID,
    TEMPLATE,
    View,
    claim,
    template,
)

DETERMINISTIC = ClaimsFeatures(naming=ClaimNaming.DETERMINISTIC)
NAME = f"{POD_NAME}-{POD_CLAIM}"


def raw_pod(**status: object) -> dict[str, object]:
    return {
        "metadata": {"name": POD_NAME, "namespace": NS, "uid": POD_UID},
        "spec": {
            "containers": [{"name": "c", "image": "i"}],
            "resourceClaims": [
                {"name": POD_CLAIM, "source": {"resourceClaimTemplateName": TEMPLATE}},
                {"name": "own", "source": {"resourceClaimName": "shared"}},
            ],
        },
        "status": status,
    }


@pytest.mark.parametrize(
    ("minor", "naming"),
    [
        (26, ClaimNaming.DETERMINISTIC),
        (27, ClaimNaming.DETERMINISTIC),
        (28, ClaimNaming.GENERATED),
        (29, ClaimNaming.GENERATED_WITH_DASH),
        (37, ClaimNaming.GENERATED_WITH_DASH),
    ],
)
def test_each_release_names_claims_its_own_way(minor: int, naming: ClaimNaming) -> None:
    assert ClaimNaming.for_minor(minor) is naming


def test_a_1_27_pod_names_its_template_claims_deterministically() -> None:
    pod = parse_pod(raw_pod(phase="Pending"), deterministic_claim_names=True)
    assert pod.status.resource_claim_statuses == (
        PodResourceClaimStatus(name=POD_CLAIM, resource_claim_name=NAME),
    )
    entry, own = pod.spec.resource_claims
    resolved = resolve_claim(pod, entry)
    assert (resolved.name, resolved.must_check_owner) == (NAME, True)  # type: ignore[union-attr]
    assert resolve_claim(pod, own).name == "shared"  # type: ignore[union-attr]


def test_a_newer_pod_without_statuses_has_its_claims_not_created_yet() -> None:
    pod = parse_pod(raw_pod())
    resolved = resolve_claim(pod, pod.spec.resource_claims[0])
    assert getattr(resolved, "not_created", False)


def test_1_27_creates_the_claim_by_name_and_records_nothing_in_the_pod() -> None:
    pod = parse_pod(raw_pod(), deterministic_claim_names=True)
    plan = sync_pod(pod, View(templates=[template()]), DETERMINISTIC)
    assert plan.error is None
    (write,) = plan.writes
    assert isinstance(write, CreateClaim)
    assert (write.name, write.generate_name, write.annotations) == (
        NAME,
        "",
        FrozenMap({"team": "ml"}),
    )
    metadata = write.manifest()["metadata"]
    assert metadata["name"] == NAME
    assert "generateName" not in metadata
    assert write.is_created_by({"metadata": {**metadata, "uid": "u"}})
    assert not write.is_created_by({"metadata": {**metadata, "name": NAME + "-x"}})


def test_1_27_needs_nothing_once_its_claim_exists() -> None:
    pod = parse_pod(raw_pod(), deterministic_claim_names=True)
    view = View(templates=[template()], claims=[claim(NAME, owned_by=pod)])
    assert sync_pod(pod, view, DETERMINISTIC).writes == ()


def test_1_27_reports_a_claim_of_that_name_owned_by_another_pod() -> None:
    pod = parse_pod(raw_pod(), deterministic_claim_names=True)
    taken = claim(NAME, owned_by=OTHER_POD)
    problem = is_for_pod(pod, taken)
    assert problem is not None
    plan = sync_pod(pod, View(templates=[template()], claims=[taken]), DETERMINISTIC)
    assert plan.writes == (creation_failed(pod, POD_CLAIM, problem),)
    assert plan.error is not None and "Pod is not owner" in plan.error


def test_1_27_does_not_adopt_an_annotated_orphan() -> None:
    """1.28 introduced the annotation and the orphan search; 1.27 knows only the name."""
    pod = parse_pod(raw_pod(), deterministic_claim_names=True)
    orphan = claim(f"{POD_NAME}-{POD_CLAIM}-abcde", owned_by=pod, pod_claim=POD_CLAIM)
    plan = sync_pod(pod, View(templates=[template()], claims=[orphan]), DETERMINISTIC)
    assert [w.name for w in plan.writes if isinstance(w, CreateClaim)] == [NAME]


def test_1_28_generates_names_without_the_last_dash() -> None:
    pod = parse_pod(raw_pod())
    plan = sync_pod(pod, View(templates=[template()]), ClaimsFeatures(naming=ClaimNaming.GENERATED))
    create = plan.writes[0]
    assert isinstance(create, CreateClaim)
    assert (create.generate_name, create.name) == (NAME, "")
    assert create.annotations[names.POD_CLAIM_NAME_ANNOTATION] == POD_CLAIM


@pytest.mark.parametrize(("pod_name", "pod_claim"), [("p" * 40, "c" * 30), ("p" * 5, "c" * 60)])
def test_1_28_truncates_like_1_29_but_counts_no_dash(pod_name: str, pod_claim: str) -> None:
    base = len(pod_name) + 1 + len(pod_claim)
    cut = generate_name(pod_name, pod_claim, dash=False)
    assert (
        cut
        == f"{pod_name[: len(pod_name) * 57 // base]}-{pod_claim[: len(pod_claim) * 57 // base]}"
    )
    assert len(cut) <= 57
