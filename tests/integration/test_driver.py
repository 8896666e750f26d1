"""The simulated driver against a real kube-apiserver, with the test playing the kubelet.

Covers: `dra-operator driver` under its own identity (examples/driver/daemonset.yaml's
ClusterRole only) publishes its node's slice, owned by the Node; over the unix sockets the
kubelet uses, GetInfo names the driver, its DRA socket and "v1.DRAPlugin", and
NotifyRegistrationStatus is accepted; NodePrepareResources prepares two claims the operator
allocated (CDI specs naming exactly the allocated devices), refuses a third claim that a second
allocator gave one of those devices (error text and the refusal counter on /metrics); after a
restart the checkpoint still holds (same answer, same refusal) and NodeUnprepareResources
removes the spec, freeing the device. A deleted slice is recreated, and a changed inventory is
published as a new pool generation without leftovers. Upstream's own Go clients (k8s.io/kubelet's
generated stubs, built as tests/driverwire) get the answers the Python client gets, so our
.proto files put the kubelet's bytes on the wire.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest
import yaml
from tests.support.controlplane import NodeFactory, Spawned
from tests.support.dra_objects import (
    claim_spec,
    device_class,
    resource_claim,
    scheduler_pod,
    selects_driver,
)
from tests.support.driver_identity import driver_kubeconfig
from tests.support.driverwire import driverwire
from tests.support.operator import wait_for

from dra_operator import controlplane
from dra_operator.driver._proto import (
    dra_v1_pb2,
    dra_v1_pb2_grpc,
    pluginregistration_v1_pb2,
    pluginregistration_v1_pb2_grpc,
)
from dra_operator.errors import APIConflictError, APINotFoundError
from dra_operator.kube import NAMESPACES, PODS, Client, dra

pytestmark = pytest.mark.controlplane

CLAIMS = dra("resourceclaims")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")


@pytest.fixture(scope="session")
async def driver_config(control_plane: controlplane.ControlPlaneState, admin_api: Client) -> Path:
    return await driver_kubeconfig(control_plane, admin_api)


@pytest.fixture
def kubelet_root() -> Iterator[Path]:
    """A kubelet root dir with a short path: unix socket paths end at 107 bytes, and
    pytest's tmp_path plus plugins_registry/<driver>-reg.sock can pass that."""
    root = Path(tempfile.mkdtemp(prefix="kl-", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class SimDriver:
    """One `dra-operator driver` subprocess setup: start (again) and talk to it as a kubelet."""

    def __init__(
        self,
        spawn: Callable[..., Spawned],
        kubeconfig: Path,
        node: str,
        root: Path,
        devices: list[dict[str, Any]],
    ) -> None:
        self.spawn = spawn
        self.kubeconfig = kubeconfig
        self.node = node
        self.root = root
        self.name = f"sim-{uuid.uuid4().hex[:8]}.example.com"
        self.inventory = root / "inventory.yaml"
        self.write_inventory([{"spec": {"devices": devices}}])
        self.cdi = root / "cdi"
        self.metrics_port = _free_port()
        self.registration = root / "plugins_registry" / f"{self.name}-reg.sock"
        self.endpoint = root / "plugins" / self.name / "dra.sock"
        self.process: Spawned | None = None

    def write_inventory(self, documents: list[dict[str, Any]]) -> None:
        self.inventory.write_text(yaml.safe_dump_all(documents))

    async def start(self) -> None:
        self.process = self.spawn(
            "dra-operator",
            "driver",
            f"--node={self.node}",
            f"--devices={self.inventory}",
            f"--driver={self.name}",
            f"--kubelet-root={self.root}",
            f"--cdi-dir={self.cdi}",
            f"--kubeconfig={self.kubeconfig}",
            f"--metrics-port={self.metrics_port}",
        )
        await wait_for(self._serving, what="the driver's registration socket")

    def _serving(self) -> bool:
        assert self.process is not None
        if self.process.proc.poll() is not None:
            pytest.fail(f"driver exited:\n{self.process.output()}", pytrace=False)
        return self.registration.is_socket()

    def stop(self) -> None:
        assert self.process is not None
        self.process.proc.terminate()
        assert self.process.wait(timeout=30) == 0, self.process.output()

    @contextlib.asynccontextmanager
    async def dra(self) -> AsyncIterator[Any]:
        async with grpc.aio.insecure_channel(f"unix://{self.endpoint}") as channel:
            yield dra_v1_pb2_grpc.DRAPluginStub(channel)

    async def prepare(self, *claims: dict[str, Any]) -> Any:
        async with self.dra() as stub:
            return await stub.NodePrepareResources(
                dra_v1_pb2.NodePrepareResourcesRequest(claims=[_ref(c) for c in claims])
            )

    async def unprepare(self, *claims: dict[str, Any]) -> Any:
        async with self.dra() as stub:
            return await stub.NodeUnprepareResources(
                dra_v1_pb2.NodeUnprepareResourcesRequest(claims=[_ref(c) for c in claims])
            )

    async def refusals(self, reason: str) -> float:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        async with aiohttp.ClientSession() as session, session.get(url) as answer:
            text = await answer.text()
        line = f'dra_operator_driver_prepare_refusals_total{{reason="{reason}"}} '
        return sum(float(x[len(line) :]) for x in text.splitlines() if x.startswith(line))

    async def slices(self, api: Client) -> list[dict[str, Any]]:
        selector = f"spec.driver={self.name},spec.nodeName={self.node}"
        listed = await api.list(SLICES, field_selector=selector)
        return sorted(listed["items"], key=lambda s: s["metadata"]["name"])


def _ref(claim: dict[str, Any]) -> Any:
    meta = claim["metadata"]
    return dra_v1_pb2.Claim(namespace=meta["namespace"], name=meta["name"], uid=meta["uid"])


@pytest.fixture
async def sim_driver(
    make_node: NodeFactory,
    spawn: Callable[..., Spawned],
    driver_config: Path,
    kubelet_root: Path,
    admin_api: Client,
) -> AsyncIterator[SimDriver]:
    node = (await make_node())["metadata"]["name"]
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "SIM"}}} for i in range(2)]
    driver = SimDriver(spawn, driver_config, node, kubelet_root, devices)
    yield driver
    for leftover in await driver.slices(admin_api):  # no kubelet wipes them here
        with contextlib.suppress(APINotFoundError):
            await admin_api.delete(SLICES, leftover["metadata"]["name"])


