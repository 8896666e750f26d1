"""Inventory files: the example parses into the node's pool; bad files name file and field;
documents for other nodes are skipped; the driver name comes from the flag or the file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dra_operator.driver import DEFAULT_DRIVER, load_inventory, parse_inventory
from dra_operator.errors import InvalidObjectError
from dra_operator.model import parse_resource_slice

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "driver" / "inventory.yaml"
CLI = Path(sys.executable).with_name("dra-operator")


def _doc(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "spec": spec}


GPU = {"name": "gpu-0", "capacity": {"memory": {"value": "8Gi"}}}


def test_example_inventory_becomes_one_pool_of_three_slices() -> None:
    inventory = load_inventory(EXAMPLE, node="node-a")
    assert inventory.driver == "sim.dra-operator.dev"
    manifests = inventory.manifests(generation=4)
    assert [m["metadata"]["name"] for m in manifests] == [
        "node-a-sim.dra-operator.dev-0",
        "node-a-sim.dra-operator.dev-1",
        "node-a-sim.dra-operator.dev-2",
    ]
    slices = [parse_resource_slice(m) for m in manifests]
    assert {(s.pool.name, s.pool.generation, s.pool.resource_slice_count) for s in slices} == {
        ("node-a", 4, 3)
    }
    assert {s.node_name for s in slices} == {"node-a"}
    assert [c.name for c in slices[1].shared_counters] == ["gpu-2"]
    assert inventory.devices["nic-0"].allow_multiple_allocations is True
    assert [t.key for t in inventory.devices["gpu-3"].taints] == ["sim.dra-operator.dev/unhealthy"]
    assert inventory.devices["gpu-2-half-0"].consumes_counters[0].counter_set == "gpu-2"


def test_driver_flag_default_and_conflict() -> None:
    assert parse_inventory([_doc(devices=[GPU])], node="n").driver == DEFAULT_DRIVER
    assert parse_inventory([_doc(devices=[GPU])], node="n", driver="x.example.com").driver == (
        "x.example.com"
    )
    with pytest.raises(InvalidObjectError, match=r"document 1: spec.driver: is 'a.example.com'"):
        parse_inventory([_doc(driver="a.example.com", devices=[GPU])], node="n", driver="b.io")


def test_documents_of_other_nodes_are_skipped() -> None:
    docs = [
        _doc(nodeName="other", devices=[{"name": "far"}]),
        _doc(nodeName="n", devices=[GPU]),
        _doc(devices=[{"name": "everywhere"}]),
    ]
    inventory = parse_inventory(docs, node="n")
    assert list(inventory.devices) == ["gpu-0", "everywhere"]
    with pytest.raises(InvalidObjectError, match="no document describes devices for node z"):
        parse_inventory(docs[:1], node="z")


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        pytest.param(["text"], "document 1: must be a mapping", id="not-a-mapping"),
        pytest.param([{"kind": "Pod", "spec": {}}], "document 1: kind: is 'Pod'", id="kind"),
        pytest.param([_doc(devices=[GPU], allNodes=True)], "spec.allNodes", id="all-nodes"),
        pytest.param([_doc()], "needs either devices or sharedCounters", id="empty"),
        pytest.param(
            [_doc(devices=[GPU], sharedCounters=[{"name": "c", "counters": {}}])],
            "needs either devices or sharedCounters",
            id="both",
        ),
        pytest.param(
            [_doc(devices=[{"name": "g", "capacity": {"memory": {"value": "lots"}}}])],
            r"document 1: spec.devices\[0\].capacity",
            id="bad-quantity",
        ),
        pytest.param(
            [_doc(devices=[GPU]), _doc(devices=[GPU])],
            "document 2: spec.devices: device 'gpu-0' is listed twice",
            id="duplicate",
        ),
        pytest.param(
            [_doc(driver="a.io", devices=[GPU]), _doc(driver="b.io", devices=[{"name": "x"}])],
            "several drivers: a.io, b.io",
            id="two-drivers",
        ),
    ],
)
def test_bad_documents_are_named(documents: list[object], message: str) -> None:
    with pytest.raises(InvalidObjectError, match=message):
        parse_inventory(documents, node="n")


def test_cli_exits_2_naming_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("spec:\n  devices:\n    - name: g\n      attributes: {a: {int: x}}\n")
    done = subprocess.run(
        [str(CLI), "driver", "--node", "n", "--devices", str(bad), "--kubelet-root", "/nonexist"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert f"bad input: {bad}: document 1: spec.devices[0].attributes" in done.stderr
    missing = subprocess.run(
        [str(CLI), "driver", "--node", "n", "--devices", str(tmp_path / "none.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 2
    assert "cannot read inventory" in missing.stderr
