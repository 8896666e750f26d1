"""The scheduler controller: kube-scheduler's DynamicResources cycle for pods naming our scheduler.

Sans-I/O core: `decide_pod` / `decide_claim` (claims, node filtering, allocation, choice by
score) over `State`, the FailedScheduling text (`fit_error`), the framework that runs the node
plugins on the NodeInfos kept from events (`default_framework`, `framework/`), the event
mappers, the write bodies and the metric labels of an attempt (`blocking_reason`).
`Scheduler` drives it: serial decisions against the ledger, concurrent writes through
`SchedulerWriter` (`KubeSchedulerWriter` over `kube.Client`).
DeviceTaintRules add their taints to the slices a decision reads (`TaintedSlices`).
Extended resources backed by DRA get the pod's special claim (`_extended`).
AllocationPolicies and hooks steer each decision through `Governor` (docs/policies.md).
See docs/scheduler.md.
"""

from dra_operator.controllers.scheduler._classes_handle import ClassesHandle
from dra_operator.controllers.scheduler._classic import (
    DEALLOCATION_DONE,
    PROVIDE_INFORMATION,
    UNSUITABLE,
    WAITING_FOR_DRIVER,
    WAITING_TO_ALLOCATE,
    PublishContext,
    RequestDeallocation,
    waiting_texts,
)
from dra_operator.controllers.scheduler._decide import (
    decide_claim,
    decide_pod,
    handles,
)
from dra_operator.controllers.scheduler._decision import (
    ClaimWrite,
    Decision,
    Placement,
    Unschedulable,
    Wait,
    consumer_of,
)
from dra_operator.controllers.scheduler._events import (
    WorkKey,
    frees_room,
    keys_for_claim,
    keys_for_pod,
    releases_devices,
)
from dra_operator.controllers.scheduler._explain import (
    NO_NODES,
    NOT_AVAILABLE_ON_NODE,
    claim_failure,
    fit_error,
    prefilter_error,
    renamed_reason,
)
from dra_operator.controllers.scheduler._extended import (
    STALE_CLAIM,
    ExtendedWrite,
    create_body,
    pod_status_patch,
)
from dra_operator.controllers.scheduler._kube import KubeContextWriter, KubeSchedulerWriter
from dra_operator.controllers.scheduler._live_handle import KubePodBinder, LiveHandle
from dra_operator.controllers.scheduler._metrics import (
    SchedulerMetrics,
    blocking_reason,
    input_error_reason,
)
from dra_operator.controllers.scheduler._named import NamedInventory, NamedWrite
from dra_operator.controllers.scheduler._policies import Choice, Governor
from dra_operator.controllers.scheduler._preemption import DEVICES_NOMINATED, PreemptionWriter
from dra_operator.controllers.scheduler._preemptor import Preemptor
from dra_operator.controllers.scheduler._profile import (
    REGISTRY,
    check_configured,
    default_framework,
    default_profile,
)
from dra_operator.controllers.scheduler._scheduler import (
    ContextWriter,
    Scheduler,
    SchedulerWriter,
)
from dra_operator.controllers.scheduler._selectors import CELSelectors, cel_stats
from dra_operator.controllers.scheduler._state import (
    Settings,
    State,
)
from dra_operator.controllers.scheduler._taints import TaintedSlices
from dra_operator.controllers.scheduler._verdicts import Fits, Rejected, Verdicts, shape_of
from dra_operator.controllers.scheduler._writes import (
    Event,
    binding_body,
    finalizer_body,
    has_finalizer,
    status_body,
)
from dra_operator.controllers.scheduler.plugins.dynamicresources import (
    MAX_RESERVED_FOR,
    claims_to_allocate,
    nodes_to_score,
)

__all__ = [
    "DEALLOCATION_DONE",
    "DEVICES_NOMINATED",
    "MAX_RESERVED_FOR",
    "NOT_AVAILABLE_ON_NODE",
    "NO_NODES",
    "PROVIDE_INFORMATION",
    "REGISTRY",
    "STALE_CLAIM",
    "UNSUITABLE",
    "WAITING_FOR_DRIVER",
    "WAITING_TO_ALLOCATE",
    "CELSelectors",
    "Choice",
    "ClaimWrite",
    "ClassesHandle",
    "ContextWriter",
    "Decision",
    "Event",
    "ExtendedWrite",
    "Fits",
    "Governor",
    "KubeContextWriter",
    "KubePodBinder",
    "KubeSchedulerWriter",
    "LiveHandle",
    "NamedInventory",
    "NamedWrite",
    "Placement",
    "PreemptionWriter",
    "Preemptor",
    "PublishContext",
    "Rejected",
    "RequestDeallocation",
    "Scheduler",
    "SchedulerMetrics",
    "SchedulerWriter",
    "Settings",
    "State",
    "TaintedSlices",
    "Unschedulable",
    "Verdicts",
    "Wait",
    "WorkKey",
    "binding_body",
    "blocking_reason",
    "cel_stats",
    "check_configured",
    "claim_failure",
    "claims_to_allocate",
    "consumer_of",
    "create_body",
    "decide_claim",
    "decide_pod",
    "default_framework",
    "default_profile",
    "finalizer_body",
    "fit_error",
    "frees_room",
    "handles",
    "has_finalizer",
    "input_error_reason",
    "keys_for_claim",
    "keys_for_pod",
    "nodes_to_score",
    "pod_status_patch",
    "prefilter_error",
    "releases_devices",
    "renamed_reason",
    "shape_of",
    "status_body",
    "waiting_texts",
]
