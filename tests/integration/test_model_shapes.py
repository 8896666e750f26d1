"""The model's parsers and renderers agree with a real kube-apiserver, byte for byte.

Covers: every v1 fixture of tests/unit/model/data created on the server and read back through
each version that serves its kind renders exactly as the server wrote it, and parses to one
model value; quantity spellings come back from the server exactly as `Quantity` renders them
(kept text, lost suffixes, caps, nano rounding); `"default": null` in a request policy.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dra_operator.kube import RESOURCE_GROUP, Client, dra
from dra_operator.model import (
    Quantity,
    parse_object,
    render_device_class,
    render_device_taint_rule,
    render_resource_claim,
    render_resource_claim_template,
    render_resource_slice,
)

pytestmark = pytest.mark.controlplane

DATA = Path(__file__).resolve().parents[1] / "unit" / "model" / "data"
VERSIONS = ("v1", "v1beta2", "v1beta1", "v1alpha3")
KINDS: dict[str, tuple[str, Any]] = {
    "DeviceClass": ("deviceclasses", render_device_class),
    "ResourceSlice": ("resourceslices", render_resource_slice),
    "ResourceClaim": ("resourceclaims", render_resource_claim),
    "ResourceClaimTemplate": ("resourceclaimtemplates", render_resource_claim_template),
    "DeviceTaintRule": ("devicetaintrules", render_device_taint_rule),
}
_SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "generateName")


async def _versions_serving(api: Client, plural: str) -> list[str]:
    served = []
    for version in VERSIONS:
        if plural in {r["name"] for r in await api.api_resources(RESOURCE_GROUP, version)}:
            served.append(version)
    return served


def _as_read(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"].pop("managedFields", None)
    return obj


@pytest.mark.parametrize("fixture", sorted(p.name for p in DATA.glob("v1-*.json")))
async def test_server_json_is_what_we_render_in_every_version(
    admin_api: Client, namespace: str, cluster: Callable[..., Any], fixture: str
) -> None:
    """Cluster-scoped objects (classes, slices, taint rules) are deleted after the test, so
    no later test sees their devices or taints."""
    raw = json.loads((DATA / fixture).read_text())
    plural, render = KINDS[raw["kind"]]
    versions = await _versions_serving(admin_api, plural)
    status = raw.pop("status", None)
    meta = raw["metadata"]
    for name in _SERVER_SET:
        meta.pop(name, None)
    meta["name"] = f"{meta['name']}-{uuid.uuid4().hex[:6]}"
    resource = dra(plural, versions[0])
    if resource.namespaced:
        meta["namespace"] = namespace
    raw["apiVersion"] = f"resource.k8s.io/{versions[0]}"
    if resource.namespaced:
        created = await admin_api.create(resource, raw)
    else:
        created = await cluster(resource, raw)
    if status is not None and raw["kind"] == "ResourceClaim":
        created = await admin_api.update(
            resource, {**created, "status": status}, subresource="status"
        )
    model = parse_object(created)
    ns = namespace if resource.namespaced else None
    for version in versions:
        got = _as_read(await admin_api.get(dra(plural, version), meta["name"], namespace=ns))
        assert render(parse_object(got), version) == got, version
        assert parse_object(got) == model, version


SPELLINGS = [
    "1.500",
    "+1",
    "1000E",
    "0.5Gi",
    "01Ki",
    "1.5k",
    "1.",
    "005",
    "1E+3",
    "12E",
    "1e400",
    "0.000000000001Ki",
    "9Ei",
    "100.035Ki",
    "1.1E-9",
    "-0",
    "0.0Ki",
    "1024Mi",
    "307200Ki",
    "1.G",
    ".5",
    "1e3",
    "1000e0",
    "15000",
    "3.001n",
    "1234567m",
    "1025Ki",
    "99Ti",
    "1023Ki",
]


async def test_server_writes_quantities_as_quantity_renders_them(
    cluster: Callable[..., Any],
) -> None:
    """The slice is deleted after the test: its devices are on every node, and a later
    test's `explain` would count them."""
    capacity = {f"c{i}": {"value": text} for i, text in enumerate(SPELLINGS)}
    name = f"quantities-{uuid.uuid4().hex[:6]}"
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "q.example.com",
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "allNodes": True,
            "devices": [
                {"name": "d", "capacity": capacity},
                {
                    "name": "shared",
                    "allowMultipleAllocations": True,
                    "capacity": {"m": {"value": "10Gi", "requestPolicy": {}}},
                },
            ],
        },
    }
    created = await cluster(dra("resourceslices"), slice_)
    written = created["spec"]["devices"][0]["capacity"]
    assert {c: v["value"] for c, v in written.items()} == {
        f"c{i}": str(Quantity.parse(text)) for i, text in enumerate(SPELLINGS)
    }
    assert created["spec"]["devices"][1]["capacity"]["m"]["requestPolicy"] == {"default": None}
    assert render_resource_slice(parse_object(_as_read(created))) == _as_read(created)  # type: ignore[arg-type]
