"""One entry point from a raw API object to its model type, by apiVersion and kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dra_operator.errors import InvalidObjectError
from dra_operator.model._parse_claim import (
    parse_device_class,
    parse_resource_claim,
    parse_resource_claim_template,
)
from dra_operator.model._parse_common import BASIC_VERSIONS, FLAT_VERSIONS, Raw, as_object, req_str
from dra_operator.model._parse_core import parse_node, parse_pod
from dra_operator.model._parse_slice import parse_device_taint_rule, parse_resource_slice
from dra_operator.model._pod import Node, Pod
from dra_operator.model._types import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

RESOURCE_GROUP = "resource.k8s.io"

ModelObject = (
    DeviceClass
    | ResourceSlice
    | ResourceClaim
    | ResourceClaimTemplate
    | DeviceTaintRule
    | Pod
    | Node
)

_RESOURCE_KINDS: dict[str, Callable[[Raw, str], Any]] = {
    "DeviceClass": parse_device_class,
    "ResourceSlice": parse_resource_slice,
    "ResourceClaim": parse_resource_claim,
    "ResourceClaimTemplate": parse_resource_claim_template,
    "DeviceTaintRule": parse_device_taint_rule,
}
_CORE_KINDS: dict[str, Callable[[Raw], Any]] = {"Pod": parse_pod, "Node": parse_node}


def parse_object(raw: object) -> ModelObject:
    """The model object for a raw resource.k8s.io (any served version) or core/v1 object.

    Raises InvalidObjectError, with the JSON path of the first bad field, for anything that is
    not such an object.
    """
    obj = as_object(raw, "")
    api_version = req_str(obj, "apiVersion", "")
    kind = req_str(obj, "kind", "")
    group, _, version = api_version.rpartition("/")
    if group == "" and version == "v1" and kind in _CORE_KINDS:
        result: ModelObject = _CORE_KINDS[kind](obj)
        return result
    if group != RESOURCE_GROUP or version not in FLAT_VERSIONS | BASIC_VERSIONS:
        raise InvalidObjectError("apiVersion", f"unsupported apiVersion {api_version!r}")
    if kind not in _RESOURCE_KINDS:
        raise InvalidObjectError("kind", f"unsupported kind {kind!r} in {api_version}")
    result = _RESOURCE_KINDS[kind](obj, version)
    return result
