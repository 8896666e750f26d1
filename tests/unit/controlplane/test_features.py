"""The per-release DRA flag table.

Covers: every supported minor (1.27–1.37) has flags; locked gates are never passed (the
apiserver refuses to start on a locked gate set against its default, and passing one at its
default is noise); every gate a passed gate depends on is on (upstream validates dependencies
at startup); every resource.k8s.io version the release has is enabled, and none it lacks (the
apiserver exits on an unknown group version); and, where the upstream
source is in the Go module cache, the table matches upstream's versioned gate specs exactly.
"""

from __future__ import annotations

import re

import pytest
from tests.support.go_modules import module_cache

from dra_operator.controlplane import PINNED, SUPPORTED_MINORS, Stage, release_flags

# Upstream's defaultKubernetesFeatureGateDependencies for the DRA gates (1.36/1.37 sources).
DEPENDENCIES = {
    "DRAConsumableCapacity": {"DynamicResourceAllocation"},
    "DRADeviceBindingConditions": {"DynamicResourceAllocation", "DRAResourceClaimDeviceStatus"},
    "DRADeviceCompatibilityGroups": {"DynamicResourceAllocation", "DRAPartitionableDevices"},
    "DRADeviceTaintRules": {"DRADeviceTaints"},
    "DRAFractionalCapacityRange": {"DRAConsumableCapacity"},
    "DRAPartitionableDevicesType": {"DRAPartitionableDevices", "DRAResourcePoolStatus"},
    "DRAResourceClaimGranularStatusAuthorization": {"DRAResourceClaimDeviceStatus"},
    "DRAWorkloadResourceClaims": {"DynamicResourceAllocation", "GenericWorkload"},
}


def _enabled(flag: str) -> dict[str, bool]:
    pairs = (item.split("=") for item in flag.split(",") if item)
    return {name: value == "true" for name, value in pairs}


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_flags_turn_every_unlocked_gate_on(minor: int) -> None:
    release = release_flags(minor)
    passed = _enabled(release.feature_gates_flag())
    assert all(passed.values())
    for gate in release.gates:
        assert (gate.name in passed) is (not gate.locked), gate
        if gate.locked:
            assert gate.default, f"{gate.name} is locked off: the feature cannot be enabled"


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_dependencies_of_passed_gates_are_on(minor: int) -> None:
    release = release_flags(minor)
    on = {g.name for g in (*release.gates, *release.dependency_gates)}
    for gate in on:
        assert DEPENDENCIES.get(gate, set()) <= on, gate


# resource.k8s.io versions each release has besides v1 (on by default from 1.34 on).
OPTIONAL_VERSIONS = {
    **{minor: {"v1alpha2"} for minor in range(27, 31)},
    31: {"v1alpha3"},
    32: {"v1alpha3", "v1beta1"},
    **{minor: {"v1alpha3", "v1beta1", "v1beta2"} for minor in range(33, 38)},
}


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_every_resource_version_of_the_release_is_enabled(minor: int) -> None:
    runtime = release_flags(minor).runtime_config_flag().split(",")
    resource = {item.split("/")[1].removesuffix("=true") for item in runtime if "resource" in item}
    assert resource == OPTIONAL_VERSIONS[minor]


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_served_versions_are_v1_from_1_34_and_the_enabled_ones(minor: int) -> None:
    served = set(release_flags(minor).resource_versions())
    assert served == OPTIONAL_VERSIONS[minor] | ({"v1"} if minor >= 34 else set())


@pytest.mark.parametrize(
    ("minor", "gate", "present"),
    [
        pytest.param(30, "DynamicResourceAllocation", True, id="one-gate-in-1.30"),
        pytest.param(31, "DRAAdminAccess", False, id="admin-access-gate-new-in-1.32"),
        pytest.param(32, "DRAPrioritizedList", False, id="prioritized-list-new-in-1.33"),
        pytest.param(33, "DRAConsumableCapacity", False, id="consumable-capacity-new-in-1.34"),
        pytest.param(34, "DRADeviceTaintRules", False, id="taint-rules-gate-new-in-1.35"),
        pytest.param(35, "DRADeviceTaintRules", True, id="taint-rules-gate-in-1.35"),
        pytest.param(35, "DRAListTypeAttributes", False, id="list-attributes-new-in-1.36"),
        pytest.param(36, "DRADerivedAttributes", False, id="derived-attributes-new-in-1.37"),
        pytest.param(37, "DRADerivedAttributes", True, id="derived-attributes-in-1.37"),
    ],
)
def test_gates_exist_only_from_their_first_release(minor: int, gate: str, present: bool) -> None:
    assert (gate in {g.name for g in release_flags(minor).gates}) is present


def test_unsupported_minor_names_the_range() -> None:
    with pytest.raises(ValueError, match=r"kubernetes 1\.26 is not supported \(supported: 1\.27"):
        release_flags(26)


_SPEC = re.compile(
    r"^\t(?P<name>DRA\w+|DynamicResourceAllocation): \{\n(?P<body>(?:\t\t.*\n|\t\t//.*\n)*?)\t\},",
    re.MULTILINE,
)
# 1.31 still lists its DRA gates in the unversioned map.
_UNVERSIONED = re.compile(
    r"^\t(?P<name>DRA\w+|DynamicResourceAllocation): \{Default: (?P<default>true|false), "
    r"PreRelease: featuregate\.(?P<stage>\w+)(?P<rest>[^}]*)\},",
    re.MULTILINE,
)
_ENTRY = re.compile(
    r'Version: version\.MustParse\("1\.(?P<minor>\d+)"\), Default: (?P<default>true|false), '
    r"PreRelease: featuregate\.(?P<stage>\w+)(?P<rest>[^}]*)\}"
)


def _upstream_gates(source: str, minor: int) -> dict[str, tuple[Stage, bool, bool]]:
    gates = {
        spec["name"]: (Stage(spec["stage"]), spec["default"] == "true", "Lock" in spec["rest"])
        for spec in _UNVERSIONED.finditer(source)
    }
    versioned = source[source.find("defaultVersionedKubernetesFeatureGates") :]
    for spec in _SPEC.finditer(versioned):
        current = None
        for entry in _ENTRY.finditer(spec["body"]):
            if int(entry["minor"]) <= minor:
                locked = "LockToDefault: true" in entry["rest"]
                current = (Stage(entry["stage"]), entry["default"] == "true", locked)
        if current is not None:
            gates[spec["name"]] = current
    return gates


@pytest.mark.parametrize(
    ("minor", "release"),
    [pytest.param(minor, version, id=f"1.{minor}") for minor, version in PINNED.items()],
)
def test_table_matches_upstream_source(minor: int, release: str) -> None:
    features = module_cache() / f"k8s.io/kubernetes@{release}" / "pkg/features"
    if not features.is_dir():
        pytest.skip(f"{features} not downloaded (make controlplane fetches the pinned release)")
    # 1.32 keeps its versioned specs in versioned_kube_features.go.
    source = "\n".join(path.read_text() for path in sorted(features.glob("*kube_features.go")))
    upstream = _upstream_gates(source, minor)
    ours = {g.name: (g.stage, g.default, g.locked) for g in release_flags(minor).gates}
    assert ours == upstream
