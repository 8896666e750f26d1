"""The allocator's CEL seam (`allocator.SelectorEvaluator`) over the `cel` package.

Compiled selectors are cached by `cel.SelectorCache`; device views (what `device` is in CEL)
are built once per device object and kept while that object lives in the slice cache, so a
decision that tries many nodes does not rebuild them. A slice update parses new device objects,
whose views are built afresh; old views age out of the bounded cache.
"""

from __future__ import annotations

from collections import OrderedDict

from dra_operator.allocator import Features
from dra_operator.cel import CELFeatures, DeviceView, SelectorCache, device_view
from dra_operator.model import Device

MAX_VIEWS = 65_536


class CELSelectors:
    """`allocator.SelectorEvaluator` backed by compiled CEL; errors raise `errors.CELError`."""

    def __init__(self, features: Features, cache: SelectorCache | None = None) -> None:
        self._features = CELFeatures(
            list_type_attributes=features.list_type_attributes,
            consumable_capacity=features.consumable_capacity,
        )
        self._cache = cache if cache is not None else SelectorCache()
        # Keyed by identity; the device is kept in the entry so its id cannot be reused.
        self._views: OrderedDict[tuple[str, int], tuple[Device, DeviceView]] = OrderedDict()

    def __call__(self, expression: str, driver: str, device: Device, /) -> bool:
        compiled = self._cache.get(expression, self._features)
        return compiled.matches(self._view(driver, device))

    def _view(self, driver: str, device: Device) -> DeviceView:
        key = (driver, id(device))
        found = self._views.get(key)
        if found is not None and found[0] is device:
            self._views.move_to_end(key)
            return found[1]
        view = device_view(driver, device)
        self._views[key] = (device, view)
        if len(self._views) > MAX_VIEWS:
            self._views.popitem(last=False)
        return view
