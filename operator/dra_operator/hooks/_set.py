"""`HookSet`: the hooks an operator loaded, and the policy and points built from them.

The scheduler builds one per operator at start-up (`HookSet.load`), then, per claim, takes the
governing AllocationPolicy's selection (`select`): its strategy wrapped by `policy`, and the
async `points` of the same hooks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dra_operator.allocator import FirstFit, Policy
from dra_operator.errors import HookLoadError
from dra_operator.hooks._guard import Guard
from dra_operator.hooks._load import LoadedHook, load_hooks
from dra_operator.hooks._points import HookPoints
from dra_operator.hooks._policy import HookPolicy
from dra_operator.observability import Metrics

__all__ = ["HookSet"]


class HookSet:
    def __init__(self, hooks: Sequence[LoadedHook], guard: Guard) -> None:
        self.hooks = tuple(hooks)
        self.guard = guard
        self._by_name = {hook.name: hook for hook in self.hooks}

    @classmethod
    def load(
        cls,
        specs: Iterable[str] = (),
        *,
        metrics: Metrics | None = None,
        use_entry_points: bool = True,
    ) -> HookSet:
        """Entry points of `dra_operator.hooks` plus `--hook module:attr`; raises HookLoadError."""
        return cls(load_hooks(specs, use_entry_points=use_entry_points), Guard(metrics))

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    def select(self, names: Iterable[str] | None) -> HookSet:
        """The named hooks (None: all of them); raises HookLoadError for an unknown name."""
        if names is None:
            return self
        chosen = []
        for name in names:
            if name not in self._by_name:
                raise HookLoadError(f"hook {name}: not loaded by this operator")
            chosen.append(self._by_name[name])
        return HookSet(chosen, self.guard)

    def policy(
        self,
        base: Policy | None = None,
        *,
        strategy_weight: float = 1.0,
        hook_weight: float = 1.0,
        node: str = "",
    ) -> HookPolicy:
        return HookPolicy(
            hooks=self.hooks,
            guard=self.guard,
            base=base if base is not None else FirstFit(),
            strategy_weight=strategy_weight,
            hook_weight=hook_weight,
            node=node,
        )

    @property
    def points(self) -> HookPoints:
        return HookPoints(self.hooks, self.guard)
