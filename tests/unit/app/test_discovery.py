"""Choosing what to speak from what the server serves.

Covers: a v1alpha2 server's resources as the operator's kinds (ResourceClasses for
DeviceClasses, no slices or parameter objects, `resourceclasses` in URLs); the newest served
version per DRA kind (a kind served only in an older version keeps
it); the minor from /version, including managed clusters' "36+" and a missing `minor` field;
allocator features per release, with releases newer than we know treated as our newest.
"""

from __future__ import annotations

import pytest

from dra_operator import errors
from dra_operator.allocator import Features
from dra_operator.app import ServerInfo, features_for, newest_versions
from dra_operator.app._discovery import classic_plurals
from dra_operator.kube import release_minor


@pytest.mark.parametrize(
    ("served", "expected"),
    [
        pytest.param(
            {"v1": ["resourceclaims"], "v1beta2": ["resourceclaims", "devicetaintrules"]},
            {"resourceclaims": "v1", "devicetaintrules": "v1beta2"},
            id="taint-rules-only-in-beta",
        ),
        pytest.param(
            {"v1alpha3": ["devicetaintrules"], "v1beta1": ["resourceclaims"]},
            {"resourceclaims": "v1beta1", "devicetaintrules": "v1alpha3"},
            id="older-server",
        ),
        pytest.param({}, {}, id="nothing-served"),
    ],
)
def test_newest_versions(served: dict[str, list[str]], expected: dict[str, str]) -> None:
    assert newest_versions(served) == expected


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        pytest.param({"gitVersion": "v1.36.4", "minor": "36"}, ("v1.36.4", 36), id="plain"),
        pytest.param(
            {"gitVersion": "v1.35.2-gke.1", "minor": "35+"}, ("v1.35.2-gke.1", 35), id="plus"
        ),
        pytest.param({"gitVersion": "v1.34.0"}, ("v1.34.0", 34), id="no-minor-field"),
    ],
)
def test_release_minor(doc: dict[str, str], expected: tuple[str, int]) -> None:
    assert release_minor(doc) == expected


def test_release_minor_without_any_version_fails() -> None:
    with pytest.raises(errors.DRAOperatorError, match="no minor version"):
        release_minor({"gitVersion": "devel"})


@pytest.mark.parametrize(
    ("minor", "expected"),
    [
        pytest.param(36, Features.for_kubernetes("1.36"), id="known"),
        pytest.param(40, Features.for_kubernetes("1.37"), id="newer-than-known"),
    ],
)
def test_features_for(minor: int, expected: Features) -> None:
    assert features_for(minor) == expected


@pytest.mark.parametrize(
    ("minor", "release"),
    [
        pytest.param(34, 36, id="1.34"),
        pytest.param(36, 36, id="1.36"),
        pytest.param(37, 37, id="1.37"),
    ],
)
def test_a_server_release_picks_the_allocator_rules(minor: int, release: int) -> None:
    """A 1.37 server gets 1.37's ungated allocator behaviour, older ones 1.36's."""
    assert features_for(minor).release == release
    assert features_for(minor).since_137 is (release == 37)


def test_features_for_a_release_older_than_dra_fails() -> None:
    with pytest.raises(errors.AllocationInputError):
        features_for(26)


@pytest.mark.parametrize(
    ("versions", "minor", "expected"),
    [
        pytest.param({"devicetaintrules": "v1beta2"}, 36, True, id="served-1.36"),
        pytest.param({"devicetaintrules": "v1alpha3"}, 35, False, id="served-without-taints"),
        pytest.param({}, 36, False, id="not-served"),
    ],
)
def test_taint_rules_are_in_effect_when_served_and_taints_are_on(
    versions: dict[str, str], minor: int, expected: bool
) -> None:
    info = ServerInfo(f"v1.{minor}.0", minor, versions, features_for(minor))
    assert info.taint_rules_in_effect is expected


@pytest.mark.parametrize(("minor", "expected"), [(34, False), (35, False), (36, True), (37, True)])
def test_extended_resources_are_served_by_dra_from_1_36(minor: int, expected: bool) -> None:
    info = ServerInfo(f"v1.{minor}.0", minor, {}, features_for(minor))
    assert info.extended_resources_in_effect is expected


def test_a_v1alpha2_server_is_read_for_classic_dra_and_named_resources() -> None:
    served = [
        "podschedulingcontexts",
        "resourceclaimparameters",
        "resourceclaims",
        "resourceclaimtemplates",
        "resourceclasses",
        "resourceclassparameters",
        "resourceslices",
    ]
    kinds = classic_plurals(served)
    assert sorted(kinds) == [
        "deviceclasses",
        "podschedulingcontexts",
        "resourceclaimparameters",
        "resourceclaims",
        "resourceclaimtemplates",
        "resourceclassparameters",
        "resourceslices",
    ]
    info = ServerInfo("v1.30.14", 30, dict.fromkeys(kinds, "v1alpha2"), features_for(30))
    assert info.classic
    assert info.resource("deviceclasses").path() == "/apis/resource.k8s.io/v1alpha2/resourceclasses"
    assert not info.resource("deviceclasses").namespaced
    assert not info.resource("resourceslices").namespaced
    assert info.resource("resourceclaimparameters").namespaced
    assert info.resource("resourceclassparameters").namespaced
