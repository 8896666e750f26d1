"""Names shared with the Kubernetes API and upstream components (architecture rule 9).

A leaf module like `errors`: it imports nothing from the package, so every layer can use it.
Upstream's spelling is kept wherever upstream has one, because upstream components act on these
names: a claim we allocate carries upstream's finalizer, so kube-controller-manager deallocates it
correctly, and a claim kube-controller-manager generated carries upstream's annotation, so we
find it as an orphan after a restart. Where upstream has no name, ours live under
`dra-operator.dev`.

Sources: k8s.io/api resource/v1 `types.go` (finalizer, annotations), kube-controller-manager's
resourceclaim and device-taint-eviction controllers and kube-scheduler's `schedule_one.go`
(event reasons, field manager), all v1.36.4.
"""

from __future__ import annotations

from typing import Final

# -- API group names -------------------------------------------------------------------------

RESOURCE_GROUP: Final = "resource.k8s.io"
OUR_GROUP: Final = "dra-operator.dev"

# -- finalizer, annotations, labels ----------------------------------------------------------

DELETE_PROTECTION_FINALIZER: Final = "resource.kubernetes.io/delete-protection"
"""On every claim we allocate; removed only after the allocation is cleared."""

POD_CLAIM_NAME_ANNOTATION: Final = "resource.kubernetes.io/pod-claim-name"
"""On a generated claim: the `pod.spec.resourceClaims[].name` it was generated for."""

EXTENDED_RESOURCE_CLAIM_ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"
"""Value "true" on the claim the scheduler generates for DRA-backed extended resources."""

ALLOCATE_ANNOTATION: Final = f"{OUR_GROUP}/allocate"
"""On a standalone claim: ask the scheduler controller to allocate it without a consumer."""

ALLOCATE_IMMEDIATE: Final = "immediate"
"""The one value of `ALLOCATE_ANNOTATION` that we act on."""

NODE_ANNOTATION: Final = f"{OUR_GROUP}/node"
"""With `ALLOCATE_ANNOTATION`: the node the allocation must be usable on."""

# -- pod conditions --------------------------------------------------------------------------

CONDITION_DISRUPTION_TARGET: Final = "DisruptionTarget"
REASON_DELETION_BY_DEVICE_TAINT_MANAGER: Final = "DeletionByDeviceTaintManager"
CONDITION_POD_GROUP_INITIALLY_SCHEDULED: Final = "PodGroupInitiallyScheduled"
"""The PodGroup condition kube-scheduler sets after each group cycle (scheduling/v1beta1)."""

# -- event reasons ---------------------------------------------------------------------------

EVENT_FAILED_RESOURCE_CLAIM_CREATION: Final = "FailedResourceClaimCreation"
EVENT_FAILED_SCHEDULING: Final = "FailedScheduling"
EVENT_SCHEDULED: Final = "Scheduled"
EVENT_BINDING_CONDITIONS_PENDING: Final = "BindingConditionsPending"
EVENT_DEVICE_TAINT_MANAGER_EVICTION: Final = "DeviceTaintManagerEviction"

EVENT_TYPE_NORMAL: Final = "Normal"
EVENT_TYPE_WARNING: Final = "Warning"

# -- field managers and reporting components -------------------------------------------------

CLAIMS_FIELD_MANAGER: Final = "ResourceClaimController"
"""Owner of `pod.status.resourceClaimStatuses` entries (server-side apply, force).

Upstream's name on purpose: when kube-controller-manager and we both publish an entry for the
same pod claim, the apply is idempotent instead of a conflict between two managers.
"""

OPERATOR_FIELD_MANAGER: Final = "dra-operator"
"""Field manager of every other write the operator makes."""

CLAIMS_EVENT_COMPONENT: Final = "resource_claim"
"""Event source of the claims controller, as kube-controller-manager reports it."""

SCHEDULER_EVENT_COMPONENT: Final = "dra-operator"
"""Event source of the scheduler controller: the scheduler name pods ask for."""

DEFAULT_SCHEDULER_NAME: Final = "dra-operator"
"""The `spec.schedulerName` the scheduler controller places unless told otherwise."""

# -- work queue names (metric label `name`) ---------------------------------------------------

CLAIMS_QUEUE: Final = "resource_claim"
SCHEDULER_QUEUE: Final = "dra_operator_scheduler"
EVICTION_QUEUE: Final = "device_taint_eviction"
POLICY_STATUS_QUEUE: Final = "dra_operator_policy_status"

# -- admission policies of deploy/components (docs/coexistence.md) ---------------------------

ROUTE_CLAIMS_POLICY: Final = "dra-operator-route-claims"
"""MutatingAdmissionPolicy (and its binding): pods with claims get our scheduler name."""

REQUIRE_SCHEDULER_POLICY: Final = "dra-operator-require-scheduler"
"""ValidatingAdmissionPolicy (and its binding): pods with claims that name another scheduler
are refused, so only one allocator decides about devices."""

ROUTE_EXTENDED_RESOURCES_POLICY: Final = "dra-operator-route-extended-resources"
"""MutatingAdmissionPolicy (and its binding): pods asking for an extended resource a DeviceClass
maps get our scheduler name; the mapped names are its parameters (`EXTENDED_RESOURCES_PARAMS`)."""

REQUIRE_SCHEDULER_EXTENDED_RESOURCES_POLICY: Final = (
    "dra-operator-require-scheduler-extended-resources"
)
"""ValidatingAdmissionPolicy (and its binding): such pods naming another scheduler are refused."""

EXTENDED_RESOURCES_PARAMS: Final = "dra-operator-extended-resources"
"""The ConfigMap (in the operator's namespace) whose `data.names` lists the mapped names."""
