"""`dra-operator allocate`: offline allocation of manifests, table and JSON output, exit codes.

Runs the command on the repository's examples plus claims written per test: a pod's claims from
templates allocated together on one node, standalone claims, already-allocated claims counting
as in use, explanations, bad input (exit 1 with file and path), policies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dra_operator.cli import main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
BASE = ["-f", str(EXAMPLES / "deviceclass.yaml"), "-f", str(EXAMPLES / "resourceslices.yaml")]

POD_WITH_TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: worker, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
"""

IMPOSSIBLE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: huge, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel:
            expression: >-
              device.capacity["gpu.example.com"].memory.compareTo(quantity("1Ti")) >= 0
"""


def _run(tmp_path: Path, text: str, *args: str) -> tuple[int, str]:
    manifest = tmp_path / "claims.yaml"
    manifest.write_text(text)
    result = CliRunner().invoke(main, ["allocate", *BASE, "-f", str(manifest), *args])
    return result.exit_code, result.output


def test_pod_claims_from_templates_are_allocated_on_the_first_fitting_node(tmp_path: Path) -> None:
    code, out = _run(tmp_path, POD_WITH_TEMPLATE, "-o", "json")
    assert code == 0
    report = json.loads(out)
    assert report["allocated"] == 1 and report["unallocated"] == 0
    claim = report["claims"][0]
    assert claim["claim"] == "default/worker-gpu" and claim["pod"] == "default/worker"
    assert claim["node"] == "node-1"
    assert claim["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
    ]


def test_impossible_claim_is_explained_and_exits_3(tmp_path: Path) -> None:
    code, out = _run(tmp_path, IMPOSSIBLE)
    assert code == 3
    assert out.splitlines()[0] == "claim default/huge: not allocated"
    assert "  node node-1: not enough usable devices" in out
    assert "request gpu: 0/2 devices usable: 2 rejected by request selector #0" in out


def test_allocated_claims_count_as_in_use(tmp_path: Path) -> None:
    taken = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: taken, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}
"""
    code, out = _run(tmp_path, taken + "---" + POD_WITH_TEMPLATE, "--node", "node-1")
    assert code == 0
    assert "  gpu: gpu.example.com/node-1/gpu-1" in out


def test_bad_input_names_the_file_and_field(tmp_path: Path) -> None:
    bad = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com, count: many}
"""
    code, out = _run(tmp_path, bad)
    assert code == 1
    assert "claims.yaml" in out and "count" in out


@pytest.mark.parametrize("policy", ["FirstFit", "BinPack", "Spread"])
def test_policies_allocate(tmp_path: Path, policy: str) -> None:
    code, _ = _run(tmp_path, POD_WITH_TEMPLATE, "--policy", policy)
    assert code == 0


def test_topology_affinity_needs_an_attribute(tmp_path: Path) -> None:
    code, out = _run(tmp_path, POD_WITH_TEMPLATE, "--policy", "TopologyAffinity")
    assert code == 1
    assert "needs an attribute" in out


@pytest.mark.parametrize(
    ("hooks", "device"),
    [
        pytest.param(["veto_by_name:VetoByName"], "gpu-1", id="veto-changes-the-device"),
        pytest.param(["failing:Broken"], "gpu-0", id="failing-hook-contained"),
    ],
)
def test_hooks_steer_the_allocation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hooks: list[str], device: str
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES / "hooks"))
    monkeypatch.setenv("DRA_OPERATOR_VETO_DEVICES", "gpu-0")
    manifest = tmp_path / "claims.yaml"
    manifest.write_text(POD_WITH_TEMPLATE)
    args = [arg for hook in hooks for arg in ("--hook", hook)]
    result = CliRunner().invoke(main, ["allocate", *BASE, "-f", str(manifest), "-o", "json", *args])
    assert result.exit_code == 0, result.output
    (claim,) = json.loads(result.stdout)["claims"]  # hook.failed logs go to stderr
    assert (claim["node"], claim["allocation"]["devices"]["results"][0]["device"]) == (
        "node-1",
        device,
    )


def test_an_unloadable_hook_is_bad_input(tmp_path: Path) -> None:
    code, out = _run(tmp_path, POD_WITH_TEMPLATE, "--hook", "no_such_module_here:x")
    assert code == 1
    assert "error: hook no_such_module_here:x: cannot import" in out


def test_the_example_workloads_share_a_claim_and_explain_the_pod_that_does_not_fit() -> None:
    """examples/workloads.yaml: a Namespace is skipped, the claim two pods share is allocated
    once (both pods get the same device), and the third trainer is explained."""
    args = ["allocate", *BASE, "-f", str(EXAMPLES / "workloads.yaml"), "-o", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3, result.output
    claims = json.loads(result.output)["claims"]
    shared = [c for c in claims if c["claim"] == "dra-demo/shared-gpu"]
    assert [c["pod"] for c in shared] == ["dra-demo/inference-a", "dra-demo/inference-b"]
    assert shared[0]["allocation"] == shared[1]["allocation"]
    assert shared[0]["node"] == shared[1]["node"] == "node-2"
    devices = [
        r["device"]
        for c in claims
        if c["claim"] != "dra-demo/shared-gpu" and c["allocation"]
        for r in c["allocation"]["devices"]["results"]
    ]
    assert sorted(devices) == ["gpu-0", "gpu-1"]
    (unfit,) = [c for c in claims if not c["allocated"]]
    assert unfit["pod"] == "dra-demo/trainer-2"
    assert any("2 in use" in line for e in unfit["explanations"] for line in e["lines"])


POD_WITH_NODE_SELECTOR = """
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {zone: a}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {zone: b}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: worker, namespace: default}
spec:
  nodeSelector: {zone: b}
  containers: [{name: c, image: busybox}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
"""


def test_a_pods_node_selector_limits_the_nodes_tried(tmp_path: Path) -> None:
    code, output = _run(tmp_path, POD_WITH_NODE_SELECTOR, "-o", "json")
    assert code == 0, output
    (claim,) = json.loads(output)["claims"]
    assert claim["node"] == "node-2"
    code, output = _run(
        tmp_path,
        POD_WITH_NODE_SELECTOR.replace("zone: b}\n  containers", "zone: c}\n  containers"),
        "-o",
        "json",
    )
    assert code == 3, output
