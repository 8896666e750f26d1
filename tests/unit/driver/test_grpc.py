"""The gRPC layer over a real unix socket, with claims from the reader seam (no API server):
per-claim errors beside successes, share IDs, idempotent unprepare, and the registration
service's answers and verdicts."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from tests.unit.driver.builders import NODE, Claims, allocated_claim, inventory

from dra_operator.driver import Checkpoint, DRAService, DriverMetrics, Preparer, RegistrationService
from dra_operator.driver._grpc import serve
from dra_operator.driver._proto import (
    dra_v1_pb2,
    dra_v1_pb2_grpc,
    pluginregistration_v1_pb2,
    pluginregistration_v1_pb2_grpc,
)


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """Unix socket paths end at 107 bytes; pytest's tmp_path can be longer."""
    path = Path(tempfile.mkdtemp(prefix="drv-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
async def channel(short_dir: Path) -> AsyncIterator[grpc.aio.Channel]:
    claims = Claims(
        allocated_claim("a", [{"device": "gpu-0"}]),
        allocated_claim("b", [{"device": "gpu-0"}]),
        allocated_claim("nic", [{"device": "nic-0", "shareID": "share-1"}]),
    )
    preparer = Preparer(
        inventory(), Checkpoint(short_dir), short_dir / "cdi", claims, DriverMetrics()
    )
    socket = short_dir / "dra.sock"
    server = await serve(socket, DRAService(preparer))
    async with grpc.aio.insecure_channel(f"unix://{socket}") as channel:
        yield channel
    await server.stop(None)


def _ref(name: str) -> dra_v1_pb2.Claim:
    return dra_v1_pb2.Claim(namespace="ns", name=name, uid=f"uid-{name}")


async def test_one_refused_claim_leaves_the_others_prepared(channel: grpc.aio.Channel) -> None:
    stub = dra_v1_pb2_grpc.DRAPluginStub(channel)
    request = dra_v1_pb2.NodePrepareResourcesRequest(claims=[_ref("a"), _ref("b"), _ref("nic")])
    answer = await stub.NodePrepareResources(request)

    assert set(answer.claims) == {"uid-a", "uid-b", "uid-nic"}
    assert answer.claims["uid-a"].error == ""
    assert [(d.pool_name, d.device_name) for d in answer.claims["uid-a"].devices] == [
        (NODE, "gpu-0")
    ]
    assert "already prepared for claim ns/a" in answer.claims["uid-b"].error
    assert list(answer.claims["uid-b"].devices) == []
    [nic] = answer.claims["uid-nic"].devices
    assert (nic.HasField("share_id"), nic.share_id) == (True, "share-1")
    assert not answer.claims["uid-a"].devices[0].HasField("share_id")

    undo = dra_v1_pb2.NodeUnprepareResourcesRequest(claims=[_ref("a"), _ref("never")])
    undone = await stub.NodeUnprepareResources(undo)
    assert {uid: entry.error for uid, entry in undone.claims.items()} == {
        "uid-a": "",
        "uid-never": "",
    }


async def test_registration_answers_and_hears_the_verdict(short_dir: Path) -> None:
    service = RegistrationService("sim.example.com", short_dir / "plugins" / "dra.sock")
    socket = short_dir / "reg.sock"
    server = await serve(socket, service)
    try:
        async with grpc.aio.insecure_channel(f"unix://{socket}") as channel:
            stub = pluginregistration_v1_pb2_grpc.RegistrationStub(channel)
            info = await stub.GetInfo(pluginregistration_v1_pb2.InfoRequest())
            assert (info.type, info.name, info.endpoint, list(info.supported_versions)) == (
                "DRAPlugin",
                "sim.example.com",
                str(short_dir / "plugins" / "dra.sock"),
                ["v1.DRAPlugin"],
            )
            status = pluginregistration_v1_pb2.RegistrationStatus
            await stub.NotifyRegistrationStatus(status(plugin_registered=True))
            assert service.registered.is_set()
            await stub.NotifyRegistrationStatus(status(plugin_registered=False, error="nope"))
            assert not service.registered.is_set()
    finally:
        await server.stop(None)
