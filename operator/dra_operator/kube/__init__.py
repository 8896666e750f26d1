"""kube: the only place that talks to the API server.

A raw-JSON async client (`Client`) built from a kubeconfig or the in-cluster service account,
the names of the resources the operator uses, and the translation of every HTTP failure into
`dra_operator.errors.APIError`. Objects are plain dicts, never typed models.
"""

from dra_operator.kube._client import Client, JSONObject, PatchType
from dra_operator.kube._config import (
    ClusterConfig,
    load_config,
    load_incluster_config,
    load_kubeconfig,
)
from dra_operator.kube._events import (
    EventSender,
    event_manifest,
    event_target,
    event_target_of,
    post_event,
)
from dra_operator.kube._paging import PAGE_SIZE, Backoff, Listing, list_all
from dra_operator.kube._resources import (
    ALLOCATION_POLICIES,
    CORE_EVENTS,
    CSI_DRIVERS,
    CSI_NODES,
    EVENTS,
    LEASES,
    MUTATING_POLICY_BINDINGS,
    NAMESPACES,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    POD_DISRUPTION_BUDGETS,
    PODS,
    RESOURCE_GROUP,
    STORAGE_CLASSES,
    VALIDATING_POLICY_BINDINGS,
    Resource,
    dra,
)
from dra_operator.kube._version import release_minor

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
    "PAGE_SIZE",
    "PERSISTENT_VOLUMES",
    "PERSISTENT_VOLUME_CLAIMS",
    "PODS",
    "POD_DISRUPTION_BUDGETS",
    "RESOURCE_GROUP",
    "STORAGE_CLASSES",
    "VALIDATING_POLICY_BINDINGS",
    "Backoff",
    "Client",
    "ClusterConfig",
    "EventSender",
    "JSONObject",
    "Listing",
    "PatchType",
    "Resource",
    "dra",
    "event_manifest",
    "event_target",
    "event_target_of",
    "list_all",
    "load_config",
    "load_incluster_config",
    "load_kubeconfig",
    "post_event",
    "release_minor",
]
