"""Hooks as an allocator policy: `filter_device` vetoes, `score_device` orders, `score_node` ranks.

`HookPolicy` implements the allocator's `Policy` Protocol around a base policy (a strategy).
It can only leave devices out of the search order or reorder them: the allocator still checks
every selector, taint, capacity, counter and constraint on whatever remains, so a hook can make
an allocation fail or pick other devices, never produce one upstream would refuse.

Order: the base policy's order, minus vetoed devices, then stably sorted by the sum of the
`score_device` answers (highest first), so hooks break the strategy's order and ties keep it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from dra_operator.allocator import Candidate, FirstFit, Ledger, Policy, RequestData
from dra_operator.hooks._guard import Failed, Guard
from dra_operator.hooks._load import FailureMode, LoadedHook
from dra_operator.model import Device, DeviceID

__all__ = ["DeviceInfo", "HookPolicy", "NodeAllocation"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceInfo:
    """What `filter_device` and `score_device` see: one device for one request."""

    id: DeviceID
    device: Device
    request: str  # "name" or "parent/sub"
    device_class: str
    node: str  # the candidate node ("" when the caller did not say)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeAllocation:
    """What `score_node` sees: the devices a complete allocation of a pod's claims picked on
    one node, in pick order."""

    node: str
    devices: tuple[DeviceInfo, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class HookPolicy:
    """An allocator `Policy`: the base strategy steered by hooks (see the module docstring)."""

    hooks: tuple[LoadedHook, ...]
    guard: Guard
    base: Policy = field(default_factory=FirstFit)
    strategy_weight: float = 1.0
    hook_weight: float = 1.0
    node: str = ""

    @property
    def alternatives(self) -> int:
        """Hooks rank what the strategy explores; they add no exploration of their own."""
        return self.base.alternatives

    @property
    def name(self) -> str:
        if not self.hooks:
            return self.base.name
        return f"{self.base.name}+{','.join(hook.name for hook in self.hooks)}"

    def for_node(self, node: str) -> HookPolicy:
        """The same policy, telling hooks which candidate node is being tried."""
        return replace(self, node=node)

    def order_candidates(
        self, request: RequestData, candidates: Sequence[Candidate], ledger: Ledger
    ) -> Sequence[Candidate]:
        ordered = self.base.order_candidates(request, candidates, ledger)
        filters = [hook for hook in self.hooks if hook.has("filter_device")]
        scorers = [hook for hook in self.hooks if hook.has("score_device")]
        if not filters and not scorers:
            return ordered
        kept: list[tuple[float, Candidate]] = []
        for candidate in ordered:
            info = DeviceInfo(
                id=candidate.id,
                device=candidate.device,
                request=request.full_name,
                device_class=request.device_class.metadata.name,
                node=self.node,
            )
            if not all(self._allows(hook, info) for hook in filters):
                continue
            score = 0.0
            for hook in scorers:
                got = self._number(hook, "score_device", info)
                if got is None:
                    break
                score += got
            else:
                kept.append((score, candidate))
        if scorers:
            kept.sort(key=lambda pair: -pair[0])
        return [candidate for _, candidate in kept]

    def score(self, picked: Sequence[Candidate], ledger: Ledger) -> float:
        total = self.strategy_weight * self.base.score(picked, ledger)
        view = NodeAllocation(
            node=self.node,
            devices=tuple(
                DeviceInfo(id=c.id, device=c.device, request="", device_class="", node=self.node)
                for c in picked
            ),
        )
        for hook in self.hooks:
            if hook.has("score_node"):
                got = self._number(hook, "score_node", view)
                if got is None:
                    return -math.inf
                total += self.hook_weight * got
        return total

    def _allows(self, hook: LoadedHook, info: DeviceInfo) -> bool:
        got = self.guard.call(hook, "filter_device", info)
        if isinstance(got, Failed):
            return hook.failure_mode is FailureMode.IGNORE
        return bool(got)

    def _number(self, hook: LoadedHook, point: str, arg: object) -> float | None:
        """The hook's score; 0 for an ignored failure, None for a refusing one."""
        got = self.guard.call(hook, point, arg)
        if not isinstance(got, Failed):
            if isinstance(got, int | float) and not isinstance(got, bool) and math.isfinite(got):
                return float(got)
            got = self.guard.report(hook, point, f"returned {got!r}, not a finite number")
        return 0.0 if hook.failure_mode is FailureMode.IGNORE else None