async def test_driver_registers_and_prepares_what_the_operator_allocated(
    sim_driver: SimDriver,
    admin_api: Client,
    namespace: str,
    cluster: Callable[..., Any],
    run_operator: Callable[..., Any],
) -> None:
    driver, node = sim_driver, sim_driver.node
    await driver.start()
    published = await wait_for(lambda: driver.slices(admin_api), what="the node's slice")
    assert [s["spec"]["pool"] for s in published] == [
        {"name": node, "generation": 1, "resourceSliceCount": 1}
    ]
    assert [d["name"] for d in published[0]["spec"]["devices"]] == ["gpu-0", "gpu-1"]
    assert [(o["kind"], o["name"]) for o in published[0]["metadata"]["ownerReferences"]] == [
        ("Node", node)
    ]

    async with grpc.aio.insecure_channel(f"unix://{driver.registration}") as channel:
        registration = pluginregistration_v1_pb2_grpc.RegistrationStub(channel)
        info = await registration.GetInfo(pluginregistration_v1_pb2.InfoRequest())
        assert (info.type, info.name, info.endpoint, list(info.supported_versions)) == (
            "DRAPlugin",
            driver.name,
            str(driver.endpoint),
            ["v1.DRAPlugin"],
        )
        await registration.NotifyRegistrationStatus(
            pluginregistration_v1_pb2.RegistrationStatus(plugin_registered=True)
        )

    # The operator allocates two claims for two pods on the node.
    await cluster(CLASSES, device_class(driver.name, selects_driver(driver.name)))
    for name in ("c1", "c2"):
        await admin_api.create(
            CLAIMS, resource_claim(name, claim_spec(driver.name)), namespace=namespace
        )
        await admin_api.create(
            PODS, scheduler_pod(f"p-{name}", claim=name, hostname=node), namespace=namespace
        )
    await run_operator(controllers=frozenset({"claims", "scheduler"}))

    async def allocated(name: str) -> dict[str, Any] | None:
        claim = await admin_api.get(CLAIMS, name, namespace=namespace)
        status = claim.get("status") or {}
        return claim if status.get("allocation") and status.get("reservedFor") else None

    c1 = await wait_for(lambda: allocated("c1"), what="claim c1 allocated and reserved")
    c2 = await wait_for(lambda: allocated("c2"), what="claim c2 allocated and reserved")

    answer = await driver.prepare(c1, c2)
    held: dict[str, str] = {}
    for claim in (c1, c2):
        uid = claim["metadata"]["uid"]
        entry = answer.claims[uid]
        assert entry.error == ""
        [result] = claim["status"]["allocation"]["devices"]["results"]
        [device] = entry.devices
        assert (device.pool_name, device.device_name, list(device.request_names)) == (
            result["pool"],
            result["device"],
            [result["request"]],
        )
        spec = json.loads((driver.cdi / f"{driver.name}_{uid}.json").read_text())
        [cdi_device] = spec["devices"]
        assert list(device.cdi_device_ids) == [f"{driver.name}/device={cdi_device['name']}"]
        key = result["device"].upper().replace("-", "_")
        assert f"DRA_DEVICE_{key}={node}/{result['device']}" in cdi_device["containerEdits"]["env"]
        held[claim["metadata"]["name"]] = result["device"]
    assert sorted(held.values()) == ["gpu-0", "gpu-1"]

    # A second allocator (written here by hand) gives c1's device to c3: the driver refuses.
    c3 = await admin_api.create(
        CLAIMS, resource_claim("c3", claim_spec(driver.name)), namespace=namespace
    )
    c3["status"] = {"allocation": c1["status"]["allocation"]}
    c3 = await admin_api.update(CLAIMS, c3, namespace=namespace, subresource="status")
    uid3 = c3["metadata"]["uid"]
    refused = (await driver.prepare(c3)).claims[uid3]
    assert f"{held['c1']} is already prepared for claim {namespace}/c1" in refused.error
    assert list(refused.devices) == []
    assert await driver.refusals("device_in_use") == 1

    # After a restart the checkpoint answers: same devices, same refusal.
    driver.stop()
    assert not driver.registration.exists()
    assert len(await driver.slices(admin_api)) == 1  # slices stay while the driver restarts
    await driver.start()
    again = await driver.prepare(c1)
    assert again.claims[c1["metadata"]["uid"]] == answer.claims[c1["metadata"]["uid"]]
    assert "already prepared" in (await driver.prepare(c3)).claims[uid3].error

    undone = await driver.unprepare(c1)
    assert undone.claims[c1["metadata"]["uid"]].error == ""
    assert not (driver.cdi / f"{driver.name}_{c1['metadata']['uid']}.json").exists()
    freed = (await driver.prepare(c3)).claims[uid3]
    assert (freed.error, [d.device_name for d in freed.devices]) == ("", [held["c1"]])


