"""The device-taint eviction controller: kube-controller-manager's devicetainteviction, sans I/O.

Eviction times (`pod_eviction`, `claim_eviction`) and the DeviceTaintRule condition
(`rule_condition`) are pure; `EvictionReconciler` turns them into queue timers and writes
through `EvictionWriter`. See docs/eviction.md.
"""

from dra_operator.controllers.eviction._controller import (
    CANCELLING_DELETION,
    DISRUPTION_MESSAGE,
    MARKING_FOR_DELETION,
    RULE_STATUS_DELAY,
    EvictionKey,
    EvictionReconciler,
    EvictionWriter,
    Pending,
)
from dra_operator.controllers.eviction._events import (
    changed_devices,
    keys_for_claim,
    keys_for_devices,
    keys_for_pod,
    keys_for_rule,
    keys_for_slice,
)
from dra_operator.controllers.eviction._kube import (
    CONTROLLER_NAME,
    KubeEvictionWriter,
    disruption_patch,
)
from dra_operator.controllers.eviction._status import (
    CONDITION_EVICTION_IN_PROGRESS,
    RULE_STATUS_PERIOD,
    RuleCounts,
    current_condition,
    is_unchanged,
    rule_condition,
    status_apply_body,
    wait_before_update,
)
from dra_operator.controllers.eviction._taints import (
    NO_EXECUTE,
    Eviction,
    Reason,
    RuleTaint,
    SliceTaint,
    claim_eviction,
    current_slices,
    is_reserved_for,
    pod_eviction,
    rule_matches,
    slice_taints,
)

__all__ = [
    "CANCELLING_DELETION",
    "CONDITION_EVICTION_IN_PROGRESS",
    "CONTROLLER_NAME",
    "DISRUPTION_MESSAGE",
    "MARKING_FOR_DELETION",
    "NO_EXECUTE",
    "RULE_STATUS_DELAY",
    "RULE_STATUS_PERIOD",
    "Eviction",
    "EvictionKey",
    "EvictionReconciler",
    "EvictionWriter",
    "KubeEvictionWriter",
    "Pending",
    "Reason",
    "RuleCounts",
    "RuleTaint",
    "SliceTaint",
    "changed_devices",
    "claim_eviction",
    "current_condition",
    "current_slices",
    "disruption_patch",
    "is_reserved_for",
    "is_unchanged",
    "keys_for_claim",
    "keys_for_devices",
    "keys_for_pod",
    "keys_for_rule",
    "keys_for_slice",
    "pod_eviction",
    "rule_condition",
    "rule_matches",
    "slice_taints",
    "status_apply_body",
    "wait_before_update",
]
