"""The `EvictionInProgress` condition of a DeviceTaintRule (upstream-dra.md §5.4), sans I/O.

Upstream's `maybeUpdateRuleStatus`: the condition is recomputed at most every 10 s while the
rule's generation is unchanged (its `lastTransitionTime`, bumped on every change, is the clock),
and written by server-side apply with the controller's name as field manager, forced, with the
rule's UID as a precondition. Reasons and message texts are upstream's verbatim.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Final

from dra_operator.model import Condition, DeviceTaintRule

CONDITION_EVICTION_IN_PROGRESS: Final = "EvictionInProgress"
RULE_STATUS_PERIOD: Final = 10.0
"""Seconds between two status updates of one rule generation (upstream's `ruleStatusPeriod`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleCounts:
    """What the condition reports; for effect None the pending counts are simulated."""

    pending_pods: int = 0
    pending_namespaces: int = 0
    published_devices: int = 0
    allocated_devices: int = 0
    evicted_pods: int = 0


def _count(n: int, one: str, many: str) -> str:
    return one if n == 1 else f"{n} {many}"


def rule_condition(rule: DeviceTaintRule, counts: RuleCounts) -> Condition:
    """The condition for `rule` now; `last_transition_time` is left for the writer."""
    effect = rule.taint.effect
    status, message = "False", ""
    if effect == "NoExecute":
        if counts.pending_pods > 0:
            status, reason = "True", "PodsPendingEviction"
            message = (
                _count(counts.pending_pods, "1 pod needs", "pods need")
                + " to be evicted in "
                + _count(counts.pending_namespaces, "1 namespace.", "different namespaces.")
            )
        elif counts.evicted_pods > 0:
            reason = "Completed"
        else:
            reason = "NotStarted"
    elif effect == "None":
        reason = "NoEffect"
        message = (
            _count(counts.published_devices, "1 published device", "published devices")
            + " selected. "
            + _count(counts.allocated_devices, "1 allocated device", "allocated devices")
            + " selected. "
            + _count(counts.pending_pods, "1 pod", "pods")
            + " would be evicted in "
            + _count(counts.pending_namespaces, "1 namespace", "different namespaces")
            + " if the effect was NoExecute. This information will not be updated again."
            " Recreate the DeviceTaintRule to trigger an update."
        )
    else:
        reason = "OtherEffect"
        message = "Eviction only happens for the NoExecute effect."
    if counts.evicted_pods > 0:
        evicted = _count(counts.evicted_pods, "1 pod", "pods")
        message += (" " if message else "") + f"{evicted} evicted since starting the controller."
    return Condition(
        type=CONDITION_EVICTION_IN_PROGRESS,
        status=status,
        observed_generation=rule.metadata.generation,
        reason=reason,
        message=message,
    )


def current_condition(rule: DeviceTaintRule) -> Condition | None:
    return next((c for c in rule.conditions if c.type == CONDITION_EVICTION_IN_PROGRESS), None)


def wait_before_update(rule: DeviceTaintRule, now: datetime.datetime) -> float:
    """Seconds until the condition may be recomputed; 0 when it may be now."""
    existing = current_condition(rule)
    if existing is None or existing.observed_generation != rule.metadata.generation:
        return 0.0
    if existing.last_transition_time is None:
        return 0.0
    since = (now - existing.last_transition_time).total_seconds()
    return max(RULE_STATUS_PERIOD - since, 0.0)


def is_unchanged(rule: DeviceTaintRule, condition: Condition) -> bool:
    """Equal but for the transition time: then nothing is written."""
    existing = current_condition(rule)
    if existing is None:
        return False
    return (
        existing.status,
        existing.reason,
        existing.message,
        existing.observed_generation,
    ) == (condition.status, condition.reason, condition.message, condition.observed_generation)


def status_apply_body(
    rule: DeviceTaintRule, condition: Condition, api_version: str, now: datetime.datetime
) -> dict[str, Any]:
    """The server-side apply body for `devicetaintrules/status` (UID as precondition)."""
    stamp = now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": api_version,
        "kind": "DeviceTaintRule",
        "metadata": {"name": rule.metadata.name, "uid": rule.metadata.uid},
        "status": {
            "conditions": [
                {
                    "type": condition.type,
                    "status": condition.status,
                    "reason": condition.reason,
                    "message": condition.message,
                    "observedGeneration": condition.observed_generation,
                    "lastTransitionTime": stamp,
                }
            ]
        },
    }
