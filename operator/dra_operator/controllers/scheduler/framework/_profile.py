"""A scheduling profile: which plugins run, in which order, with which weights and args.

The shape of one `KubeSchedulerConfiguration.profiles[]` entry after upstream's defaulting:
`multi_point` lists every enabled plugin in order (a plugin serves each point it implements),
`disabled` removes a plugin from one point (`"*"` disables it everywhere), `weights` are the
Score weights, `args` the `pluginConfig` args handed to each plugin's factory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dra_operator.model import FrozenMap

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
)
"""KubeSchedulerConfiguration's names of the points, in the order a cycle reaches them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """One profile; see the module docstring."""

    scheduler_name: str
    multi_point: tuple[str, ...]
    disabled: FrozenMap[str, frozenset[str]] = field(default_factory=FrozenMap)
    weights: FrozenMap[str, int] = field(default_factory=FrozenMap)
    args: FrozenMap[str, Mapping[str, object]] = field(default_factory=FrozenMap)
    percentage_of_nodes_to_score: int | None = None  # None: upstream's adaptive default

    def enabled_at(self, point: str) -> tuple[str, ...]:
        """The plugins named for `point`, in order; the runtime keeps those implementing it."""
        off = self.disabled.get(point, frozenset()) | self.disabled.get("*", frozenset())
        return tuple(name for name in self.multi_point if name not in off)

    def weight(self, plugin: str) -> int:
        """Upstream's default weight for a score plugin not given one is 1."""
        return self.weights.get(plugin, 1)
