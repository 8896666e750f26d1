"""`dra-operator explain` and `kubectl dra devices` against a real kube-apiserver.

Each scenario writes a class, a pool on a fresh node and claims (allocations are written
directly, as the scheduler would), then checks that `explain -o json` names the real blocking
stage for the test's node: a request selector no device matches, every device in use, an
untolerated taint, a constraint no pair satisfies. An allocated claim shows its devices and
node; `kubectl-dra devices --node` lists the pool with the holders.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.cli import BIN, run_command
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import consumer_pod, device_class, resource_claim, resource_slice

from dra_operator import controlplane
from dra_operator.kube import PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
SLICES = dra("resourceslices")
CLASSES = dra("deviceclasses")


class Scene:
    """One test's class (`<ns>-gpu`), pool of devices on its own node, claims and pods."""

    def __init__(self, api: Client, namespace: str, node: str) -> None:
        self.api, self.namespace, self.node = api, namespace, node
        self.driver = f"{namespace}.example.com"
        self.device_class = f"{namespace}-gpu"

    async def setup(self, devices: list[dict[str, Any]]) -> None:
        expression = f'device.driver == "{self.driver}"'
        await self.api.create(CLASSES, device_class(self.device_class, expression))
        pool = resource_slice(
            self.node, self.driver, devices, name=f"{self.namespace}-slice", pool="pool"
        )
        await self.api.create(SLICES, pool)

    async def teardown(self) -> None:
        await self.api.delete(SLICES, f"{self.namespace}-slice")
        await self.api.delete(CLASSES, self.device_class)

    async def claim(
        self,
        name: str,
        requests: list[dict[str, Any]] | None = None,
        *,
        constraints: list[dict[str, Any]] | None = None,
        devices: list[str] = (),  # type: ignore[assignment]
    ) -> None:
        """A claim (default: one device of the class); allocated to `devices` when given."""
        requests = requests or [self.request("gpu")]
        spec: dict[str, Any] = {"devices": {"requests": requests}}
        if constraints:
            spec["devices"]["constraints"] = constraints
        await self.api.create(CLAIMS, resource_claim(name, spec), namespace=self.namespace)
        if devices:
            results = [
                {"request": "gpu", "driver": self.driver, "pool": "pool", "device": device}
                for device in devices
            ]
            selector = {"key": "metadata.name", "operator": "In", "values": [self.node]}
            status = {
                "allocation": {
                    "devices": {"results": results},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [selector]}]},
                }
            }
            await self.api.patch(
                CLAIMS, name, {"status": status}, namespace=self.namespace, subresource="status"
            )

    def request(self, name: str, count: int = 1, **extra: Any) -> dict[str, Any]:
        body = {"deviceClassName": self.device_class, "count": count, **extra}
        return {"name": name, "exactly": body}

    async def pod(self, name: str, claim: str) -> None:
        body = consumer_pod(name, claim=claim, node=self.node)
        await self.api.create(PODS, body, namespace=self.namespace)

    async def explain(
        self, kubeconfig: Path, kind: str, name: str
    ) -> tuple[int, dict[str, Any], dict[str, Any] | None]:
        """Exit code, the whole answer, and the verdict for this scene's node."""
        code, out = await run_command(
            "dra-operator", kubeconfig, "explain", kind, name, "-n", self.namespace, "-o", "json"
        )
        assert code in (0, 3), out
        body: dict[str, Any] = json.loads(out)
        mine = [v for v in body["nodes"] if v["node"] == self.node]
        return code, body, mine[0] if mine else None


def _gpu(name: str, **attributes: Any) -> dict[str, Any]:
    return {"name": name, "attributes": {k: v for k, v in attributes.items()}}


@pytest.fixture
async def scene(admin_api: Client, namespace: str, make_node: NodeFactory) -> AsyncIterator[Scene]:
    node = await make_node()
    built = Scene(admin_api, namespace, node["metadata"]["name"])
    yield built
    await built.teardown()


def _blocking(verdict: dict[str, Any] | None) -> list[str]:
    assert verdict is not None and not verdict["fits"], verdict
    return [request["blocking"] for request in verdict["requests"]]


async def test_selector_mismatch_is_named(
    control_plane: controlplane.ControlPlaneState, scene: Scene
) -> None:
    await scene.setup(
        [_gpu("gpu-0", model={"string": "a100"}), _gpu("gpu-1", model={"string": "a100"})]
    )
    wanted = f'device.attributes["{scene.driver}"].model == "h100"'
    await scene.claim("h100", [scene.request("gpu", selectors=[{"cel": {"expression": wanted}}])])
    code, body, verdict = await scene.explain(control_plane.admin_kubeconfig, "claim", "h100")
    assert code == 3 and body["pending"] == [f"{scene.namespace}/h100"]
    assert _blocking(verdict) == ["request selector: 2 rejected by request selector #0"]
    assert verdict is not None
    stages = [(s["name"], s["remaining"]) for s in verdict["requests"][0]["stages"]]
    assert stages == [
        ("class selector", 2),
        ("request selector", 0),
        ("taints", 0),
        ("free", 0),
        ("constraints", 0),
    ]


