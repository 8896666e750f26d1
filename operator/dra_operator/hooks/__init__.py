"""hooks: the Python extension API (docs/hooks.md) and AllocationPolicy objects.

Hooks are loaded from entry points of group `dra_operator.hooks` or `--hook module:attr`.
`HookPolicy` implements the allocator's `Policy` Protocol (filter_device, score_device,
score_node: hooks can only veto or reorder devices, the allocator still checks each one);
`HookPoints` are the async points the scheduler and eviction controller await
(before_allocate, after_allocate, before_evict). Hooks with `SCHEDULER_POINTS` methods also
serve as scheduling-framework plugins (`controllers.scheduler`). Every call goes through a
`Guard`: counted,
timed, and contained per the hook's failure mode. `governing_policy` maps AllocationPolicy
objects to the allocator policy that governs a claim.
"""

from dra_operator.hooks._governing import (
    AllocationPolicy,
    allocator_policy,
    decision_policy,
    governed_counts,
    governing_policy,
    parse_allocation_policy,
    policy_status,
)
from dra_operator.hooks._guard import Failed, Guard
from dra_operator.hooks._load import (
    DEFAULT_TIMEOUT,
    DEFAULT_WEIGHT,
    ENTRY_POINT_GROUP,
    POINTS,
    SCHEDULER_POINTS,
    FailureMode,
    LoadedHook,
    load_hooks,
)
from dra_operator.hooks._points import EVICTION_RETRY, HookPoints, Refusal
from dra_operator.hooks._policy import DeviceInfo, HookPolicy, NodeAllocation
from dra_operator.hooks._selectors import LabelSelector, parse_label_selector
from dra_operator.hooks._set import HookSet

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_WEIGHT",
    "ENTRY_POINT_GROUP",
    "EVICTION_RETRY",
    "POINTS",
    "SCHEDULER_POINTS",
    "AllocationPolicy",
    "DeviceInfo",
    "Failed",
    "FailureMode",
    "Guard",
    "HookPoints",
    "HookPolicy",
    "HookSet",
    "LabelSelector",
    "LoadedHook",
    "NodeAllocation",
    "Refusal",
    "allocator_policy",
    "decision_policy",
    "governed_counts",
    "governing_policy",
    "load_hooks",
    "parse_allocation_policy",
    "parse_label_selector",
    "policy_status",
]
