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
    Hashable by identity.
    """

    __slots__ = (
        "__weakref__",
        "allow_multiple_allocations",
        "attributes",
        "capacity",
        "driver",
        "errors",
    )

    def __init__(
        self,
        driver: str,
        attributes: DomainMap,
        capacity: DomainMap,
        allow_multiple_allocations: bool,
        errors: tuple[str | None, str | None] = (None, None),
    ) -> None:
        self.driver = driver
        self.attributes = attributes
        self.capacity = capacity
        self.allow_multiple_allocations = allow_multiple_allocations
        self.errors = errors

    def cel_field(self, name: str) -> Any:
        """`dyn(device).<field>`: the same fields the declared type has."""
        fields = {
            "driver": self.driver,
            "attributes": self.attributes,
            "capacity": self.capacity,
            "allowMultipleAllocations": self.allow_multiple_allocations,
        }
        if name not in fields:
            raise CELRuntimeError(f"no such key: {name}")
        return fields[name]

    def cel_has(self, name: str) -> bool:
        return name in ("driver", "attributes", "capacity", "allowMultipleAllocations")


def split_name(name: str, driver: str) -> tuple[str, str]:
    """A qualified name `domain/id`; an unqualified one belongs to the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_view(driver: str, device: Device) -> DeviceView:
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
    capacity: DomainMap = DomainMap()
    for name in sorted(device.capacity):
        domain, ident = split_name(name, driver)
        capacity.setdefault(domain, {})[ident] = CelQuantity.from_model(device.capacity[name].value)
    return DeviceView(
        driver,
        attributes,
        capacity,
        bool(device.allow_multiple_allocations),
        (plain_error, list_error),
    )


def _version(raw: object) -> Any:
    try:
        return parse_semver(str(raw))
    except CELRuntimeError as exc:
        raise CELRuntimeError(f"parse semantic version: {exc}") from None
