"""Index functions for the stores (rule 6: indexes, not scans), named as upstream names them.

* pods by claim: every claim a pod resolves to (upstream's `podResourceClaim` index), and every
  template a pod names (`podResourceClaimTemplate`), as `ObjectKey`s in the pod's namespace;
* claims by controlling pod UID (`claimPodOwner`): owner apiVersion v1, kind Pod, controller;
* claims by controlling PodGroup UID (`claimPodGroupOwner`) and pods by the PodGroup they
  belong to (`podGroupMembers`, an `ObjectKey` in the pod's namespace);
* claims by allocated `DeviceID` (the eviction controller: which claims a taint touches);
* slices by pool (`PoolKey`), and pools by node: slices by the node they are local to, with
  `None` for slices that may serve several nodes (node selector, all nodes, per-device).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple

from dra_operator.cluster._store import IndexFunc, ObjectKey, Store
from dra_operator.model import DeviceID, Pod, PodGroup, ResourceClaim, ResourceSlice

PODS_BY_CLAIM: Final = "pod-resource-claim"
PODS_BY_TEMPLATE: Final = "pod-resource-claim-template"
CLAIMS_BY_OWNER_POD: Final = "claim-pod-owner"
CLAIMS_BY_OWNER_POD_GROUP: Final = "claim-pod-group-owner"
PODS_BY_POD_GROUP: Final = "pod-group-members"
CLAIMS_BY_DEVICE: Final = "claim-allocated-device"
SLICES_BY_POOL: Final = "slice-pool"
SLICES_BY_NODE: Final = "slice-node"


class PoolKey(NamedTuple):
    driver: str
    pool: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}"


def pod_claim_keys(pod: Pod) -> list[ObjectKey]:
    """The claims the pod resolves to now; unresolved template claims have no key yet."""
    statuses = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    keys: list[ObjectKey] = []
    for entry in pod.spec.resource_claims:
        name = entry.resource_claim_name
        if name is None and entry.resource_claim_template_name is not None:
            name = statuses.get(entry.name)
        if name:
            keys.append(ObjectKey(pod.metadata.namespace, name))
    return keys


def pod_template_keys(pod: Pod) -> list[ObjectKey]:
    return [
        ObjectKey(pod.metadata.namespace, entry.resource_claim_template_name)
        for entry in pod.spec.resource_claims
        if entry.resource_claim_template_name is not None
    ]


def claim_owner_pod_uids(claim: ResourceClaim) -> list[str]:
    return [
        owner.uid
        for owner in claim.metadata.owner_references
        if owner.controller and owner.api_version == "v1" and owner.kind == "Pod"
    ]


def claim_owner_pod_group_uids(claim: ResourceClaim) -> list[str]:
    return [
        owner.uid
        for owner in claim.metadata.owner_references
        if owner.controller
        and owner.kind == "PodGroup"
        and owner.api_version.startswith(f"{PodGroup.API_GROUP}/")
    ]


def pod_group_key(pod: Pod) -> list[ObjectKey]:
    name = pod.spec.pod_group_name
    return [ObjectKey(pod.metadata.namespace, name)] if name else []


def claim_devices(claim: ResourceClaim) -> list[DeviceID]:
    """The devices allocated to the claim (the eviction controller finds claims by device)."""
    allocation = claim.status.allocation
    if allocation is None:
        return []
    return [DeviceID(r.driver, r.pool, r.device) for r in allocation.devices.results]


def slice_pool(resource_slice: ResourceSlice) -> list[PoolKey]:
    return [PoolKey(resource_slice.driver, resource_slice.pool.name)]


def slice_node(resource_slice: ResourceSlice) -> list[str | None]:
    return [resource_slice.node_name or None]


def pools_on_node(slices: Store[ResourceSlice], node_name: str | None) -> frozenset[PoolKey]:
    """Pools with a slice local to `node_name`; None: pools that may serve several nodes."""
    return frozenset(
        PoolKey(entry.obj.driver, entry.obj.pool.name)
        for entry in slices.by_index(SLICES_BY_NODE, node_name)
    )


POD_INDEXERS: Final[Mapping[str, IndexFunc[Pod]]] = {
    PODS_BY_CLAIM: pod_claim_keys,
    PODS_BY_TEMPLATE: pod_template_keys,
    PODS_BY_POD_GROUP: pod_group_key,
}
CLAIM_INDEXERS: Final[Mapping[str, IndexFunc[ResourceClaim]]] = {
    CLAIMS_BY_OWNER_POD: claim_owner_pod_uids,
    CLAIMS_BY_OWNER_POD_GROUP: claim_owner_pod_group_uids,
    CLAIMS_BY_DEVICE: claim_devices,
}
SLICE_INDEXERS: Final[Mapping[str, IndexFunc[ResourceSlice]]] = {
    SLICES_BY_POOL: slice_pool,
    SLICES_BY_NODE: slice_node,
}