async def test_driver_restores_deleted_slices_and_publishes_inventory_changes(
    sim_driver: SimDriver, admin_api: Client
) -> None:
    driver = sim_driver
    await driver.start()
    [first] = await wait_for(lambda: driver.slices(admin_api), what="the node's slice")
    await admin_api.delete(SLICES, first["metadata"]["name"])

    async def recreated() -> list[dict[str, Any]] | None:
        found = await driver.slices(admin_api)
        return found if found and found[0]["metadata"]["uid"] != first["metadata"]["uid"] else None

    [second] = await wait_for(recreated, what="the deleted slice to come back")
    assert second["spec"] == first["spec"]  # same content, same pool generation

    # A new inventory of two slices, published after a restart as generation 2.
    driver.stop()
    driver.write_inventory(
        [
            {"spec": {"sharedCounters": [{"name": "mem", "counters": {"gb": {"value": "8"}}}]}},
            {
                "spec": {
                    "devices": [
                        {
                            "name": "part-0",
                            "consumesCounters": [
                                {"counterSet": "mem", "counters": {"gb": {"value": "4"}}}
                            ],
                        }
                    ]
                }
            },
        ]
    )
    await driver.start()

    async def republished() -> list[dict[str, Any]] | None:
        found = await driver.slices(admin_api)
        pools = {
            (s["spec"]["pool"]["generation"], s["spec"]["pool"]["resourceSliceCount"])
            for s in found
        }
        return found if len(found) == 2 and pools == {(2, 2)} else None

    slices = await wait_for(republished, what="the new inventory as pool generation 2")
    assert [s["spec"].get("sharedCounters", [{}])[0].get("name") for s in slices] == ["mem", None]
    assert slices[1]["spec"]["devices"][0]["name"] == "part-0"

    # Shrinking back to one slice: generation 3, and the second slice is deleted.
    driver.stop()
    driver.write_inventory([{"spec": {"devices": [{"name": "gpu-0"}]}}])
    await driver.start()

    async def shrunk() -> list[dict[str, Any]] | None:
        found = await driver.slices(admin_api)
        return found if [s["spec"]["pool"]["generation"] for s in found] == [3] else None

    [last] = await wait_for(shrunk, what="one slice of pool generation 3")
    assert (last["spec"]["pool"]["resourceSliceCount"], last["spec"]["devices"]) == (
        1,
        [{"name": "gpu-0"}],
    )


