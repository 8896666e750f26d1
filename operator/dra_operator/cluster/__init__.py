"""Caches of the objects the controllers read, their indexes, and the allocated-devices ledger.

Fed by watch events (the operator's reflectors call `Store.apply`); read by the controllers. Never
talks to the API server itself and never imports `kube`: the controllers wire the two.
"""

from dra_operator.cluster._deleted import RecentlyDeleted
from dra_operator.cluster._indexes import (
    CLAIM_INDEXERS,
    CLAIMS_BY_DEVICE,
    CLAIMS_BY_OWNER_POD,
    CLAIMS_BY_OWNER_POD_GROUP,
    POD_INDEXERS,
    PODS_BY_CLAIM,
    PODS_BY_POD_GROUP,
    PODS_BY_TEMPLATE,
    SLICE_INDEXERS,
    SLICES_BY_NODE,
    SLICES_BY_POOL,
    PoolKey,
    claim_devices,
    claim_owner_pod_uids,
    pod_claim_keys,
    pod_template_keys,
    pools_on_node,
    slice_node,
    slice_pool,
)
from dra_operator.cluster._ledger import DeviceLedger
from dra_operator.cluster._store import (
    DELETED,
    JOURNAL_LENGTH,
    Change,
    Entry,
    IndexFunc,
    ObjectKey,
    Parser,
    Store,
    metadata_and_spec,
    metadata_only,
    version_number,
    without_managed_fields,
)

__all__ = [
    "CLAIMS_BY_DEVICE",
    "CLAIMS_BY_OWNER_POD",
    "CLAIMS_BY_OWNER_POD_GROUP",
    "CLAIM_INDEXERS",
    "DELETED",
    "JOURNAL_LENGTH",
    "PODS_BY_CLAIM",
    "PODS_BY_POD_GROUP",
    "PODS_BY_TEMPLATE",
    "POD_INDEXERS",
    "SLICES_BY_NODE",
    "SLICES_BY_POOL",
    "SLICE_INDEXERS",
    "Change",
    "DeviceLedger",
    "Entry",
    "IndexFunc",
    "ObjectKey",
    "Parser",
    "PoolKey",
    "RecentlyDeleted",
    "Store",
    "claim_devices",
    "claim_owner_pod_uids",
    "metadata_and_spec",
    "metadata_only",
    "pod_claim_keys",
    "pod_template_keys",
    "pools_on_node",
    "slice_node",
    "slice_pool",
    "version_number",
    "without_managed_fields",
]
