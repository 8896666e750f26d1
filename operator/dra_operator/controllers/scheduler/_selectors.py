"""The allocator's CEL seam (`allocator.SelectorEvaluator`) over the `cel` package.

Compiled selectors are cached by `cel.SelectorCache`; device views (what `device` is in CEL)
are built once per device object and kept while that object lives in the slice cache, so a
decision that tries many nodes does not rebuild them. Each view keeps the results of the
selectors evaluated on it (errors included: both are deterministic for a device object and the
features), so the next decision over the same device reuses them where the allocator's own
memo, which lasts one call, cannot. A slice update parses new device objects, whose views and
results are built afresh; old ones age out of the bounded cache.

The work is counted in plain integers (`stats`), read when `/metrics` is scraped: nothing on
this path calls a metric.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

from dra_operator.allocator import Features, SelectionMemo
from dra_operator.cel import CELFeatures, DeviceView, SelectorCache, device_view
from dra_operator.errors import CELRuntimeError
from dra_operator.model import Device
from dra_operator.observability import CELStats

MAX_VIEWS = 65_536

_Result = bool | CELRuntimeError


class _Viewed:
    """One device object, its CEL view and the selector results on it, by expression."""

    __slots__ = ("device", "results", "view")

    def __init__(self, device: Device, view: DeviceView) -> None:
        self.device = device  # kept so that its id cannot be reused while the entry lives
        self.view = view
        self.results: dict[str, _Result] = {}


class CELSelectors:
    """`allocator.SelectorEvaluator` backed by compiled CEL; errors raise `errors.CELError`."""

    def __init__(self, features: Features, cache: SelectorCache | None = None) -> None:
        self._features = CELFeatures(
            list_type_attributes=features.list_type_attributes,
            consumable_capacity=features.consumable_capacity,
            expose_lists=features.since_137,
        )
        self._cache = cache if cache is not None else SelectorCache()
        self._views: OrderedDict[tuple[str, int], _Viewed] = OrderedDict()
        self.evaluations = 0  # result-cache misses
        self.evaluation_errors = 0
        self.cache_hits = 0

    def __call__(self, expression: str, driver: str, device: Device, /) -> bool:
        compiled = self._cache.get(expression, self._features)  # a compile error raises here
        viewed = self._viewed(driver, device)
        result = viewed.results.get(expression)
        if result is None:
            self.evaluations += 1
            try:
                result = compiled.matches(viewed.view)
            except CELRuntimeError as exc:
                self.evaluation_errors += 1
                result = exc
            viewed.results[expression] = result
        else:
            self.cache_hits += 1
        if isinstance(result, CELRuntimeError):
            raise result.with_traceback(None)  # a fresh traceback, not one growing per raise
        return result

    def stats(self) -> CELStats:
        """Running totals since this evaluator was built (`Metrics.track_cel` takes deltas)."""
        return CELStats(
            compilations=self._cache.compilations,
            compilation_errors=self._cache.compilation_errors,
            evaluations=self.evaluations,
            evaluation_errors=self.evaluation_errors,
            cache_hits=self.cache_hits,
            cache_misses=self.evaluations,
        )

    def _viewed(self, driver: str, device: Device) -> _Viewed:
        key = (driver, id(device))
        found = self._views.get(key)
        if found is not None and found.device is device:
            self._views.move_to_end(key)
            return found
        found = self._views[key] = _Viewed(device, device_view(driver, device))
        if len(self._views) > MAX_VIEWS:
            self._views.popitem(last=False)
        return found


def cel_stats(selectors: CELSelectors, memo: SelectionMemo) -> CELStats:
    """The evaluator's totals, where an outcome the allocator's memo answered is a cache hit
    too: that memo serves most repeats before the evaluator's own result cache is asked."""
    stats = selectors.stats()
    return dataclasses.replace(stats, cache_hits=stats.cache_hits + memo.hits)
