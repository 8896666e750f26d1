"""Typed readers over raw JSON that report the JSON path of whatever is malformed.

Every parser reads raw dicts only through these functions, so a wrong shape anywhere becomes
`InvalidObjectError` with a path such as ``spec.devices[3].attributes["model"]`` and never a
KeyError or TypeError. JSON ``null`` counts as absent, as it does for Go's optional fields.
Unknown fields are ignored: a newer server may send fields this release does not know.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from dra_operator.errors import InvalidObjectError
from dra_operator.model._frozen import FrozenMap
from dra_operator.model._quantity import Quantity
from dra_operator.model._types import (
    Condition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
)

Raw = Mapping[str, Any]
T = TypeVar("T")

_MISSING = object()

FLAT_VERSIONS = frozenset({"v1", "v1beta2"})
"""Versions with flattened devices, `exactly` requests and pointer node fields."""
BASIC_VERSIONS = frozenset({"v1beta1", "v1alpha3"})
"""Versions with `basic` devices, flat requests and plain string/bool node fields."""


def check_version(version: str) -> None:
    if version not in FLAT_VERSIONS | BASIC_VERSIONS:
        raise InvalidObjectError("apiVersion", f"unsupported version {version!r}")


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    if '"' in k or "\\" in k or not (k.isascii() and k.isprintable()):
        return f"{path}[{json.dumps(k)}]"
    return f'{path}["{k}"]'


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def wrong_type(path: str, expected: str, value: object) -> InvalidObjectError:
    return InvalidObjectError(path, f"must be {expected}, not {_type_name(value)}")


def as_object(value: object, path: str) -> Raw:
    if type(value) is dict:  # the common case, without the slower ABC check
        return value
    if not isinstance(value, Mapping):
        raise wrong_type(path, "an object", value)
    return value


def _get(raw: Raw, name: str) -> object:
    value = raw.get(name, _MISSING)
    return _MISSING if value is None else value


def required(raw: Raw, name: str, path: str) -> object:
    value = _get(raw, name)
    if value is _MISSING:
        raise InvalidObjectError(child(path, name), "required value")
    return value


def opt_object(raw: Raw, name: str, path: str) -> Raw | None:
    value = _get(raw, name)
    return None if value is _MISSING else as_object(value, child(path, name))


def req_object(raw: Raw, name: str, path: str) -> Raw:
    return as_object(required(raw, name, path), child(path, name))


def as_str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise wrong_type(path, "a string", value)
    return value


def opt_str(raw: Raw, name: str, path: str) -> str | None:
    value = _get(raw, name)
    return None if value is _MISSING else as_str(value, child(path, name))


def req_str(raw: Raw, name: str, path: str) -> str:
    return as_str(required(raw, name, path), child(path, name))


def str_or_empty(raw: Raw, name: str, path: str) -> str:
    return opt_str(raw, name, path) or ""


def as_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise wrong_type(path, "a boolean", value)
    return value


def opt_bool(raw: Raw, name: str, path: str) -> bool | None:
    value = _get(raw, name)
    return None if value is _MISSING else as_bool(value, child(path, name))


def as_int(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise wrong_type(path, "an integer", value)
    if isinstance(value, float):
        if not value.is_integer():
            raise InvalidObjectError(path, f"must be an integer, not {value!r}")
        value = int(value)
    if not -(2**63) <= value < 2**63:
        raise InvalidObjectError(path, "must fit in 64 bits")
    return value


def opt_int(raw: Raw, name: str, path: str) -> int | None:
    value = _get(raw, name)
    return None if value is _MISSING else as_int(value, child(path, name))


def list_of(raw: Raw, name: str, path: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
    """The list field `name` parsed item by item; absent or null gives ()."""
    value = _get(raw, name)
    if value is _MISSING:
        return ()
    p = child(path, name)
    if not isinstance(value, list | tuple):
        raise wrong_type(p, "an array", value)
    return tuple(item(v, index(p, i)) for i, v in enumerate(value))


def str_list(raw: Raw, name: str, path: str) -> tuple[str, ...]:
    return list_of(raw, name, path, as_str)


def map_of(
    raw: Raw,
    name: str,
    path: str,
    item: Callable[[object, str], T],
    rename: Callable[[str], str] = str,
) -> FrozenMap[str, T]:
    """The map field `name`, values parsed by `item`; keys may be renamed (qualified)."""
    value = _get(raw, name)
    if value is _MISSING:
        return FrozenMap()
    p = child(path, name)
    obj = as_object(value, p)
    return FrozenMap({rename(k): item(v, key(p, k)) for k, v in obj.items()})


def str_map(raw: Raw, name: str, path: str) -> FrozenMap[str, str]:
    return map_of(raw, name, path, as_str)


def quantity(value: object, path: str) -> Quantity:
    """A Quantity from JSON, which may also be a bare number (upstream's UnmarshalJSON)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise wrong_type(path, "a quantity string", value)
    text = value.strip() if isinstance(value, str) else repr(value)
    try:
        return Quantity.parse(text)
    except InvalidObjectError as err:
        raise InvalidObjectError(path, err.message) from None


def opt_quantity(raw: Raw, name: str, path: str) -> Quantity | None:
    value = _get(raw, name)
    return None if value is _MISSING else quantity(value, child(path, name))


def quantity_map(raw: Raw, name: str, path: str) -> FrozenMap[str, Quantity]:
    return map_of(raw, name, path, quantity)


def timestamp(value: object, path: str) -> datetime.datetime:
    text = as_str(value, path)
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise InvalidObjectError(path, f"must be an RFC 3339 time, not {text!r}") from None
    if parsed.tzinfo is None:
        raise InvalidObjectError(path, f"must be an RFC 3339 time with a zone, not {text!r}")
    return parsed.astimezone(datetime.UTC)


def opt_timestamp(raw: Raw, name: str, path: str) -> datetime.datetime | None:
    value = _get(raw, name)
    return None if value is _MISSING else timestamp(value, child(path, name))


def raw_json(value: object, path: str) -> str:
    """A RawExtension as compact JSON text, key order kept."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise InvalidObjectError(path, f"must be JSON: {err}") from None


def qualify(driver: str) -> Callable[[str], str]:
    """Attribute/capacity names: an unqualified name belongs to the driver's domain."""
    return lambda name: name if "/" in name else f"{driver}/{name}"


# -- shared metadata and core/v1 pieces ------------------------------------------------------


def owner_reference(value: object, path: str) -> OwnerReference:
    raw = as_object(value, path)
    return OwnerReference(
        api_version=req_str(raw, "apiVersion", path),
        kind=req_str(raw, "kind", path),
        name=req_str(raw, "name", path),
        uid=req_str(raw, "uid", path),
        controller=bool(opt_bool(raw, "controller", path)),
        block_owner_deletion=bool(opt_bool(raw, "blockOwnerDeletion", path)),
    )


def object_meta(value: object, path: str) -> ObjectMeta:
    raw = as_object(value, path)
    return ObjectMeta(
        name=str_or_empty(raw, "name", path),
        generate_name=str_or_empty(raw, "generateName", path),
        namespace=str_or_empty(raw, "namespace", path),
        uid=str_or_empty(raw, "uid", path),
        resource_version=str_or_empty(raw, "resourceVersion", path),
        generation=opt_int(raw, "generation", path) or 0,
        labels=str_map(raw, "labels", path),
        annotations=str_map(raw, "annotations", path),
        finalizers=str_list(raw, "finalizers", path),
        owner_references=list_of(raw, "ownerReferences", path, owner_reference),
        deletion_timestamp=opt_timestamp(raw, "deletionTimestamp", path),
        creation_timestamp=opt_timestamp(raw, "creationTimestamp", path),
    )


def metadata(raw: Raw) -> ObjectMeta:
    value = _get(raw, "metadata")
    return object_meta({} if value is _MISSING else value, "metadata")


def node_selector_requirement(value: object, path: str) -> NodeSelectorRequirement:
    raw = as_object(value, path)
    return NodeSelectorRequirement(
        key=req_str(raw, "key", path),
        operator=req_str(raw, "operator", path),
        values=str_list(raw, "values", path),
    )


def node_selector_term(value: object, path: str) -> NodeSelectorTerm:
    raw = as_object(value, path)
    return NodeSelectorTerm(
        match_expressions=list_of(raw, "matchExpressions", path, node_selector_requirement),
        match_fields=list_of(raw, "matchFields", path, node_selector_requirement),
    )


def node_selector(value: object, path: str) -> NodeSelector:
    raw = as_object(value, path)
    terms = list_of(raw, "nodeSelectorTerms", path, node_selector_term)
    return NodeSelector(node_selector_terms=terms)


def opt_node_selector(raw: Raw, name: str, path: str) -> NodeSelector | None:
    value = _get(raw, name)
    return None if value is _MISSING else node_selector(value, child(path, name))


def condition(value: object, path: str) -> Condition:
    """A metav1.Condition."""
    raw = as_object(value, path)
    return Condition(
        type=req_str(raw, "type", path),
        status=req_str(raw, "status", path),
        observed_generation=opt_int(raw, "observedGeneration", path) or 0,
        last_transition_time=opt_timestamp(raw, "lastTransitionTime", path),
        reason=str_or_empty(raw, "reason", path),
        message=str_or_empty(raw, "message", path),
    )
