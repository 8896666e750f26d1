"""Which DRA APIs and feature gates to switch on, per Kubernetes minor release.

The local control plane must serve *everything* DRA of its release: every resource.k8s.io
version (v1beta1, v1beta2 and v1alpha3 are off by default) and every DRA feature gate on.
The flags cannot be one list for all releases: kube-apiserver exits on a gate it does not know
and on a locked gate set against its default, and a gate whose dependency is off fails
validation. So the table lists, per minor, each DRA gate with its stage, default and lock, as
upstream's versioned gate specs (`pkg/features/kube_features.go`,
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

_RELEASES: dict[int, Release] = {
    # 1.27-1.30: classic DRA's v1alpha2 (1.30 adds structured parameters: ResourceSlice with
    # named resources, class/claim parameter objects); one alpha gate for all of it. All four
    # are pinned and built.
    **{
        minor: Release(
            minor=minor,
            gates=(Gate("DynamicResourceAllocation", _A, False),),
            runtime_config=("resource.k8s.io/v1alpha2",),
        )
        for minor in (27, 28, 29, 30)
    },
    # 1.31-1.33: the API versions a release lacks are left out (the apiserver exits on an
    # unknown group version), and DynamicResourceAllocation is alpha/beta off, so it is passed.
    # 1.31's DRAControlPlaneController is on too: classic DRA (docs/classic.md) keeps
    # `spec.controller`, `allocation.controller` and `deallocationRequested` only with it.
    31: Release(
        minor=31,
        gates=(
            Gate("DRAControlPlaneController", _A, False),
            Gate("DynamicResourceAllocation", _A, False),
        ),
        runtime_config=("resource.k8s.io/v1alpha3",),
    ),
    32: Release(
        minor=32,
        gates=(
            Gate("DRAAdminAccess", _A, False),
            Gate("DRAResourceClaimDeviceStatus", _A, False),
            Gate("DynamicResourceAllocation", _B, False),
        ),
        runtime_config=("resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3"),
    ),
    33: Release(
        minor=33,
        gates=(
            Gate("DRAAdminAccess", _A, False),
            Gate("DRADeviceTaints", _A, False),
            Gate("DRAPartitionableDevices", _A, False),
            Gate("DRAPrioritizedList", _A, False),
            Gate("DRAResourceClaimDeviceStatus", _B, True),
            Gate("DynamicResourceAllocation", _B, False),
        ),
        runtime_config=_RESOURCE_VERSIONS,
    ),
    34: Release(
        minor=34,
        gates=(
            Gate("DRAAdminAccess", _B, True),
            Gate("DRAConsumableCapacity", _A, False),
            Gate("DRADeviceBindingConditions", _A, False),
            Gate("DRADeviceTaints", _A, False),
            Gate("DRAExtendedResource", _A, False),
            Gate("DRAPartitionableDevices", _A, False),
            Gate("DRAPrioritizedList", _B, True),
            Gate("DRAResourceClaimDeviceStatus", _B, True),
            Gate("DRASchedulerFilterTimeout", _B, True),
            Gate("DynamicResourceAllocation", _GA, True),
        ),
        runtime_config=_RESOURCE_VERSIONS,
    ),
    35: Release(
        minor=35,
        gates=(
            Gate("DRAAdminAccess", _B, True),
            Gate("DRAConsumableCapacity", _A, False),
            Gate("DRADeviceBindingConditions", _A, False),
            Gate("DRADeviceTaintRules", _A, False),
            Gate("DRADeviceTaints", _A, False),
            Gate("DRAExtendedResource", _A, False),
            Gate("DRAPartitionableDevices", _A, False),
            Gate("DRAPrioritizedList", _B, True),
            Gate("DRAResourceClaimDeviceStatus", _B, True),
            Gate("DRASchedulerFilterTimeout", _B, True),
            Gate("DynamicResourceAllocation", _GA, True, locked=True),
        ),
        runtime_config=_RESOURCE_VERSIONS,
    ),
    36: Release(
        minor=36,
        gates=(
            Gate("DRAAdminAccess", _GA, True, locked=True),
            Gate("DRAConsumableCapacity", _B, True),
            Gate("DRADeviceBindingConditions", _B, True),
            Gate("DRADeviceTaintRules", _B, False),
            Gate("DRADeviceTaints", _B, True),
            Gate("DRAExtendedResource", _B, True),
            Gate("DRAListTypeAttributes", _A, False),
            Gate("DRANodeAllocatableResources", _A, False),
            Gate("DRAPartitionableDevices", _B, True),
            Gate("DRAPrioritizedList", _GA, True),
            Gate("DRAResourceClaimDeviceStatus", _B, True),
            Gate("DRAResourceClaimGranularStatusAuthorization", _B, True),
            Gate("DRAResourcePoolStatus", _A, False),
            Gate("DRASchedulerFilterTimeout", _B, True),
            Gate("DRAWorkloadResourceClaims", _A, False),
            Gate("DynamicResourceAllocation", _GA, True, locked=True),
        ),
        dependency_gates=(Gate("GenericWorkload", _A, False),),
        runtime_config=(*_RESOURCE_VERSIONS, "scheduling.k8s.io/v1alpha2"),
    ),
    37: Release(
        minor=37,
        gates=(
            Gate("DRAAdminAccess", _GA, True, locked=True),
            Gate("DRAConsumableCapacity", _B, True),
            Gate("DRADerivedAttributes", _A, False),
            Gate("DRADeviceBindingConditions", _B, True),
            Gate("DRADeviceCompatibilityGroups", _A, False),
            Gate("DRADeviceTaintRules", _GA, True),
            Gate("DRADeviceTaints", _GA, True),
            Gate("DRAExtendedResource", _GA, True, locked=True),
            Gate("DRAFractionalCapacityRange", _B, True),
            Gate("DRAListTypeAttributes", _A, False),
            Gate("DRANodeAllocatableResources", _A, False),
            Gate("DRAOptionalNodeOperations", _A, False),
            Gate("DRAPartitionableDevices", _B, True),
            Gate("DRAPartitionableDevicesType", _A, False),
            Gate("DRAPrioritizedList", _GA, True, locked=True),
            Gate("DRAResourceClaimDeviceStatus", _GA, True, locked=True),
            Gate("DRAResourceClaimGranularStatusAuthorization", _B, True),
            Gate("DRAResourcePoolStatus", _A, False),
            Gate("DRASchedulerFilterTimeout", _B, True),
            Gate("DRAWorkloadResourceClaims", _B, False),
            Gate("DynamicResourceAllocation", _GA, True, locked=True),
        ),
        # DRAOptionalNodeOperations also needs NodeDeclaredFeatures, locked on in 1.37.
        dependency_gates=(Gate("GenericWorkload", _B, False),),
        runtime_config=(*_RESOURCE_VERSIONS, "scheduling.k8s.io/v1beta1"),
    ),
}

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
