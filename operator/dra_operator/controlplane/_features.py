"""Which DRA APIs and feature gates to switch on, per Kubernetes minor release.

The local control plane must serve *everything* DRA of its release: every resource.k8s.io
version (v1beta1, v1beta2 and v1alpha3 are off by default) and every DRA feature gate on.
The flags cannot be one list for all releases: kube-apiserver exits on a gate it does not know
and on a locked gate set against its default, and a gate whose dependency is off fails
validation. So the table lists each DRA gate's stage, default and lock from the minor they
change in, as upstream's versioned gate specs (`pkg/features/kube_features.go`,
`defaultVersionedKubernetesFeatureGates`, 1.31's unversioned `defaultKubernetesFeatureGates`)
give it; 1.30-1.35 are checked against each pinned release's own source. Locked gates are
already at their (on) default and are not passed. Non-DRA gates that DRA gates depend on
(`GenericWorkload` for `DRAWorkloadResourceClaims`) are switched on together with the API
version serving them.
"""

from __future__ import annotations

import dataclasses
import enum

__all__ = ["SUPPORTED_MINORS", "Gate", "Release", "Stage", "release_flags"]


class Stage(enum.StrEnum):
    """Maturity of a feature gate in one release."""

    ALPHA = "Alpha"
    BETA = "Beta"
    GA = "GA"


@dataclasses.dataclass(frozen=True, slots=True)
class Gate:
    """One feature gate as a given release defines it."""

    name: str
    stage: Stage
    default: bool
    locked: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Release:
    """The DRA surface of one minor release and the flags that switch all of it on."""

    minor: int
    gates: tuple[Gate, ...]
    dependency_gates: tuple[Gate, ...] = ()
    runtime_config: tuple[str, ...]

    def feature_gates_flag(self) -> str:
        """`--feature-gates` value: every unlocked DRA gate and its dependencies on."""
        names = sorted(g.name for g in (*self.gates, *self.dependency_gates) if not g.locked)
        return ",".join(f"{name}=true" for name in names)

    def resource_versions(self) -> tuple[str, ...]:
        """The resource.k8s.io versions served: v1 (on by default from 1.34) and those enabled."""
        enabled = tuple(
            gv.removeprefix(f"{_GROUP}/") for gv in self.runtime_config if gv.startswith(_GROUP)
        )
        return ("v1", *enabled) if self.minor >= _V1_SINCE else enabled

    def runtime_config_flag(self) -> str:
        """`--runtime-config` value: the API versions that are off by default, on."""
        return ",".join(f"{gv}=true" for gv in self.runtime_config)


_A, _B, _GA = Stage.ALPHA, Stage.BETA, Stage.GA
_GROUP = "resource.k8s.io"
_V1_SINCE = 34
_RESOURCE_VERSIONS = (
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1alpha3",
)

_Spec = tuple[int, Stage | None, bool, bool]
"""From minor release, the gate's stage (None: removed), default and lock."""


def _since(minor: int, stage: Stage | None, default: bool = False, locked: bool = False) -> _Spec:
    return (minor, stage, default, locked)


