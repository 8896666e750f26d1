"""CycleState: what one plugin computes in PreFilter/PreScore and reads again per node.

Keys are the plugin's own (upstream uses "PreFilter" + plugin name). Preemption clones the state
before it removes victims, so a value stored here must either be immutable or implement
`clone()`: a clone that shares a mutable value would leak the simulation into the real cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from dra_operator.controllers.scheduler.framework._reuse import FilterPlan, ScorePlan


@runtime_checkable
class Cloneable(Protocol):
    def clone(self) -> Cloneable: ...


class CycleState:
    """Per-pod, per-cycle plugin data; see the module docstring."""

    __slots__ = ("_data", "filter_plan", "score_plan", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, object] = {}
        self.skip_filter: set[str] = set()  # plugins whose PreFilter said Skip
        self.skip_score: set[str] = set()  # plugins whose PreScore said Skip
        # The framework's plans for this cycle's Filter and Score (`_reuse`), made on first use.
        self.filter_plan: FilterPlan | None = None
        self.score_plan: ScorePlan | None = None

    def write(self, key: str, value: object) -> None:
        self._data[key] = value

    def read(self, key: str) -> object:
        """The value stored under `key`; KeyError when the plugin's PreFilter did not run."""
        return self._data[key]

    def get(self, key: str) -> object | None:
        return self._data.get(key)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy._data = {
            k: v.clone() if isinstance(v, Cloneable) else v for k, v in self._data.items()
        }
        copy.skip_filter = set(self.skip_filter)
        copy.skip_score = set(self.skip_score)
        copy.filter_plan = self.filter_plan
        copy.score_plan = self.score_plan
        return copy
