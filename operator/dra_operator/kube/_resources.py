"""Names of the API resources the operator reads and writes, and their URL paths.

A `Resource` is a group/version/plural triple plus whether it lives in a namespace; the client
needs nothing more to build a URL, so no discovery round-trip precedes ordinary calls.
DRA resources are named per version (`dra("resourceclaims", "v1beta2")`) because the operator
speaks whichever version the server serves.
"""

from __future__ import annotations

import dataclasses
from urllib.parse import quote

__all__ = [
    "ALLOCATION_POLICIES",
    "CORE_EVENTS",
    "CSI_DRIVERS",
    "CSI_NODES",
    "EVENTS",
    "LEASES",
    "MUTATING_POLICY_BINDINGS",
    "NAMESPACES",
    "NODES",
    "PERSISTENT_VOLUMES",
    "PERSISTENT_VOLUME_CLAIMS",
    "PODS",
    "RESOURCE_GROUP",
    "STORAGE_CLASSES",
    "VALIDATING_POLICY_BINDINGS",
    "Resource",
    "dra",
]

RESOURCE_GROUP = "resource.k8s.io"

_CLUSTER_SCOPED_DRA = frozenset(
    {
        "deviceclasses",
        "resourceslices",
        "devicetaintrules",
        "resourcepoolstatusrequests",
        "resourceclasses",  # v1alpha2
    }
)


@dataclasses.dataclass(frozen=True, slots=True)
class Resource:
    """One resource of one API version; `group` is "" for the core group."""

    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        """The `apiVersion` string objects of this resource carry."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, *, namespace: str | None = None, name: str | None = None) -> str:
        """The URL path of the collection, or of one object when `name` is given."""
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [root]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{quote(namespace, safe='')}")
        parts.append(self.plural)
        if name is not None:
            parts.append(quote(name, safe=""))
        return "/".join(parts)


def dra(plural: str, version: str = "v1") -> Resource:
    """A resource.k8s.io resource (`deviceclasses`, `resourceclaims`, ...) in `version`;
    `deviceclasses` in v1alpha2 (1.27-1.30) are the ResourceClasses that preceded them."""
    if version == "v1alpha2" and plural == "deviceclasses":
        plural = "resourceclasses"
    return Resource(RESOURCE_GROUP, version, plural, plural not in _CLUSTER_SCOPED_DRA)


PODS = Resource("", "v1", "pods", namespaced=True)
NODES = Resource("", "v1", "nodes", namespaced=False)
NAMESPACES = Resource("", "v1", "namespaces", namespaced=False)
PERSISTENT_VOLUMES = Resource("", "v1", "persistentvolumes", namespaced=False)
PERSISTENT_VOLUME_CLAIMS = Resource("", "v1", "persistentvolumeclaims", namespaced=True)
STORAGE_CLASSES = Resource("storage.k8s.io", "v1", "storageclasses", namespaced=False)
CSI_NODES = Resource("storage.k8s.io", "v1", "csinodes", namespaced=False)
CSI_DRIVERS = Resource("storage.k8s.io", "v1", "csidrivers", namespaced=False)
CORE_EVENTS = Resource("", "v1", "events", namespaced=True)
EVENTS = Resource("events.k8s.io", "v1", "events", namespaced=True)
LEASES = Resource("coordination.k8s.io", "v1", "leases", namespaced=True)
POD_DISRUPTION_BUDGETS = Resource("policy", "v1", "poddisruptionbudgets", namespaced=True)
MUTATING_POLICY_BINDINGS = Resource(
    "admissionregistration.k8s.io", "v1", "mutatingadmissionpolicybindings", namespaced=False
)
VALIDATING_POLICY_BINDINGS = Resource(
    "admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings", namespaced=False
)
ALLOCATION_POLICIES = Resource(
    "dra-operator.dev", "v1alpha1", "allocationpolicies", namespaced=False
)
