"""`dra-operator allocate` with DeviceTaintRules among the manifests.

The rules' taints are added to the devices they select before allocating, so NoSchedule and
NoExecute rules keep untolerating claims off those devices (DRADeviceTaints on, as in 1.36),
whatever the rule's served version (v1alpha3 and v1beta2 share the shape).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dra_operator.cli import main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
BASE = ["-f", str(EXAMPLES / "deviceclass.yaml"), "-f", str(EXAMPLES / "resourceslices.yaml")]


def rule(version: str, name: str, effect: str, **selector: str) -> str:
    fields = ", ".join(f"{k}: {v}" for k, v in selector.items())
    return f"""
apiVersion: resource.k8s.io/{version}
kind: DeviceTaintRule
metadata: {{name: {name}}}
spec:
  deviceSelector: {{{fields}}}
  taint: {{key: example.com/{name}, value: "yes", effect: {effect}}}
---"""


def claim(name: str, count: int = 1, toleration: str = "") -> str:
    tolerations = f"\n        tolerations: [{toleration}]" if toleration else ""
    return f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: default}}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        count: {count}{tolerations}
---"""


def run(tmp_path: Path, text: str, *args: str) -> tuple[int, dict[str, Any]]:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text)
    result = CliRunner().invoke(main, ["allocate", *BASE, "-f", str(manifest), "-o", "json", *args])
    assert result.exit_code in (0, 3), result.output
    return result.exit_code, json.loads(result.output)


def devices(report: dict[str, Any]) -> list[str]:
    return [
        f"{r['pool']}/{r['device']}"
        for c in report["claims"]
        if c["allocation"]
        for r in c["allocation"]["devices"]["results"]
    ]


@pytest.mark.parametrize("version", ["v1beta2", "v1alpha3"])
@pytest.mark.parametrize("effect", ["NoSchedule", "NoExecute"])
def test_a_rule_on_one_device_moves_the_claim_to_the_next(
    tmp_path: Path, version: str, effect: str
) -> None:
    text = rule(version, "gpu-0-broken", effect, driver="gpu.example.com", device="gpu-0")
    code, report = run(tmp_path, text + claim("one"), "--node", "node-1")
    assert code == 0
    assert devices(report) == ["node-1/gpu-1"]


def test_a_none_effect_rule_blocks_nothing(tmp_path: Path) -> None:
    code, report = run(tmp_path, rule("v1beta2", "note", "None") + claim("one"), "--node", "node-1")
    assert code == 0
    assert devices(report) == ["node-1/gpu-0"]


def test_a_pool_rule_sends_the_claim_to_another_node(tmp_path: Path) -> None:
    code, report = run(
        tmp_path, rule("v1beta2", "drain", "NoSchedule", pool="node-1") + claim("one")
    )
    assert code == 0
    assert report["claims"][0]["node"] == "node-2"


def test_a_tolerating_claim_may_use_tainted_devices(tmp_path: Path) -> None:
    tolerate = "{key: example.com/drain, operator: Exists}"
    text = rule("v1beta2", "drain", "NoExecute", pool="node-1") + claim("two", 2, tolerate)
    code, report = run(tmp_path, text, "--node", "node-1")
    assert code == 0
    assert devices(report) == ["node-1/gpu-0", "node-1/gpu-1"]
    results = report["claims"][0]["allocation"]["devices"]["results"]
    assert results[0]["tolerations"] == [{"key": "example.com/drain", "operator": "Exists"}]


def test_an_untolerated_rule_is_named_in_the_explanation(tmp_path: Path) -> None:
    text = rule("v1beta2", "drain", "NoSchedule", driver="gpu.example.com") + claim("one")
    code, report = run(tmp_path, text)
    assert code == 3
    lines = [line for e in report["claims"][0]["explanations"] for line in e["lines"]]
    assert any(
        "2 with untolerated taint example.com/drain=yes:NoSchedule" in line for line in lines
    ), lines
