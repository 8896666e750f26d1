"""Malformed objects raise InvalidObjectError naming the JSON path of the bad field.

Covers wrong types, missing required fields, bad quantities and timestamps, unsupported
apiVersions and kinds, and requests with neither or both of `exactly`/`firstAvailable`; never a
KeyError or TypeError.
"""

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.counts import property_examples

from dra_operator.errors import InvalidObjectError
from dra_operator.model import parse_object

DATA = Path(__file__).parent / "data"
Edit = Callable[[dict[str, Any]], None]


def load(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / name).read_text())
    return result


def _set(path: list[Any], value: Any) -> Edit:
    def edit(raw: dict[str, Any]) -> None:
        target = raw
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return edit


def _delete(path: list[Any]) -> Edit:
    def edit(raw: dict[str, Any]) -> None:
        target = raw
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]

    return edit


SLICE = "v1-resourceslice-gpu.json"
CLAIM = "v1-resourceclaim.json"
DEV = ["spec", "devices"]
REQ = ["spec", "devices", "requests"]
RESULTS = ["status", "allocation", "devices", "results"]

CASES = [
    pytest.param(
        SLICE,
        _set([*DEV, 1, "attributes", "model"], {"string": 7}),
        'spec.devices[1].attributes["model"].string',
        "must be a string, not number",
        id="attribute-wrong-type",
    ),
    pytest.param(
        SLICE,
        _set([*DEV, 1, "attributes", "model"], {"string": "a", "int": 1}),
        'spec.devices[1].attributes["model"]',
        "must have exactly one value",
        id="attribute-two-values",
    ),
    pytest.param(
        SLICE,
        _set([*DEV, 1, "attributes", "index"], {"int": True}),
        'spec.devices[1].attributes["index"].int',
        "must be an integer, not boolean",
        id="attribute-bool-as-int",
    ),
    pytest.param(
        SLICE,
        _set([*DEV, 0, "capacity", "memory", "value"], "40 Gi"),
        'spec.devices[0].capacity["memory"].value',
        "quantities must match",
        id="capacity-bad-quantity",
    ),
    pytest.param(
        SLICE,
        _delete([*DEV, 0, "capacity", "memory", "value"]),
        'spec.devices[0].capacity["memory"].value',
        "required value",
        id="capacity-missing-value",
    ),
    pytest.param(
        SLICE,
        _set([*DEV, 1, "capacity", "slots", "requestPolicy", "validValues", 2], "x"),
        'spec.devices[1].capacity["slots"].requestPolicy.validValues[2]',
        "quantities must",
        id="request-policy-valid-value",
    ),
    pytest.param(
        SLICE,
        _set([*DEV, 0, "taints", 0, "timeAdded"], "yesterday"),
        "spec.devices[0].taints[0].timeAdded",
        "must be an RFC 3339 time",
        id="taint-bad-time",
    ),
    pytest.param(
        SLICE,
        _delete(["spec", "pool", "resourceSliceCount"]),
        "spec.pool.resourceSliceCount",
        "required value",
        id="pool-count-missing",
    ),
    pytest.param(
        SLICE,
        _set(["spec", "devices"], {"gpu-0": {}}),
        "spec.devices",
        "must be an array, not object",
        id="devices-not-a-list",
    ),
    pytest.param(
        SLICE,
        _set([*DEV, 1], "gpu-1"),
        "spec.devices[1]",
        "must be an object, not string",
        id="device-not-an-object",
    ),
    pytest.param(
        SLICE,
        _set(["metadata", "labels"], {"a": 1}),
        'metadata.labels["a"]',
        "must be a string, not number",
        id="label-not-a-string",
    ),
    pytest.param(
        SLICE,
        _delete(["spec"]),
        "spec",
        "required value",
        id="no-spec",
    ),
    pytest.param(
        CLAIM,
        _set([*REQ, 0, "exactly", "count"], "2"),
        "spec.devices.requests[0].exactly.count",
        "must be an integer, not string",
        id="count-as-string",
    ),
    pytest.param(
        CLAIM,
        _delete([*REQ, 1, "firstAvailable", 0, "deviceClassName"]),
        "spec.devices.requests[1].firstAvailable[0].deviceClassName",
        "required value",
        id="subrequest-without-class",
    ),
    pytest.param(
        CLAIM,
        _set([*REQ, 0, "firstAvailable"], [{"name": "x", "deviceClassName": "c"}]),
        "spec.devices.requests[0]",
        "exactly one of `exactly` or `firstAvailable` is required",
        id="both-exactly-and-first-available",
    ),
    pytest.param(
        CLAIM,
        _delete([*REQ, 0, "exactly"]),
        "spec.devices.requests[0]",
        "exactly one of",
        id="neither-exactly-nor-first-available",
    ),
    pytest.param(
        CLAIM,
        _set([*REQ, 2, "exactly", "capacity", "requests", "memory"], "lots"),
        'spec.devices.requests[2].exactly.capacity.requests["memory"]',
        "quantities must",
        id="capacity-request",
    ),
    pytest.param(
        CLAIM,
        _set([*REQ, 0, "exactly", "tolerations", 1, "tolerationSeconds"], 1.5),
        "spec.devices.requests[0].exactly.tolerations[1].tolerationSeconds",
        "must be an integer, not 1.5",
        id="toleration-seconds-fraction",
    ),
    pytest.param(
        CLAIM,
        _set([*RESULTS, 3, "consumedCapacity", "memory"], True),
        'status.allocation.devices.results[3].consumedCapacity["memory"]',
        "must be a quantity string, not boolean",
        id="consumed-capacity",
    ),
    pytest.param(
        CLAIM,
        _set(["status", "allocation", "devices", "config", 0, "source"], "FromPod"),
        "status.allocation.devices.config[0].source",
        "unsupported value 'FromPod'",
        id="config-source",
    ),
    pytest.param(
        CLAIM,
        _delete(["status", "reservedFor", 0, "uid"]),
        "status.reservedFor[0].uid",
        "required value",
        id="reservation-without-uid",
    ),
    pytest.param(
        CLAIM,
        _set(
            [
                "status",
                "allocation",
                "nodeSelector",
                "nodeSelectorTerms",
                0,
                "matchFields",
                0,
                "values",
            ],
            "worker-1",
        ),
        "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values",
        "must be an array, not string",
        id="node-selector-values",
    ),
    pytest.param(
        CLAIM,
        _set(["metadata", "ownerReferences", 0, "controller"], "yes"),
        "metadata.ownerReferences[0].controller",
        "must be a boolean, not string",
        id="owner-controller",
    ),
    pytest.param(
        "v1-deviceclass.json",
        _delete(["spec", "config", 0, "opaque", "parameters"]),
        "spec.config[0].opaque.parameters",
        "required value",
        id="opaque-without-parameters",
    ),
    pytest.param(
        "v1-deviceclass.json",
        _set(["spec", "selectors", 1, "cel"], {"expr": "true"}),
        "spec.selectors[1].cel.expression",
        "required value",
        id="cel-without-expression",
    ),
    pytest.param(
        "v1-devicetaintrule.json",
        _delete(["spec", "taint", "effect"]),
        "spec.taint.effect",
        "required value",
        id="taint-rule-without-effect",
    ),
    pytest.param(
        "v1beta1-resourceslice-gpu.json",
        _set([*DEV, 0, "basic", "attributes", "index"], {"int": "0"}),
        'spec.devices[0].basic.attributes["index"].int',
        "must be an integer, not string",
        id="v1beta1-basic-path",
    ),
    pytest.param(
        "v1beta1-resourceclaim.json",
        _set([*REQ, 0, "allocationMode"], 3),
        "spec.devices.requests[0].allocationMode",
        "must be a string, not number",
        id="v1beta1-flat-request-path",
    ),
    pytest.param(
        "v1alpha3-resourceslice-gpu.json",
        _set([*DEV, 0, "basic", "capacity", "memory"], {"value": "1"}),
        'spec.devices[0].basic.capacity["memory"]',
        "must be a quantity string, not object",
        id="v1alpha3-bare-capacity",
    ),
    pytest.param(
        SLICE,
        _set(["apiVersion"], "resource.k8s.io/v2"),
        "apiVersion",
        "unsupported apiVersion 'resource.k8s.io/v2'",
        id="unknown-version",
    ),
    pytest.param(
        SLICE,
        _set(["kind"], "ResourcePoolStatusRequest"),
        "kind",
        "unsupported kind 'ResourcePoolStatusRequest' in resource.k8s.io/v1",
        id="unknown-kind",
    ),
    pytest.param(
        SLICE,
        _delete(["apiVersion"]),
        "apiVersion",
        "required value",
        id="no-api-version",
    ),
]


