"""Older resource.k8s.io shapes, derived from the v1 JSON the renderers build.

v1beta2 is v1 under another name. v1beta1 and v1alpha3 wrap device fields in `basic`, inline
`exactly` into the request (whose `deviceClassName` has no omitempty there, so a
`firstAvailable` request carries ``"deviceClassName": ""``), and write the slice's `nodeName` and
`allNodes` as omitempty string/bool. v1alpha3 capacities are bare quantities.
"""

from __future__ import annotations

from typing import Any

from dra_operator.model._parse_common import BASIC_VERSIONS
from dra_operator.model._render_common import Json


def slice_spec(spec: Json, version: str) -> Json:
    if version not in BASIC_VERSIONS:
        return spec
    out = dict(spec)
    if out.get("allNodes") is False:
        del out["allNodes"]
    if "devices" in out:
        out["devices"] = [_basic_device(d, version) for d in out["devices"]]
    return out


def _basic_device(device: Json, version: str) -> Json:
    basic = {k: v for k, v in device.items() if k != "name"}
    if version == "v1alpha3" and "capacity" in basic:
        basic["capacity"] = {name: c["value"] for name, c in basic["capacity"].items()}
    return {"name": device["name"], "basic": basic}


def claim_spec(spec: Json, version: str) -> Json:
    if version not in BASIC_VERSIONS:
        return spec
    devices = dict(spec["devices"])
    requests: list[Any] | None = devices["requests"]
    if requests is not None:
        devices["requests"] = [_flat_request(r) for r in requests]
    return {**spec, "devices": devices}


def _flat_request(request: Json) -> Json:
    out: Json = {"name": request["name"], "deviceClassName": ""}
    out.update(request.get("exactly", {}))
    if "firstAvailable" in request:
        out["firstAvailable"] = request["firstAvailable"]
    return out
