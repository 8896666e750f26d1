"""The suite's own pure helpers: which cluster the environment selects, which nodes the fake
driver publishes on, and what it publishes. No cluster needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.dra_objects import claim_spec, claim_template, in_version

from dra_operator.model import (
    parse_device_class,
    parse_resource_claim_template,
    parse_resource_slice,
)
from e2e._driver import MAX_NODES, class_manifest, new_driver, schedulable, slice_manifest
from e2e._target import ClusterChoice, choose


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        pytest.param({}, ClusterChoice(kubeconfig=None, deployed=False), id="local"),
        pytest.param(
            {"KUBECONFIG": "/k/config"},
            ClusterChoice(kubeconfig=Path("/k/config"), deployed=False),
            id="kubeconfig-operator-started-by-the-suite",
        ),
        pytest.param(
            {"KUBECONFIG": "/k/a:/k/b", "DRA_OPERATOR_E2E_OPERATOR": "deployed"},
            ClusterChoice(kubeconfig=Path("/k/a"), deployed=True),
            id="first-kubeconfig-entry-deployed",
        ),
        pytest.param(
            {"DRA_OPERATOR_E2E_OPERATOR": "deployed"},
            ClusterChoice(kubeconfig=None, deployed=True),
            id="deployed-locally-by-the-suite",
        ),
        pytest.param(
            {"KUBECONFIG": ":/k/b"},
            ClusterChoice(kubeconfig=Path("/k/b"), deployed=False),
            id="empty-entries-skipped",
        ),
        pytest.param(
            {"KUBECONFIG": ""}, ClusterChoice(kubeconfig=None, deployed=False), id="empty-is-unset"
        ),
    ],
)
def test_choose(environ: dict[str, str], expected: ClusterChoice) -> None:
    assert choose(environ) == expected


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        pytest.param(
            {"KUBECONFIG": "/k", "DRA_OPERATOR_E2E_OPERATOR": "kind"},
            "only 'deployed'",
            id="unknown-mode",
        ),
    ],
)
def test_choose_refuses(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        choose(environ)


def _node(
    *, ready: str = "True", taints: list[dict[str, str]] | None = None, cordoned: bool = False
) -> dict[str, Any]:
    spec: dict[str, Any] = {"taints": taints or []}
    if cordoned:
        spec["unschedulable"] = True
    return {"spec": spec, "status": {"conditions": [{"type": "Ready", "status": ready}]}}


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        pytest.param(_node(), True, id="ready"),
        pytest.param(_node(ready="False"), False, id="not-ready"),
        pytest.param({"spec": {}, "status": {}}, False, id="no-conditions"),
        pytest.param(_node(cordoned=True), False, id="cordoned"),
        pytest.param(
            _node(
                taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
            ),
            False,
            id="kind-control-plane",
        ),
        pytest.param(_node(taints=[{"key": "x", "effect": "NoExecute"}]), False, id="no-execute"),
        pytest.param(
            _node(taints=[{"key": "x", "effect": "PreferNoSchedule"}]), True, id="prefer-only"
        ),
    ],
)
def test_schedulable(node: dict[str, Any], expected: bool) -> None:
    assert schedulable(node) is expected


def test_driver_names_are_unique_and_nodes_capped() -> None:
    nodes = [f"n{i}" for i in range(MAX_NODES + 2)]
    one, two = new_driver(nodes), new_driver(nodes)
    assert one.name != two.name
    assert one.name.endswith(".example.com")
    assert one.nodes == tuple(nodes[:MAX_NODES])
    assert one.device_count == MAX_NODES * one.devices_per_node


def test_published_objects_are_valid_v1() -> None:
    driver = new_driver(["node-a"])
    parsed = parse_resource_slice(slice_manifest(driver.name, "node-a", 2))
    assert parsed.driver == driver.name
    assert parsed.node_name == "node-a"
    assert [d.name for d in parsed.devices] == ["gpu-0", "gpu-1"]
    assert parse_device_class(class_manifest(driver.name)).metadata.name == driver.name


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1", "v1alpha3"])
def test_published_objects_reshape_for_older_servers(version: str) -> None:
    """What the suite creates on 1.31-1.33 says the same as its v1 manifest."""
    driver = new_driver(["node-a"])
    manifest = slice_manifest(driver.name, "node-a", 2)
    reshaped = in_version(manifest, version)
    assert reshaped["apiVersion"] == f"resource.k8s.io/{version}"
    assert parse_resource_slice(reshaped, version) == parse_resource_slice(manifest)
    spec = claim_spec(driver.name, selectors=[{"cel": {"expression": driver.selector()}}])
    template = claim_template("gpu", spec)
    parsed = parse_resource_claim_template(in_version(template, version), version)
    assert parsed == parse_resource_claim_template(template)
