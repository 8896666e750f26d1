"""`SelectionMemo`: selector outcomes per device object, kept across allocation calls.

`Eligibility` memoises per (request, device) for one call only, so a scheduler that tries every
node for every pod evaluates the same class and request selectors on the same devices again and
again. Model objects are frozen, and a slice update parses new device objects, so while a
device object lives its selector outcome for a given driver, class name and selector
expressions cannot change: the memo keys on the device object's identity and keeps the object
itself, so the identity cannot be reused while the entry lives. A changed class or claim
brings different expressions and so a different key. The outcomes depend on the features and
on the evaluator too, so the memo serves one (features, evaluator) pair and forgets everything
when a call brings another. Node selection per device is not memoised here: it depends on the
node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dra_operator.allocator._features import Features
from dra_operator.allocator._inputs import SelectorEvaluator
from dra_operator.model import Device

if TYPE_CHECKING:
    from dra_operator.allocator._requests import Rejection, SelectorFailure

Outcome = tuple["Rejection | SelectorFailure | None"]
"""A selector outcome, boxed so that "selectable" (None) differs from "not stored"."""

MAX_ENTRIES = 262_144

SelectorKey = tuple[str, tuple[str, ...]]
"""A class's name and its selector expressions, or "" and a request's selector expressions."""


class SelectionMemo:
    """Selector outcomes by (device identity, driver, selectors), bounded by `max_entries`.

    Pass one to every `allocate` call of a long-lived caller (the scheduler). Not for
    concurrent calls from several threads.
    """

    __slots__ = ("_bound_to", "_entries", "_selector_ids", "hits", "max_entries")

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._bound_to: tuple[Features, SelectorEvaluator] | None = None
        self._selector_ids: dict[SelectorKey, int] = {}
        self._entries: dict[tuple[int, str, int], tuple[Device, Outcome]] = {}
        self.hits = 0  # outcomes answered without evaluating (read by the operator's metrics)

    def bind(self, features: Features, evaluate: SelectorEvaluator) -> None:
        """Start a call with these inputs; forget everything if they differ from the last."""
        bound = self._bound_to
        if bound is None or bound[0] != features or bound[1] is not evaluate:
            self._bound_to = (features, evaluate)
            self._selector_ids.clear()
            self._entries.clear()

    def selector_id(self, key: SelectorKey) -> int:
        """A small number for `key`, cheaper to hash per device than the expressions."""
        found = self._selector_ids.get(key)
        if found is None:
            found = self._selector_ids[key] = len(self._selector_ids)
        return found

    def get(self, device: Device, driver: str, selector_id: int) -> Outcome | None:
        found = self._entries.get((id(device), driver, selector_id))
        if found is None or found[0] is not device:
            return None
        self.hits += 1
        return found[1]

    def put(self, device: Device, driver: str, selector_id: int, outcome: Outcome) -> None:
        if len(self._entries) >= self.max_entries:
            self._entries.clear()  # simple and rare: the next calls refill what they use
        self._entries[(id(device), driver, selector_id)] = (device, outcome)
