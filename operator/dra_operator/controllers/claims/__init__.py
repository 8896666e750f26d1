"""The claims controller: kube-controller-manager's resourceclaim controller, sans I/O.

Decisions (`sync_pod`, `sync_claim`) and event mappers (`keys_for_*`) are pure functions over
the caches, read through `ClaimsView`; they return `Plan`s of writes that the I/O wiring
carries out. See docs/design/operator.md for how they are driven.
"""

from dra_operator.controllers.claims._events import (
    PodsByClaim,
    WorkKey,
    keys_for_claim,
    keys_for_pod,
    keys_for_pod_group,
    keys_for_template,
)
from dra_operator.controllers.claims._kube import KubeClaimsWriter
from dra_operator.controllers.claims._reconcile import ClaimsReconciler, ClaimsWriter, StoreView
from dra_operator.controllers.claims._resolve import (
    MAX_GENERATE_NAME,
    ClaimsView,
    consumer_ref,
    generate_name,
    is_pod_done,
    is_reserved_for_pod,
    owning_pod,
    pod_needs_claims,
    pod_needs_work,
)
from dra_operator.controllers.claims._sync import (
    ALL_FEATURES,
    ClaimsFeatures,
    claims_to_check,
    creation_failed,
    sync_claim,
    sync_pod,
)
from dra_operator.controllers.claims._writes import (
    ApplyPodClaimStatuses,
    CreateClaim,
    CreatedFor,
    DeleteClaim,
    Event,
    NeedClaims,
    NeedPods,
    Plan,
    PruneReservedFor,
    RemoveFinalizer,
    ReserveClaim,
    Write,
    render_consumer,
)
from dra_operator.model import ResolvedClaim as Resolved
from dra_operator.model import UnresolvedClaim as Unresolved
from dra_operator.model import is_for_pod
from dra_operator.model import resolve_claim as resolve

__all__ = [
    "ALL_FEATURES",
    "MAX_GENERATE_NAME",
    "ApplyPodClaimStatuses",
    "ClaimsFeatures",
    "ClaimsReconciler",
    "ClaimsView",
    "ClaimsWriter",
    "CreateClaim",
    "CreatedFor",
    "DeleteClaim",
    "Event",
    "KubeClaimsWriter",
    "NeedClaims",
    "NeedPods",
    "Plan",
    "PodsByClaim",
    "PruneReservedFor",
    "RemoveFinalizer",
    "ReserveClaim",
    "Resolved",
    "StoreView",
    "Unresolved",
    "WorkKey",
    "Write",
    "claims_to_check",
    "consumer_ref",
    "creation_failed",
    "generate_name",
    "is_for_pod",
    "is_pod_done",
    "is_reserved_for_pod",
    "keys_for_claim",
    "keys_for_pod",
    "keys_for_pod_group",
    "keys_for_template",
    "owning_pod",
    "pod_needs_claims",
    "pod_needs_work",
    "render_consumer",
    "resolve",
    "sync_claim",
    "sync_pod",
]