async def test_all_devices_in_use_is_named(
    control_plane: controlplane.ControlPlaneState, scene: Scene
) -> None:
    await scene.setup([_gpu("gpu-0"), _gpu("gpu-1")])
    await scene.claim("first", devices=["gpu-0"])
    await scene.claim("second", devices=["gpu-1"])
    await scene.claim("third")
    await scene.pod("worker", "third")
    code, body, verdict = await scene.explain(control_plane.admin_kubeconfig, "pod", "worker")
    assert code == 3
    assert [v["node"] for v in body["nodes"]] == [scene.node]  # a bound pod: its node only
    assert _blocking(verdict) == ["free: 2 in use"]


async def test_untolerated_taint_is_named(
    control_plane: controlplane.ControlPlaneState, scene: Scene
) -> None:
    tainted = {"name": "gpu-0", "taints": [{"key": "example.com/broken", "effect": "NoSchedule"}]}
    await scene.setup([tainted])
    await scene.claim("wants")
    _, _, verdict = await scene.explain(control_plane.admin_kubeconfig, "claim", "wants")
    (blocking,) = _blocking(verdict)
    assert blocking.startswith("taints: 1 with untolerated taint example.com/broken")


async def test_unsatisfiable_constraint_is_named(
    control_plane: controlplane.ControlPlaneState, scene: Scene
) -> None:
    await scene.setup([_gpu("gpu-0", numa={"int": 0}), _gpu("gpu-1", numa={"int": 1})])
    await scene.claim(
        "pair",
        [scene.request("a"), scene.request("b")],
        constraints=[{"requests": ["a", "b"], "matchAttribute": f"{scene.driver}/numa"}],
    )
    _, _, verdict = await scene.explain(control_plane.admin_kubeconfig, "claim", "pair")
    blocking = _blocking(verdict)
    assert len(blocking) == 2
    assert all(b.startswith("constraints: no combination of usable devices") for b in blocking)
    assert all(f"matchAttribute {scene.driver}/numa" in b for b in blocking)


async def test_allocated_claim_shows_devices_and_node_and_devices_lists_holders(
    control_plane: controlplane.ControlPlaneState, scene: Scene
) -> None:
    await scene.setup([_gpu("gpu-0"), _gpu("gpu-1")])
    await scene.claim("held", devices=["gpu-1"])
    code, out = await run_command(
        "dra-operator",
        control_plane.admin_kubeconfig,
        "explain",
        "claim",
        "held",
        "-n",
        scene.namespace,
    )
    assert code == 0, out
    assert f"claim {scene.namespace}/held: allocated on node {scene.node}" in out
    assert f"gpu: {scene.driver}/pool/gpu-1" in out

    code, out = await run_command(
        "kubectl-dra", control_plane.admin_kubeconfig, "devices", "--node", scene.node, "-o", "json"
    )
    assert code == 0, out
    rows = [(r["device"], r["claims"]) for r in json.loads(out)["devices"]]
    assert rows == [("gpu-0", []), ("gpu-1", [f"{scene.namespace}/held"])]
    code, out = await run_command(
        "kubectl-dra", control_plane.admin_kubeconfig, "explain", "claim", "nope"
    )
    assert code == 1 and "claim default/nope not found" in out


async def test_context_namespace_yaml_and_wide_output(
    control_plane: controlplane.ControlPlaneState, scene: Scene, tmp_path: Path
) -> None:
    """kubectl's conventions: `--context` picks a context, whose namespace replaces `-n`."""
    await scene.setup([_gpu("gpu-0")])
    await scene.claim("held", devices=["gpu-0"])
    doc = yaml.safe_load(control_plane.admin_kubeconfig.read_text())
    (admin,) = doc["contexts"]
    in_scene = {**admin["context"], "namespace": scene.namespace}
    doc["contexts"].append({"name": "scene", "context": in_scene})
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(doc))

    code, out = await run_command(
        "kubectl-dra", kubeconfig, "explain", "claim", "held", "-o", "yaml"
    )
    assert code == 1 and "claim default/held not found" in out  # the current context: default
    code, out = await run_command(
        "kubectl-dra", kubeconfig, "explain", "claim", "held", "-o", "yaml", "--context", "scene"
    )
    assert code == 0, out
    (held,) = yaml.safe_load(out)["allocated"]
    assert (held["claim"], held["node"]) == (f"{scene.namespace}/held", scene.node)

    code, out = await run_command(
        "kubectl-dra", kubeconfig, "devices", "--node", scene.node, "-o", "wide"
    )
    assert code == 0, out
    header, row = out.splitlines()
    assert header.split() == ["NODE", "DRIVER", "POOL", "DEVICE", "SLICE", "CLAIMS"]
    assert row.split() == [
        scene.node,
        scene.driver,
        "pool",
        "gpu-0",
        f"{scene.namespace}-slice",
        f"{scene.namespace}/held",
    ]
    # kubectl's plugin completion of NAME: the claims of the context's namespace.
    proc = await asyncio.create_subprocess_exec(
        str(BIN / "kubectl_complete-dra"),
        *("explain", "claim", "--kubeconfig", str(kubeconfig), "--context", "scene", "h"),
        stdout=asyncio.subprocess.PIPE,
    )
    out_bytes, _ = await proc.communicate()
    assert out_bytes.decode().splitlines() == ["held", ":4"]
    code, out = await run_command("kubectl-dra", kubeconfig, "devices", "--context", "nope")
    assert code == 2 and "cannot read the cluster" in out