@pytest.mark.parametrize(("fixture", "edit", "path", "message"), CASES)
def test_malformed_field_is_reported_with_its_path(
    fixture: str, edit: Edit, path: str, message: str
) -> None:
    raw = load(fixture)
    edit(raw)
    with pytest.raises(InvalidObjectError) as info:
        parse_object(raw)
    assert (info.value.path, info.value.message[: len(message)]) == (path, message)


def test_error_names_path_and_source() -> None:
    err = InvalidObjectError("spec.driver", "required value").at("slice.yaml")
    assert str(err) == "slice.yaml: spec.driver: required value"


def test_top_level_must_be_an_object() -> None:
    with pytest.raises(InvalidObjectError, match="must be an object, not array"):
        parse_object([])


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(raw: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(raw, dict):
        for k, v in raw.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(raw, list):
        for i, v in enumerate(raw):
            out += _paths(v, (*prefix, i))
    return out


@pytest.mark.parametrize("fixture", sorted(p.name for p in DATA.glob("*.json")))
@settings(max_examples=property_examples(40))
@given(data=st.data())
def test_any_field_replaced_by_junk_parses_or_raises_invalid_object(
    fixture: str, data: st.DataObject
) -> None:
    raw = load(fixture)
    path = data.draw(st.sampled_from(_paths(raw)))
    broken = copy.deepcopy(raw)
    _set(list(path), data.draw(_json))(broken)
    try:
        result = parse_object(broken)
    except InvalidObjectError as err:
        assert err.message
    else:
        assert type(result).__module__.startswith("dra_operator.model.")
