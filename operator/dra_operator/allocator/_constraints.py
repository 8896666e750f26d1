"""Claim constraints: matchAttribute and distinctAttribute, added and removed as devices are.

Upstream semantics (v1.36 incubating, experimental for list-typed attributes): the attribute is
looked up by its fully qualified name, falling back to the bare identifier when the domain is
the device's driver; a missing attribute fails the constraint. `matchAttribute` lets the first
device fix the value (list-typed: the intersection narrows, and from 1.37 `remove` restores
the one before the device, #140325); `distinctAttribute` stores one value per *request name*
in 1.36 (two devices of one request overwrite each other, an upstream quirk kept on purpose)
and one per device in 1.37 (`per_device`, #140600: a request's devices are compared too).
Constraints are monotonic: once refused, adding more devices never helps, which the search
relies on. A request with derived attributes (1.37, DRADerivedAttributes) passes its own
`lookup`, which evaluates the request's expression for that name instead (and shadows a
device attribute of the same name for that request only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dra_operator.model import AttributeKind, Device, DeviceAttribute

_SCALAR = frozenset(
    {AttributeKind.INT, AttributeKind.BOOL, AttributeKind.STRING, AttributeKind.VERSION}
)
_ELEMENT = {
    AttributeKind.INTS: AttributeKind.INT,
    AttributeKind.BOOLS: AttributeKind.BOOL,
    AttributeKind.STRINGS: AttributeKind.STRING,
    AttributeKind.VERSIONS: AttributeKind.VERSION,
}


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """The device's attribute `name` (fully qualified, or bare within the driver's domain)."""
    found = device.attributes.get(name)
    if found is None and "/" not in name:
        found = device.attributes.get(f"{driver}/{name}")
    return found


Lookup = Callable[[Device, str, str], DeviceAttribute | None]  # device, driver, name


def _as_set(attribute: DeviceAttribute) -> tuple[AttributeKind, frozenset[object]] | None:
    """List-typed view: scalar kinds become one-element sets of their element kind."""
    if attribute.kind in _SCALAR:
        return attribute.kind, frozenset({(attribute.kind, attribute.value)})
    if attribute.kind in _ELEMENT and isinstance(attribute.value, tuple) and attribute.value:
        kind = _ELEMENT[attribute.kind]
        return kind, frozenset((kind, v) for v in attribute.value)
    return None  # no value, or an empty list: upstream's attributeAsSet gives nil


@dataclass(slots=True, kw_only=True)
class Constraint:
    """Common request filtering: an empty `requests` set means every request of the claim."""

    requests: frozenset[str]
    attribute: str
    list_types: bool = False

    def applies_to(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(
        self, request: str, sub: str, device: Device, driver: str, lookup: Lookup = lookup_attribute
    ) -> bool:
        raise NotImplementedError

    def remove(self, request: str, sub: str) -> None:
        raise NotImplementedError


@dataclass(slots=True, kw_only=True)
class MatchAttribute(Constraint):
    reference: DeviceAttribute | None = None
    common: frozenset[object] | None = None
    count: int = 0
    # 1.37 (#140325): the intersection before each list-typed add, restored by `remove`
    restore: bool = False
    earlier: list[frozenset[object] | None] = field(default_factory=list)

    def add(
        self, request: str, sub: str, device: Device, driver: str, lookup: Lookup = lookup_attribute
    ) -> bool:
        if not self.applies_to(request, sub):
            return True
        attribute = lookup(device, driver, self.attribute)
        if attribute is None:
            return False
        if self.list_types:
            return self._add_set(attribute)
        if self.count == 0:
            self.reference, self.count = attribute, 1
            return True
        ref = self.reference
        if attribute.kind not in _SCALAR or ref is None or ref.kind != attribute.kind:
            return False
        if ref.value != attribute.value:
            return False
        self.count += 1
        return True

    def _add_set(self, attribute: DeviceAttribute) -> bool:
        view = _as_set(attribute)
        if view is None:
            return False
        kind, values = view
        if self.count == 0:
            self.reference = DeviceAttribute(kind=kind)
            self.common, self.count = values, 1
            return bool(values)
        if self.reference is None or self.reference.kind != kind or self.common is None:
            return False
        common = self.common & values
        if not common:
            return False
        if self.restore:
            self.earlier.append(self.common)
        self.common = common
        self.count += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if self.applies_to(request, sub):
            self.count -= 1
            if self.restore and self.list_types and self.earlier and self.count > 0:
                self.common = self.earlier.pop()

    def fixed_value(self) -> DeviceAttribute | None:
        """The value every further device must have (scalar mode), once one device is in."""
        return self.reference if self.count > 0 and not self.list_types else None

    def is_compatible(self, device: Device, driver: str) -> bool:
        """Whether adding `device` now could succeed (used to count candidates, not to add)."""
        attribute = lookup_attribute(device, driver, self.attribute)
        if attribute is None:
            return False
        if self.count == 0:
            return True
        if not self.list_types:
            ref = self.reference
            return ref is not None and ref.kind == attribute.kind and ref.value == attribute.value
        view = _as_set(attribute)
        return (
            view is not None
            and self.reference is not None
            and self.reference.kind == view[0]
            and self.common is not None
            and bool(self.common & view[1])
        )


@dataclass(slots=True, kw_only=True)
class DistinctAttribute(Constraint):
    per_device: bool = False
    values: dict[str, DeviceAttribute] = field(default_factory=dict)  # 1.36: per request
    stack: list[DeviceAttribute] = field(default_factory=list)  # 1.37: per device added
    count: int = 0

    def add(
        self, request: str, sub: str, device: Device, driver: str, lookup: Lookup = lookup_attribute
    ) -> bool:
        if not self.applies_to(request, sub):
            return True
        attribute = lookup(device, driver, self.attribute)
        if attribute is None:
            return False
        if self.count > 0 and not self._is_distinct(attribute):
            return False
        if self.per_device:
            self.stack.append(attribute)
        else:
            self.values[request] = attribute
        self.count += 1
        return True

    def _others(self) -> list[DeviceAttribute]:
        return self.stack if self.per_device else list(self.values.values())

    def _is_distinct(self, attribute: DeviceAttribute) -> bool:
        if self.list_types:
            view = _as_set(attribute)
            if view is None:
                return False
            for other in self._others():
                other_view = _as_set(other)
                # sets of another type never intersect (upstream's hasIntersection)
                if other_view is not None and other_view[0] == view[0] and other_view[1] & view[1]:
                    return False
            return True
        for other in self._others():
            if attribute.kind not in _SCALAR:
                return False
            if other.kind == attribute.kind and other.value == attribute.value:
                return False
        return True

    def remove(self, request: str, sub: str) -> None:
        if self.applies_to(request, sub):
            if self.per_device:
                self.stack.pop()
            else:
                self.values.pop(request, None)
            self.count -= 1