async def test_slices_get_their_node_owner_once_the_node_exists(
    sim_driver: SimDriver, admin_api: Client, make_node: NodeFactory
) -> None:
    driver = sim_driver
    driver.node = f"late-{uuid.uuid4().hex[:8]}"  # a kubelet may start its plugin first
    await driver.start()
    [orphan] = await wait_for(lambda: driver.slices(admin_api), what="the node's slice")
    assert "ownerReferences" not in orphan["metadata"]

    node = await make_node(driver.node)
    driver.stop()
    await driver.start()  # the first pass of a run rewrites a slice that lacks its owner

    async def owned() -> list[dict[str, Any]] | None:
        found = await driver.slices(admin_api)
        return found if found and found[0]["metadata"].get("ownerReferences") else None

    [adopted] = await wait_for(owned, what="the slice to name its Node as owner")
    assert adopted["metadata"]["ownerReferences"][0]["uid"] == node["metadata"]["uid"]
    assert adopted["spec"]["pool"] == orphan["spec"]["pool"]  # same content, same generation


async def test_upstream_go_clients_talk_to_the_driver(
    sim_driver: SimDriver, admin_api: Client, namespace: str
) -> None:
    wire = driverwire()
    driver = sim_driver
    await driver.start()

    def call(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [str(wire), *args], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    assert call("info", str(driver.registration)) == {
        "type": "DRAPlugin",
        "name": driver.name,
        "endpoint": str(driver.endpoint),
        "supported_versions": ["v1.DRAPlugin"],
    }
    claim = await admin_api.create(
        CLAIMS, resource_claim("wired", claim_spec("any-class")), namespace=namespace
    )
    result = {"request": "gpu", "driver": driver.name, "pool": driver.node, "device": "gpu-1"}
    claim["status"] = {"allocation": {"devices": {"results": [result]}}}
    claim = await admin_api.update(CLAIMS, claim, namespace=namespace, subresource="status")
    uid = claim["metadata"]["uid"]

    prepared = call("prepare", str(driver.endpoint), namespace, "wired", uid)
    assert prepared == {
        "claims": {
            uid: {
                "devices": [
                    {
                        "request_names": ["gpu"],
                        "pool_name": driver.node,
                        "device_name": "gpu-1",
                        "cdi_device_ids": [f"{driver.name}/device={uid}-0-gpu-1"],
                    }
                ]
            }
        }
    }
    assert call("unprepare", str(driver.endpoint), namespace, "wired", uid) == {"claims": {uid: {}}}
    assert not (driver.cdi / f"{driver.name}_{uid}.json").exists()


async def test_daemonset_example_passes_a_server_side_dry_run(
    control_plane: controlplane.ControlPlaneState, admin_api: Client
) -> None:
    manifest = Path(__file__).resolve().parents[2] / "examples" / "driver" / "daemonset.yaml"
    namespace = next(
        d for d in yaml.safe_load_all(manifest.read_text()) if d["kind"] == "Namespace"
    )
    # A dry run creates nothing, so the namespaced objects need their namespace for real.
    with contextlib.suppress(APIConflictError):
        await admin_api.create(NAMESPACES, namespace)
    kubectl = controlplane.find_binaries().require("kubectl")
    done = subprocess.run(
        [
            str(kubectl),
            f"--kubeconfig={control_plane.admin_kubeconfig}",
            "apply",
            "--dry-run=server",
            f"--filename={manifest}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
