"""policy/v1 PodDisruptionBudget: what preemption reads to count the budgets a victim breaks.

kube-scheduler v1.37.2 (pkg/scheduler/framework/preemption, `filterPodsWithPDBViolation`) reads
only the namespace, `spec.selector`, `status.disruptionsAllowed` and `status.disruptedPods`
(pods the eviction API already charged to the budget, which are not charged again).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dra_operator.model._parse_common import (
    Raw,
    metadata,
    opt_int,
    opt_object,
)
from dra_operator.model._parse_pod_scheduling import label_selector
from dra_operator.model._pod_scheduling import LabelSelector
from dra_operator.model._types import ObjectMeta


@dataclass(frozen=True, slots=True, kw_only=True)
class PodDisruptionBudget:
    metadata: ObjectMeta
    selector: LabelSelector | None = None  # None or empty: the budget covers no pod here
    disruptions_allowed: int = 0
    disrupted_pods: frozenset[str] = field(default_factory=frozenset)  # pod names


def parse_pod_disruption_budget(raw: Raw) -> PodDisruptionBudget:
    spec = opt_object(raw, "spec", "") or {}
    status = opt_object(raw, "status", "") or {}
    selector = opt_object(spec, "selector", "spec")
    return PodDisruptionBudget(
        metadata=metadata(raw),
        selector=None if selector is None else label_selector(selector, "spec.selector"),
        disruptions_allowed=opt_int(status, "disruptionsAllowed", "status") or 0,
        disrupted_pods=frozenset(opt_object(status, "disruptedPods", "status") or {}),
    )
