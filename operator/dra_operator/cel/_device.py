"""The `device` variable: one device's attributes and capacity as CEL sees them.

Built once per device and shared by every selector evaluated on it. Attribute conversion
failures do not raise here: upstream fails every evaluation on such a device (it builds the maps
before evaluating), so the view records the error and `CompiledSelector.matches` raises it.
"""

from __future__ import annotations

from typing import Any

from dra_operator.cel._lib_k8s import parse_semver
from dra_operator.cel._runtime import DomainMap
from dra_operator.cel._values import CelQuantity
from dra_operator.errors import CELRuntimeError
from dra_operator.model import AttributeKind, Device

_SCALARS = {AttributeKind.INT, AttributeKind.BOOL, AttributeKind.STRING}
_LISTS = {AttributeKind.INTS, AttributeKind.BOOLS, AttributeKind.STRINGS}


class DeviceView:
    """A device prepared for CEL: `driver`, `attributes`, `capacity`, `allow_multiple_allocations`.

    `errors[0]` is the error every evaluation raises without DRAListTypeAttributes (list
    attributes are unsupported values then), `errors[1]` the one with it; None when fine.
    The attribute and capacity maps are built on first use: most class selectors read only
    `device.driver`, and the allocator asks a view of every device it reaches. Hashable by
    identity.
    """

    __slots__ = (
        "__weakref__",
        "_attributes",
        "_capacity",
        "_device",
        "allow_multiple_allocations",
        "driver",
        "errors",
    )

    def __init__(self, driver: str, device: Device) -> None:
        self.driver = driver
        self.allow_multiple_allocations = bool(device.allow_multiple_allocations)
        self._device = device
        self._capacity: DomainMap | None = None
        self._attributes: DomainMap | None = None
        self.errors: tuple[str | None, str | None] = (None, None)
        for attr in device.attributes.values():
            if attr.kind not in _SCALARS:
                # A version to parse, or a value some evaluations refuse: build now to know.
                self._attributes, self.errors = _attribute_map(driver, device)
                break

    @property
    def attributes(self) -> DomainMap:
        found = self._attributes
        if found is None:
            found = self._attributes = _attribute_map(self.driver, self._device)[0]
        return found

    @property
    def capacity(self) -> DomainMap:
        found = self._capacity
        if found is None:
            found = self._capacity = _capacity_map(self.driver, self._device)
        return found

    def cel_field(self, name: str) -> Any:
        """`dyn(device).<field>`: the same fields the declared type has."""
        if name == "driver":
            return self.driver
        if name == "attributes":
            return self.attributes
        if name == "capacity":
            return self.capacity
        if name == "allowMultipleAllocations":
            return self.allow_multiple_allocations
        raise CELRuntimeError(f"no such key: {name}")

    def cel_has(self, name: str) -> bool:
        return name in ("driver", "attributes", "capacity", "allowMultipleAllocations")


def split_name(name: str, driver: str) -> tuple[str, str]:
    """A qualified name `domain/id`; an unqualified one belongs to the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_view(driver: str, device: Device) -> DeviceView:
    return DeviceView(driver, device)


def _attribute_map(driver: str, device: Device) -> tuple[DomainMap, tuple[str | None, str | None]]:
    """The attributes by domain, and the `errors` pair they cause."""
    attributes: DomainMap = DomainMap()
    plain_error: str | None = None
    list_error: str | None = None
    for name in sorted(device.attributes):
        attr = device.attributes[name]
        domain, ident = split_name(name, driver)
        # Upstream names the attribute as the slice spells it; drivers publish their own
        # attributes unqualified, which the model has qualified with the driver's domain.
        shown = ident if domain == driver else name
        kind, raw = attr.kind, attr.value
        value: Any
        try:
            if kind in _SCALARS:
                value = raw
            elif kind is AttributeKind.VERSION:
                value = _version(raw)
            elif kind in _LISTS:
                value = tuple(raw) if isinstance(raw, tuple) else ()
                plain_error = plain_error or f"attribute {shown}: unsupported attribute value"
            elif kind is AttributeKind.VERSIONS:
                value = tuple(_version(v) for v in raw) if isinstance(raw, tuple) else ()
                plain_error = plain_error or f"attribute {shown}: unsupported attribute value"
            else:
                raise CELRuntimeError("unsupported attribute value")
        except CELRuntimeError as exc:
            message = f"attribute {shown}: {exc}"
            plain_error = plain_error or message
            list_error = list_error or message
            continue
        attributes.setdefault(domain, {})[ident] = value
    return attributes, (plain_error, list_error)


def _capacity_map(driver: str, device: Device) -> DomainMap:
    capacity: DomainMap = DomainMap()
    for name in sorted(device.capacity):
        domain, ident = split_name(name, driver)
        capacity.setdefault(domain, {})[ident] = CelQuantity.from_model(device.capacity[name].value)
    return capacity


def _version(raw: object) -> Any:
    try:
        return parse_semver(str(raw))
    except CELRuntimeError as exc:
        raise CELRuntimeError(f"parse semantic version: {exc}") from None
