"""The selector evaluator backed by our CEL engine (`dra_operator.cel`).

Compiled selectors come from a (shareable) `SelectorCache`; device views are built once per
device object and kept for the evaluator's lifetime, so reuse one evaluator for one snapshot
(one scheduling cycle) and drop it afterwards.
"""

from __future__ import annotations

from dra_operator.allocator._features import Features
from dra_operator.cel import CELFeatures, CompiledSelector, DeviceView, SelectorCache, device_view
from dra_operator.model import Device


class CELSelectors:
    """A `SelectorEvaluator`: raises CELCompileError / CELRuntimeError as the engine does."""

    __slots__ = ("_cache", "_compiled", "_features", "_views")

    def __init__(self, features: Features, cache: SelectorCache | None = None) -> None:
        # The allocator is given slices as stored; upstream's incubating allocator shows CEL
        # the device's allowMultipleAllocations whatever the gate (its stable tier hides it,
        # which the allocator does itself before evaluating).
        self._features = CELFeatures(
            list_type_attributes=features.list_type_attributes,
            consumable_capacity=True,
            expose_lists=features.since_137,
        )
        self._cache = cache if cache is not None else SelectorCache()
        self._views: dict[int, tuple[Device, str, DeviceView]] = {}
        self._compiled: dict[str, CompiledSelector] = {}  # skips the shared cache's lock

    def __call__(self, expression: str, driver: str, device: Device, /) -> bool:
        selector = self._compiled.get(expression)
        if selector is None:
            selector = self._compiled[expression] = self._cache.get(expression, self._features)
        found = self._views.get(id(device))
        if found is None or found[0] is not device or found[1] != driver:
            found = (device, driver, device_view(driver, device))
            self._views[id(device)] = found
        return selector.matches(found[2])
