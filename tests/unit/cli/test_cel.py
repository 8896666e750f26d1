"""`dra-operator cel`: JSON schema, table output and exit codes; 1.30 (v1alpha2) slices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dra_operator.cli import main

SLICES = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: a100}
      driverVersion: {version: 1.4.2}
    capacity:
      memory: {value: 40Gi}
  - name: gpu-1
    attributes:
      model: {string: h100}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: node-2-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-2
  pool: {name: node-2, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-9
    basic:
      attributes:
        model: {string: a100}
"""


@pytest.fixture
def slices(tmp_path: Path) -> Path:
    path = tmp_path / "slices.yaml"
    path.write_text(SLICES)
    return path


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["cel", *args])
    return result.exit_code, result.output


def test_json_lists_every_device_with_match_or_error(slices: Path) -> None:
    expression = 'device.attributes["gpu.example.com"].driverVersion.major() == 1'
    code, output = _run("-e", expression, "-f", str(slices), "-o", "json")
    assert code == 0
    assert json.loads(output) == {
        "expression": expression,
        "compileError": None,
        "results": [
            {
                "driver": "gpu.example.com",
                "pool": "node-1",
                "device": "gpu-0",
                "match": True,
                "error": None,
            },
            {
                "driver": "gpu.example.com",
                "pool": "node-1",
                "device": "gpu-1",
                "match": None,
                "error": "no such key: driverVersion",
            },
            {
                "driver": "gpu.example.com",
                "pool": "node-2",
                "device": "gpu-9",
                "match": None,
                "error": "no such key: driverVersion",
            },
        ],
    }


def test_compile_error_exits_2_with_the_upstream_text(slices: Path) -> None:
    code, output = _run("-e", 'device.drivr == "x"', "-f", str(slices), "-o", "json")
    assert code == 2
    document = json.loads(output)
    assert document["results"] == []
    assert document["compileError"].startswith(
        "compilation failed: ERROR: <input>:1:7: undefined field 'drivr'"
    )


def test_table_shows_matches(slices: Path) -> None:
    code, output = _run(
        "-e", 'device.attributes["gpu.example.com"].model == "a100"', "-f", str(slices)
    )
    assert code == 0
    rows = [line for line in output.splitlines() if "gpu-" in line]
    assert [("true" in row, "false" in row) for row in rows] == [
        (True, False),
        (False, True),
        (True, False),
    ]


@pytest.mark.parametrize(
    "args",
    [
        pytest.param([], id="missing-expression"),
        pytest.param(["-e", "true", "-f", "/nonexistent/slices.yaml"], id="unreadable-file"),
        pytest.param(["-e", "true", "-o", "yaml"], id="bad-output"),
    ],
)
def test_bad_usage_and_unreadable_files_exit_1(args: list[str]) -> None:
    code, _ = _run(*args)
    assert code == 1


NAMED = Path(__file__).parents[1] / "model" / "data" / "v1alpha2" / "resourceslice.json"


def test_v1alpha2_slices_use_the_named_resources_environment() -> None:
    expression = 'attributes.quantity["memory"].compareTo(quantity("40Gi")) > 0'
    code, output = _run("-e", expression, "-f", str(NAMED), "-o", "json")
    assert code == 0
    rows = [(r["device"], r["pool"], r["match"], r["error"]) for r in json.loads(output)["results"]]
    assert rows == [
        ("gpu-0", "node-a", True, None),
        ("gpu-1", "node-a", None, "no such key: memory"),
    ]
    code, _ = _run("-e", 'device.driver == "x"', "-f", str(NAMED))
    assert code == 2  # no `device` in 1.30's environment


def test_v1alpha2_and_newer_slices_are_not_mixed(slices: Path) -> None:
    code, output = _run("-e", "true", "-f", str(slices), "-f", str(NAMED))
    assert code == 1
    assert "cannot be mixed" in output


def test_invalid_slice_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: x}\n")
    code, output = _run("-e", "true", "-f", str(path))
    assert code == 1
    assert str(path) in output


def test_examples_evaluate() -> None:
    examples = Path(__file__).resolve().parents[3] / "examples" / "resourceslices.yaml"
    expression = 'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi"))'
    code, output = _run("-e", expression, "-f", str(examples), "-o", "json")
    assert code == 0
    results = json.loads(output)["results"]
    assert results
    assert all(row["error"] is None and row["match"] is not None for row in results)
