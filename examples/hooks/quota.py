"""Example hook: refuse claims of namespaces without the label `dra.example.com/allowed`.

Shows `before_allocate`, whose answer (a reason) ends up in the pod's FailedScheduling event,
and `after_allocate`, which only observes (here: counts allocations per namespace).
"""

from __future__ import annotations

from collections import Counter

from dra_operator.model import AllocationResult, ResourceClaim


class RefuseUnlabelled:
    def __init__(self) -> None:
        self.allocated: Counter[str] = Counter()

    async def before_allocate(self, claim: ResourceClaim) -> str | None:
        if claim.metadata.labels.get("dra.example.com/allowed") == "true":
            return None
        return "the claim lacks the label dra.example.com/allowed=true"

    async def after_allocate(self, claim: ResourceClaim, result: AllocationResult) -> None:
        self.allocated[claim.metadata.namespace or ""] += 1