# Each DRA gate's changes, as upstream's versioned specs list them: a gate keeps its last
# spec until the next one. 1.27-1.30 (classic DRA's v1alpha2, structured parameters in 1.30)
# have one alpha gate for all of it; 1.31's DRAControlPlaneController is on too: classic DRA
# (docs/classic.md) keeps `spec.controller`, `allocation.controller` and
# `deallocationRequested` only with it.
_GATES: dict[str, tuple[_Spec, ...]] = {
    "DRAAdminAccess": (_since(32, _A), _since(34, _B, True), _since(36, _GA, True, True)),
    "DRAConsumableCapacity": (_since(34, _A), _since(36, _B, True)),
    "DRAControlPlaneController": (_since(31, _A), _since(32, None)),
    "DRADerivedAttributes": (_since(37, _A),),
    "DRADeviceBindingConditions": (_since(34, _A), _since(36, _B, True)),
    "DRADeviceCompatibilityGroups": (_since(37, _A),),
    "DRADeviceTaintRules": (_since(35, _A), _since(36, _B), _since(37, _GA, True)),
    "DRADeviceTaints": (_since(33, _A), _since(36, _B, True), _since(37, _GA, True)),
    "DRAExtendedResource": (_since(34, _A), _since(36, _B, True), _since(37, _GA, True, True)),
    "DRAFractionalCapacityRange": (_since(37, _B, True),),
    "DRAListTypeAttributes": (_since(36, _A),),
    "DRANodeAllocatableResources": (_since(36, _A),),
    # DRAOptionalNodeOperations also needs NodeDeclaredFeatures, locked on in 1.37.
    "DRAOptionalNodeOperations": (_since(37, _A),),
    "DRAPartitionableDevices": (_since(33, _A), _since(36, _B, True)),
    "DRAPartitionableDevicesType": (_since(37, _A),),
    "DRAPrioritizedList": (
        _since(33, _A),
        _since(34, _B, True),
        _since(36, _GA, True),
        _since(37, _GA, True, True),
    ),
    "DRAResourceClaimDeviceStatus": (
        _since(32, _A),
        _since(33, _B, True),
        _since(37, _GA, True, True),
    ),
    "DRAResourceClaimGranularStatusAuthorization": (_since(36, _B, True),),
    "DRAResourcePoolStatus": (_since(36, _A),),
    "DRASchedulerFilterTimeout": (_since(34, _B, True),),
    "DRAWorkloadResourceClaims": (_since(36, _A), _since(37, _B)),
    "DynamicResourceAllocation": (
        _since(27, _A),
        _since(32, _B),
        _since(34, _GA, True),
        _since(35, _GA, True, True),
    ),
}
_DEPENDENCY_GATES: dict[str, tuple[_Spec, ...]] = {
    "GenericWorkload": (_since(36, _A), _since(37, _B)),
}
# The API versions that are off by default, from each minor on. A release lacks the versions
# it is not given (the apiserver exits on an unknown group version).
_RUNTIME_CONFIG: dict[int, tuple[str, ...]] = {
    27: ("resource.k8s.io/v1alpha2",),
    31: ("resource.k8s.io/v1alpha3",),
    32: ("resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3"),
    33: _RESOURCE_VERSIONS,
    36: (*_RESOURCE_VERSIONS, "scheduling.k8s.io/v1alpha2"),
    37: (*_RESOURCE_VERSIONS, "scheduling.k8s.io/v1beta1"),
}
_NEWEST = 37


def _gates_at(minor: int, specs: dict[str, tuple[_Spec, ...]]) -> tuple[Gate, ...]:
    """The gates release 1.`minor` defines: each one's last spec from that minor or before."""
    gates = []
    for name, changes in sorted(specs.items()):
        current = [spec for spec in changes if spec[0] <= minor]
        if current and (stage := current[-1][1]) is not None:
            gates.append(Gate(name, stage, current[-1][2], locked=current[-1][3]))
    return tuple(gates)


def _release(minor: int) -> Release:
    return Release(
        minor=minor,
        gates=_gates_at(minor, _GATES),
        dependency_gates=_gates_at(minor, _DEPENDENCY_GATES),
        runtime_config=_RUNTIME_CONFIG[max(m for m in _RUNTIME_CONFIG if m <= minor)],
    )


_RELEASES = {minor: _release(minor) for minor in range(min(_RUNTIME_CONFIG), _NEWEST + 1)}

SUPPORTED_MINORS = tuple(sorted(_RELEASES))


def release_flags(minor: int) -> Release:
    """The DRA surface of Kubernetes 1.`minor`; a ValueError names the supported range."""
    try:
        return _RELEASES[minor]
    except KeyError:
        supported = ", ".join(f"1.{m}" for m in SUPPORTED_MINORS)
        raise ValueError(
            f"kubernetes 1.{minor} is not supported (supported: {supported})"
        ) from None
