"""Every DRA kind written once and read back through the other served versions.

Covers: the local control plane serves v1, v1beta2, v1beta1 and v1alpha3 of resource.k8s.io
(every version its release has), and the server converts between them: v1beta1 puts device
attributes under `basic` and flattens requests, v1beta2 is shaped like v1. DeviceTaintRule goes
through the newest version that serves it (v1beta2 in 1.36, v1 from 1.37).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.dra_objects import claim_spec, claim_template, resource_claim

from dra_operator.kube import RESOURCE_GROUP, Client, dra

pytestmark = pytest.mark.controlplane

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_VERSION_ORDER = ("v1", "v1beta2", "v1beta1", "v1alpha3")


def _unique(doc: dict[str, Any]) -> dict[str, Any]:
    """The example object under a name no other test uses."""
    meta = {**doc["metadata"], "name": f"{doc['metadata']['name']}-{uuid.uuid4().hex[:6]}"}
    return {**doc, "metadata": meta}


def _example(name: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all((EXAMPLES / name).read_text()))


async def test_server_serves_every_resource_version(admin_api: Client) -> None:
    served = await admin_api.served_versions(RESOURCE_GROUP)
    assert set(served) == set(_VERSION_ORDER)
    assert served[0] == "v1"


async def test_device_class_reads_back_through_betas(admin_api: Client) -> None:
    (doc,) = _example("deviceclass.yaml")
    created = await admin_api.create(dra("deviceclasses"), _unique(doc))
    name = created["metadata"]["name"]
    for version in ("v1beta1", "v1beta2"):
        got = await admin_api.get(dra("deviceclasses", version), name)
        assert got["apiVersion"] == f"resource.k8s.io/{version}"
        assert got["spec"]["selectors"] == doc["spec"]["selectors"]


async def test_resource_slice_devices_are_basic_in_v1beta1(admin_api: Client) -> None:
    doc = _example("resourceslices.yaml")[0]
    created = await admin_api.create(dra("resourceslices"), _unique(doc))
    name = created["metadata"]["name"]
    v1beta1 = await admin_api.get(dra("resourceslices", "v1beta1"), name)
    device = v1beta1["spec"]["devices"][0]
    assert device["name"] == "gpu-0"
    assert device["basic"]["attributes"]["model"] == {"string": "LATEST-GPU-MODEL"}
    assert device["basic"]["capacity"]["memory"] == {"value": "80Gi"}
    assert v1beta1["spec"]["nodeName"] == "node-1"
    v1beta2 = await admin_api.get(dra("resourceslices", "v1beta2"), name)
    flat = v1beta2["spec"]["devices"][0]
    assert "basic" not in flat
    assert flat["attributes"]["driverVersion"] == {"version": "1.2.0"}
    assert flat["capacity"]["cores"] == {"value": "108"}


def _claim_spec() -> dict[str, Any]:
    first = {"cel": {"expression": 'device.attributes["gpu.example.com"].index == 0'}}
    return claim_spec("gpu.example.com", selectors=[first])


async def test_resource_claim_requests_are_flat_in_v1beta1(
    admin_api: Client, namespace: str
) -> None:
    claim = resource_claim("one-gpu", _claim_spec(), namespace=namespace)
    await admin_api.create(dra("resourceclaims"), claim)
    v1beta1 = await admin_api.get(dra("resourceclaims", "v1beta1"), "one-gpu", namespace=namespace)
    request = v1beta1["spec"]["devices"]["requests"][0]
    assert request["deviceClassName"] == "gpu.example.com"
    assert request["allocationMode"] == "ExactCount"
    assert request["count"] == 1
    assert "exactly" not in request
    v1beta2 = await admin_api.get(dra("resourceclaims", "v1beta2"), "one-gpu", namespace=namespace)
    assert v1beta2["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == (
        "gpu.example.com"
    )


async def test_resource_claim_template_converts_its_claim_spec(
    admin_api: Client, namespace: str
) -> None:
    template = claim_template("gpu-template", _claim_spec(), namespace=namespace)
    await admin_api.create(dra("resourceclaimtemplates"), template)
    got = await admin_api.get(
        dra("resourceclaimtemplates", "v1beta1"), "gpu-template", namespace=namespace
    )
    assert got["spec"]["spec"]["devices"]["requests"][0]["deviceClassName"] == "gpu.example.com"


async def _versions_serving(api: Client, plural: str) -> list[str]:
    versions = []
    for version in _VERSION_ORDER:
        names = {r["name"] for r in await api.api_resources(RESOURCE_GROUP, version)}
        if plural in names:
            versions.append(version)
    return versions


async def test_device_taint_rule_through_newest_and_oldest_version(admin_api: Client) -> None:
    versions = await _versions_serving(admin_api, "devicetaintrules")
    assert len(versions) >= 2, versions
    newest, oldest = versions[0], versions[-1]
    rule = {
        "apiVersion": f"resource.k8s.io/{newest}",
        "kind": "DeviceTaintRule",
        "metadata": {"name": f"maintenance-{uuid.uuid4().hex[:6]}"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
            "taint": {"key": "example.com/maintenance", "value": "planned", "effect": "NoSchedule"},
        },
    }
    created = await admin_api.create(dra("devicetaintrules", newest), rule)
    got = await admin_api.get(dra("devicetaintrules", oldest), created["metadata"]["name"])
    assert got["apiVersion"] == f"resource.k8s.io/{oldest}"
    assert got["spec"]["deviceSelector"] == rule["spec"]["deviceSelector"]
    assert got["spec"]["taint"]["key"] == "example.com/maintenance"
    assert got["spec"]["taint"]["effect"] == "NoSchedule"
