"""The selector evaluator backed by our CEL engine (`dra_operator.cel`), and derived attributes.

Compiled selectors come from a (shareable) `SelectorCache`; device views are built once per
device object and kept for the evaluator's lifetime, so reuse one evaluator for one snapshot
(one scheduling cycle) and drop it afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping

from dra_operator.allocator._constraints import Lookup, lookup_attribute
from dra_operator.allocator._features import Features
from dra_operator.allocator._requests import Candidate
from dra_operator.cel import (
    CELFeatures,
    CompiledSelector,
    DeviceView,
    SelectorCache,
    compile_derived,
    device_view,
)
from dra_operator.errors import AllocationInputError, CELCompileError, CELRuntimeError
from dra_operator.model import Device, DeviceAttribute


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


class DerivedValues:
    """Derived attributes (1.37) of one call: each (device, expression) evaluated once.

    Compile and evaluation errors abort the allocation with upstream's texts; a derived
    attribute is looked up before the device's own attributes (upstream's lookupAttribute).
    """

    __slots__ = ("_features", "_values", "_views")

    def __init__(self, features: Features) -> None:
        self._features = CELFeatures(
            list_type_attributes=features.list_type_attributes,
            consumable_capacity=True,
            expose_lists=features.since_137,
        )
        self._values: dict[tuple[int, str], DeviceAttribute] = {}
        self._views: dict[int, DeviceView] = {}

    def lookup(self, derived: Mapping[str, str], candidate: Candidate) -> Lookup:
        """The attribute lookup of a request with `derived` attributes, for one device."""

        def find(device: Device, driver: str, name: str) -> DeviceAttribute | None:
            expression = derived.get(name)
            if expression is None:
                return lookup_attribute(device, driver, name)
            return self._value(name, expression, candidate)

        return find

    def _value(self, name: str, expression: str, candidate: Candidate) -> DeviceAttribute:
        key = (candidate.index, expression)
        found = self._values.get(key)
        if found is not None:
            return found
        try:
            compiled = compile_derived(expression, self._features)
        except CELCompileError as err:
            raise AllocationInputError(f"compile derived attribute {name} failed: {err}") from err
        view = self._views.get(candidate.index)
        if view is None:
            view = self._views[candidate.index] = device_view(candidate.driver, candidate.device)
        try:
            found = compiled.evaluate(view)
        except CELRuntimeError as err:
            raise AllocationInputError(
                f"evaluate derived attribute {name} on device {candidate.id} failed: {err}"
            ) from err
        self._values[key] = found
        return found
