"""1.30's named-resources CEL variables: `attributes.<type>` maps of one instance.

Upstream (k8s.io/dynamic-resource-allocation v0.30, structured/namedresources/cel) declares
`attributes.quantity`, `attributes.bool`, `attributes.int`, `attributes.intslice`,
`attributes.string`, `attributes.stringslice` and `attributes.version`, each a map from
attribute name to a value of that type, built per instance; a missing name is a runtime
"no such key" error. There is no `device` variable and no driver-domain qualification.
"""

from __future__ import annotations

from typing import Any

from dra_operator.cel._lib_k8s import parse_semver
from dra_operator.cel._values import CelQuantity
from dra_operator.errors import CELRuntimeError
from dra_operator.model import Quantity, v1alpha2

_KIND = v1alpha2.NamedAttributeKind


class NamedView:
    """One instance's attributes as the seven typed maps; `errors` as `DeviceView`'s."""

    __slots__ = (
        "__weakref__",
        "bool",
        "errors",
        "int",
        "intslice",
        "quantity",
        "string",
        "stringslice",
        "version",
    )

    def __init__(self, instance: v1alpha2.NamedResourcesInstance) -> None:
        maps: dict[str, dict[str, Any]] = {
            "quantity": {},
            "bool": {},
            "int": {},
            "intslice": {},
            "string": {},
            "stringslice": {},
            "version": {},
        }
        error: str | None = None
        for attr in instance.attributes:
            try:
                kind, value = _convert(attr)
            except CELRuntimeError as exc:
                error = error or f"attribute {attr.name}: {exc}"
                continue
            maps[kind][attr.name] = value
        self.quantity = maps["quantity"]
        self.bool = maps["bool"]
        self.int = maps["int"]
        self.intslice = maps["intslice"]
        self.string = maps["string"]
        self.stringslice = maps["stringslice"]
        self.version = maps["version"]
        self.errors: tuple[str | None, str | None] = (error, error)


def _convert(attr: v1alpha2.NamedResourcesAttribute) -> tuple[str, Any]:
    value = attr.value
    if attr.kind is _KIND.QUANTITY and isinstance(value, Quantity):
        return "quantity", CelQuantity.from_model(value)
    if attr.kind is _KIND.VERSION:
        try:
            return "version", parse_semver(str(value))
        except CELRuntimeError as exc:
            raise CELRuntimeError(f"parse semantic version: {exc}") from None
    if attr.kind is _KIND.INT_SLICE:
        return "intslice", tuple(value) if isinstance(value, tuple) else ()
    if attr.kind is _KIND.STRING_SLICE:
        return "stringslice", tuple(value) if isinstance(value, tuple) else ()
    if attr.kind in (_KIND.BOOL, _KIND.INT, _KIND.STRING):
        return attr.kind.value, value
    raise CELRuntimeError("unsupported attribute value")


def named_view(instance: v1alpha2.NamedResourcesInstance) -> NamedView:
    return NamedView(instance)
