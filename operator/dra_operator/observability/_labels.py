"""The label vocabularies of our metrics, as enums, so callers cannot invent a label value.

Every value is a time series, so each set is small and closed. deploy/monitoring's alerts and
dashboard select on some of them (docs/metrics.md); renaming one means changing those too.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


def bool_label(value: bool) -> str:
    """Go's spelling of a boolean label value, as upstream's metrics use it."""
    return "true" if value else "false"


class AllocationOutcome(enum.Enum):
    """How one allocation attempt (a claim set on a candidate node, or a standalone claim) ended."""

    ALLOCATED = "allocated"
    UNSCHEDULABLE = "unschedulable"  # no fit; the BlockingReason says why
    ABORTED = "aborted"  # the search budget ran out
    ERROR = "error"  # bad input: a missing DeviceClass, a broken selector, an invalid object


class BlockingReason(enum.Enum):
    """What stopped an attempt that did not allocate: the headline of its explanation.

    The controllers map the allocator's rejection reasons onto these; `CONSTRAINT` is for a set
    of requests that each fit alone but not together.
    """

    CLASS_SELECTOR = "class_selector"
    REQUEST_SELECTOR = "request_selector"
    TAINT = "taint"
    IN_USE = "in_use"
    CAPACITY = "capacity"
    COUNTERS = "counters"
    CONSTRAINT = "constraint"
    NODE = "node"
    BINDING_CONDITIONS = "binding_conditions"
    PARTITIONABLE_DISABLED = "partitionable_disabled"
    INCOMPLETE_POOL = "incomplete_pool"
    NO_DEVICES = "no_devices"
    POLICY = "policy"  # vetoed by the allocation policy or a filter_device hook
    SEARCH_BUDGET = "search_budget"
    CEL_ERROR = "cel_error"
    INVALID_OBJECT = "invalid_object"


class RetryReason(enum.Enum):
    """Why an API request was sent again."""

    CONFLICT = "conflict"
    TOO_MANY_REQUESTS = "too_many_requests"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"


class HookFailure(enum.Enum):
    """How a hook call failed."""

    ERROR = "error"  # raised
    TIMEOUT = "timeout"  # ran past its time limit


@dataclass(frozen=True, slots=True, kw_only=True)
class CELStats:
    """CEL work done since the last report: counts to add, never running totals.

    The cache is the per-device selector-result cache; an evaluation is a miss of it.
    """

    compilations: int = 0
    compilation_errors: int = 0
    evaluations: int = 0
    evaluation_errors: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
