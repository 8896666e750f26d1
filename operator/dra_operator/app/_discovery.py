"""What the API server serves: the resource.k8s.io version of each DRA kind, and its release.

The operator speaks the newest version the server serves for each kind (a 1.35 server serves
claims in v1 but DeviceTaintRules only in v1alpha3) and switches the allocator's behaviours as
that release's kube-scheduler does by default (`allocator.Features.for_kubernetes`). Our own
AllocationPolicy CRD is optional: without it every claim is allocated with FirstFit.

A server that serves only v1alpha2 (1.27–1.30) is spoken to in v1alpha2: ResourceClasses stand
for the DeviceClass kind, claims, templates and PodSchedulingContexts are read into the model
(`model.parse_resource_claim`) for classic DRA, and 1.30's ResourceSlices and parameter objects
are read as they are, to allocate named resources (docs/classic.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

from dra_operator import errors, kube, model
from dra_operator.allocator import Features

DRA_KINDS: Final = (
    "resourceclaims",
    "resourceclaimtemplates",
    "deviceclasses",
    "resourceslices",
    "devicetaintrules",
    "podschedulingcontexts",
    "resourceclassparameters",  # 1.30 (v1alpha2) only
    "resourceclaimparameters",  # 1.30 (v1alpha2) only
    "resourcepoolstatusrequests",  # 1.36+, v1alpha3 with DRAResourcePoolStatus
)
REQUIRED_KINDS: Final = frozenset(DRA_KINDS) - {
    "devicetaintrules",
    "resourcepoolstatusrequests",
    "podschedulingcontexts",
    "resourceclassparameters",
    "resourceclaimparameters",
}

CLASSIC_VERSION: Final = "v1alpha2"  # 1.27-1.30: classic DRA only (docs/classic.md)

_CLASSIC_KINDS: Final = frozenset(
    {
        "resourceclaims",
        "resourceclaimtemplates",
        "podschedulingcontexts",
        "resourceslices",  # 1.30
        "resourceclassparameters",  # 1.30
        "resourceclaimparameters",  # 1.30
    }
)

# Newest first: the order in which a version is preferred when several serve a kind.
_VERSION_ORDER: Final = ("v1", "v1beta2", "v1beta1", "v1alpha3")


@dataclasses.dataclass(frozen=True, slots=True)
class ServerInfo:
    """The served version of each DRA kind (absent: not served) and the server's release;
    `policies`: whether the AllocationPolicy CRD (`kube.ALLOCATION_POLICIES`) is installed;
    `pod_groups`: which scheduling.k8s.io version serves PodGroups (GenericWorkload)."""

    git_version: str
    minor: int
    versions: Mapping[str, str]
    features: Features
    policies: bool = False
    pod_groups: str = ""  # the scheduling.k8s.io version serving PodGroups; "" when none does

    @property
    def pod_group_resource(self) -> kube.Resource | None:
        """PodGroups (GenericWorkload on), in the newest version served."""
        if not self.pod_groups:
            return None
        return kube.Resource(model.PodGroup.API_GROUP, self.pod_groups, model.PodGroup.PLURAL, True)

    def resource(self, plural: str) -> kube.Resource:
        return kube.dra(plural, self.versions[plural])

    def serves(self, plural: str) -> bool:
        return plural in self.versions

    @property
    def claim_naming(self) -> model.ClaimNaming:
        return model.ClaimNaming.for_minor(self.minor)

    @property
    def extended_resources_in_effect(self) -> bool:
        """Whether pods may ask for DRA devices as extended resources (DRAExtendedResource).

        Beta and on by default from 1.36, GA in 1.37; alpha and off before, where the API
        server drops `extendedResourceName` and `extendedResourceClaimStatus`. The gate is not
        visible from here, so the release stands for it.
        """
        return self.minor >= 36

    @property
    def taint_rules_in_effect(self) -> bool:
        """Whether the scheduler adds DeviceTaintRules' taints to the devices they select.

        Upstream's kube-scheduler does when DRADeviceTaintRules is on (beta, off by default in
        1.36; GA in 1.37). The gate is not visible from here, but the API is served only where
        it was switched on, so serving the kind stands for it; rules need device taints on.
        """
        return self.serves("devicetaintrules") and self.features.device_taints

    @property
    def classic(self) -> bool:
        """Whether classic DRA can be asked for: PodSchedulingContexts are served (1.31's
        v1alpha3; whether DRAControlPlaneController keeps `spec.controller` is the server's
        business: without it no claim names a controller)."""
        return self.serves("podschedulingcontexts")


def classic_plurals(plurals: list[str]) -> list[str]:
    """A v1alpha2 server's resources as the operator's kinds: ResourceClasses stand for
    DeviceClasses (`model.parse_device_class` translates them); 1.30's named-resources
    ResourceSlices and parameter objects are kept as they are."""
    kinds = {"resourceclasses": "deviceclasses"}
    return [kinds.get(p, p) for p in plurals if p in kinds or p in _CLASSIC_KINDS]


def newest_versions(served: Mapping[str, list[str]]) -> dict[str, str]:
    """For each kind, the newest of the versions serving it (`served`: version -> plurals)."""
    chosen: dict[str, str] = {}
    for version in _VERSION_ORDER:
        for plural in served.get(version, ()):
            chosen.setdefault(plural, version)
    return chosen


def features_for(minor: int) -> Features:
    """The allocator features of that release; a release newer than we know gets our newest."""
    try:
        return Features.for_kubernetes(f"1.{minor}")
    except errors.AllocationInputError:
        if minor > 36:
            return Features.for_kubernetes("1.37")
        raise


async def discover(api: kube.Client) -> ServerInfo:
    """Ask the server; fails when it serves no usable version of a kind the operator needs."""
    git_version, minor = kube.release_minor(await api.server_version())
    served: dict[str, list[str]] = {}
    group_versions = await api.served_versions(kube.RESOURCE_GROUP)
    classic_only = CLASSIC_VERSION in group_versions and not set(group_versions) & set(
        _VERSION_ORDER
    )
    for version in group_versions:
        if version not in _VERSION_ORDER and not (classic_only and version == CLASSIC_VERSION):
            continue
        resources = await api.api_resources(kube.RESOURCE_GROUP, version)
        plurals = [r["name"] for r in resources if "/" not in r["name"]]
        served[version] = classic_plurals(plurals) if version == CLASSIC_VERSION else plurals
    versions = {k: v for k, v in newest_versions(served).items() if k in DRA_KINDS}
    required = REQUIRED_KINDS
    if classic_only:  # 1.27-1.29 serve no slices
        versions = {k: CLASSIC_VERSION for k in served[CLASSIC_VERSION] if k in DRA_KINDS}
        required = REQUIRED_KINDS - {"resourceslices"}
    missing = sorted(required - versions.keys())
    if missing:
        raise errors.DRAOperatorError(
            f"server {git_version}: {kube.RESOURCE_GROUP} does not serve {', '.join(missing)}"
        )
    policies = await _serves(api, kube.ALLOCATION_POLICIES)
    pod_groups = ""
    for version in model.PodGroup.VERSIONS:
        group = kube.Resource(model.PodGroup.API_GROUP, version, model.PodGroup.PLURAL, True)
        if await _serves(api, group):
            pod_groups = version
            break
    return ServerInfo(
        git_version, minor, versions, features_for(minor), policies, pod_groups=pod_groups
    )


async def _serves(api: kube.Client, resource: kube.Resource) -> bool:
    """Whether a resource of one of our own groups is served (its CRD is installed)."""
    if resource.version not in await api.served_versions(resource.group):
        return False
    listed = await api.api_resources(resource.group, resource.version)
    return any(r.get("name") == resource.plural for r in listed)
