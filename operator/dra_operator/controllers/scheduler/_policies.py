"""Which AllocationPolicy and hooks steer one scheduling decision (docs/policies.md).

The claims one decision allocates (a pod's unallocated claims, or one standalone claim) are
allocated together, so they share one policy: among the policies that govern any of them (each
claim's own winner: the most specific matching valid policy, ties by name), again the most
specific, ties by name. A pod's claims that are already allocated take no part. No governing
policy means the scheduler's own settings (FirstFit) and every loaded hook.

`Governor` reads the policy and namespace stores as they are at decision time, so a policy
created, changed or deleted applies to the next decision without any bookkeeping here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from dra_operator.cluster import ObjectKey, Store
from dra_operator.controllers.scheduler._state import Settings
from dra_operator.hooks import (
    AllocationPolicy,
    Guard,
    HookPoints,
    HookSet,
    allocator_policy,
    decision_policy,
)
from dra_operator.model import ResourceClaim

_NO_LABELS: Mapping[str, str] = {}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """A decision's settings (strategy, hooks, weights, budget) and its async hook points."""

    settings: Settings
    points: HookPoints
    policy: str = ""  # the governing AllocationPolicy's name; "" when none governs


class Governor:
    """Maps the claims of a decision to their `Choice`; see the module docstring."""

    def __init__(
        self,
        hooks: HookSet | None = None,
        *,
        policies: Store[AllocationPolicy] | None = None,
        namespaces: Store[Mapping[str, str]] | None = None,
    ) -> None:
        self.hooks = hooks if hooks is not None else HookSet((), Guard())
        self._policies = policies
        self._namespaces = namespaces

    def governing(self, claims: Sequence[ResourceClaim]) -> AllocationPolicy | None:
        """The policy the claims are decided with, or None."""
        if self._policies is None or not claims:
            return None
        policies = [entry.obj for entry in self._policies]
        return decision_policy(policies, claims, self._labels, self.hooks.names)

    def choose(self, claims: Sequence[ResourceClaim], base: Settings) -> Choice:
        """The settings and hook points for allocating `claims` (see the module docstring)."""
        governing = self.governing(claims)
        chosen = self.hooks.select(governing.hooks if governing is not None else None)
        if governing is None:
            if not chosen.hooks:
                return Choice(settings=base, points=chosen.points)
            return Choice(
                settings=dataclasses.replace(base, policy=chosen.policy(base.policy)),
                points=chosen.points,
            )
        budget = base.budget
        if governing.search_steps is not None:
            budget = dataclasses.replace(budget, max_steps=governing.search_steps)
        if governing.search_timeout is not None:
            budget = dataclasses.replace(budget, timeout=governing.search_timeout)
        policy = chosen.policy(
            allocator_policy(governing),
            strategy_weight=governing.strategy_weight,
            hook_weight=governing.hook_weight,
        )
        return Choice(
            settings=dataclasses.replace(base, policy=policy, budget=budget),
            points=chosen.points,
            policy=governing.name,
        )

    def _labels(self, namespace: str) -> Mapping[str, str]:
        if self._namespaces is None:
            return _NO_LABELS
        entry = self._namespaces.get(ObjectKey("", namespace))
        return entry.obj if entry is not None else _NO_LABELS
