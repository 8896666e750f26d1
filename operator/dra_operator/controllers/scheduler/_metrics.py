"""What the scheduler reports to `/metrics`, and how an allocator answer maps to its labels.

An attempt is one `allocate` call: a pod's unallocated claims on one candidate node, or a
standalone claim on one node. Nodes rejected before the allocator runs (not Ready, taints,
selectors, resources) are not attempts. The reason of an attempt that did not allocate is the
headline of the allocator's explanation: the largest group of devices rejected for the first
request that is short of devices (devices of another class only when nothing else was
rejected), or "constraint" when every request fits alone but the set does not. Everything is
recorded once per attempt and per bind, never per device.
"""

from __future__ import annotations

import time
from typing import Protocol

from dra_operator import errors
from dra_operator.allocator import Allocation, Explanation, Reason
from dra_operator.controllers import APIRecorder, QueueRecorder
from dra_operator.observability import AllocationOutcome, BlockingReason

_BY_REASON = {
    Reason.IN_USE: BlockingReason.IN_USE,
    Reason.BINDING_CONDITIONS: BlockingReason.BINDING_CONDITIONS,
    Reason.CLASS_SELECTOR: BlockingReason.CLASS_SELECTOR,
    Reason.REQUEST_SELECTOR: BlockingReason.REQUEST_SELECTOR,
    Reason.SELECTOR_ERROR: BlockingReason.CEL_ERROR,
    Reason.NODE: BlockingReason.NODE,
    Reason.NODE_OPERATIONS: BlockingReason.NODE,  # the node does not declare the feature
    Reason.PARTITIONABLE_DISABLED: BlockingReason.PARTITIONABLE_DISABLED,
    Reason.TAINT: BlockingReason.TAINT,
    Reason.CAPACITY: BlockingReason.CAPACITY,
    Reason.COUNTERS: BlockingReason.COUNTERS,
    Reason.POLICY: BlockingReason.POLICY,
}


class SchedulerMetrics(APIRecorder, Protocol):
    """The part of `observability.Metrics` the scheduler writes to."""

    def allocation_attempted(
        self,
        outcome: AllocationOutcome,
        *,
        seconds: float,
        steps: int,
        reason: BlockingReason | None = None,
    ) -> None: ...

    def pod_bound(self, *, seconds_since_creation: float) -> None: ...

    def extended_claim_created(self, *, ok: bool) -> None: ...

    def workqueue(self, name: str) -> QueueRecorder: ...


def blocking_reason(explanation: Explanation) -> tuple[AllocationOutcome, BlockingReason]:
    """The outcome and reason labels of an attempt the allocator explained."""
    if explanation.aborted:
        return AllocationOutcome.ABORTED, BlockingReason.SEARCH_BUDGET
    short = next((r for r in explanation.requests if r.is_short), None)
    if short is None:
        return AllocationOutcome.UNSCHEDULABLE, BlockingReason.CONSTRAINT
    # Sorted largest group first. Devices of another class say nothing about what is missing,
    # so that group is the headline only when it is the only one.
    wanted = [g for g in short.rejected if g.reason is not Reason.CLASS_SELECTOR]
    headline = wanted or short.rejected
    if headline:
        return AllocationOutcome.UNSCHEDULABLE, _BY_REASON[headline[0].reason]
    if any(pool.problem == "incomplete" for pool in explanation.pools):
        return AllocationOutcome.UNSCHEDULABLE, BlockingReason.INCOMPLETE_POOL
    return AllocationOutcome.UNSCHEDULABLE, BlockingReason.NO_DEVICES


def input_error_reason(exc: errors.AllocationInputError) -> BlockingReason:
    """A selector that failed to compile or evaluate, or any other input upstream refuses."""
    if isinstance(exc.__cause__, errors.CELError):
        return BlockingReason.CEL_ERROR
    return BlockingReason.INVALID_OBJECT


def record_attempt(
    metrics: SchedulerMetrics | None,
    started: float,
    answer: Allocation | errors.AllocationInputError,
) -> None:
    """One `allocate` call that began at `started` (`time.perf_counter`) and gave `answer`."""
    if metrics is None:
        return
    seconds = time.perf_counter() - started
    if isinstance(answer, errors.AllocationInputError):
        reason = input_error_reason(answer)
        metrics.allocation_attempted(
            AllocationOutcome.ERROR, seconds=seconds, steps=0, reason=reason
        )
    elif answer.explanation is None:
        metrics.allocation_attempted(
            AllocationOutcome.ALLOCATED, seconds=seconds, steps=answer.steps
        )
    else:
        outcome, reason = blocking_reason(answer.explanation)
        metrics.allocation_attempted(outcome, seconds=seconds, steps=answer.steps, reason=reason)
