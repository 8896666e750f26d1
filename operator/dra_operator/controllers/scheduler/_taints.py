"""Slices as the allocator sees them: with the taints of the DeviceTaintRules that select them.

Upstream's scheduler reads slices through the resourceslice tracker, which appends a copy of
each matching rule's taint to the device (upstream-dra.md §5.3), so a NoSchedule or NoExecute
taint from a rule blocks allocation exactly like one published in the slice. Patching every
slice on every decision would cost a pass over every device and rule per node tried; instead
each slice is patched once and the copy kept until the slice or any rule changes. A slice is
recognised as unchanged by identity: the store replaces the parsed object on every update.

Without a rule store (the server does not serve the kind, or device taints are off) the view
is the slices as they are.
"""

from __future__ import annotations

from dra_operator.cluster import Change, Entry, ObjectKey, Store
from dra_operator.model import DeviceTaintRule, ResourceSlice, apply_taint_rules


class TaintedSlices:
    """The rule-patched copy of each slice, derived lazily and dropped when an input changes."""

    def __init__(
        self, rules: Store[DeviceTaintRule] | None = None, *, selectorless_matches_all: bool = False
    ) -> None:
        self._rules_store = rules
        self._selectorless_matches_all = selectorless_matches_all  # the 1.36 tracker's reading
        self._rules: tuple[DeviceTaintRule, ...] | None = None
        self._patched: dict[ObjectKey, tuple[ResourceSlice, ResourceSlice]] = {}

    @property
    def enabled(self) -> bool:
        return self._rules_store is not None

    @property
    def revision(self) -> int:
        """How often the rules changed: what was derived from the views is stale once it moves."""
        return self._rules_store.revision if self._rules_store is not None else 0

    def rules(self) -> tuple[DeviceTaintRule, ...]:
        """The rules in effect, by name (upstream lists them in informer order: unordered)."""
        if self._rules is None:
            store = self._rules_store
            entries = sorted(store, key=lambda e: e.key.name) if store is not None else []
            self._rules = tuple(entry.obj for entry in entries)
        return self._rules

    def view(self, entry: Entry[ResourceSlice]) -> ResourceSlice:
        """The slice with the rules' taints appended to the devices they select."""
        rules = self.rules()
        if not rules:
            return entry.obj
        kept = self._patched.get(entry.key)
        if kept is not None and kept[0] is entry.obj:
            return kept[1]
        (patched,) = apply_taint_rules(
            [entry.obj], rules, selectorless_matches_all=self._selectorless_matches_all
        )
        self._patched[entry.key] = (entry.obj, patched)
        return patched

    def slice_changed(self, change: Change[ResourceSlice]) -> None:
        self._patched.pop(change.key, None)

    def rules_changed(self) -> None:
        self._rules = None
        self._patched.clear()
