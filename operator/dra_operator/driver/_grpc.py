"""The driver's two gRPC services, as the kubelet calls them over unix sockets.

* Registration (`pluginregistration.Registration`) on `<kubelet-root>/plugins_registry/
  <driver>-reg.sock`: the kubelet's plugin watcher finds the socket, asks GetInfo (a
  "DRAPlugin" named after the driver, serving "v1.DRAPlugin" at the DRA socket) and reports the
  outcome with NotifyRegistrationStatus.
* DRA (`k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin`) on `<kubelet-root>/plugins/<driver>/dra.sock`:
  NodePrepareResources / NodeUnprepareResources, answered per claim by `Preparer`; a claim that
  fails carries its error in its own entry, so one bad claim never fails the others.

The optional DRAResourceHealth service is not served: the kubelet logs that it is unimplemented
and carries on. The message classes come from our own .proto files (`_proto/`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc

from dra_operator.driver._events import DriverEvent
from dra_operator.driver._prepare import PrepareError, Preparer
from dra_operator.driver._proto import (
    dra_v1_pb2,
    dra_v1_pb2_grpc,
    pluginregistration_v1_pb2,
    pluginregistration_v1_pb2_grpc,
)
from dra_operator.observability import get_logger

__all__ = ["DRA_SERVICE", "DRAService", "RegistrationService", "serve"]

DRA_SERVICE = "v1.DRAPlugin"
"""What a plugin lists in `supported_versions` to be called through dra/v1."""
PLUGIN_TYPE = "DRAPlugin"

_log = get_logger(__name__)


class DRAService:
    """The DRAPlugin service; its method names are the RPC names the generated code looks up
    (a plain class, not the generated untyped servicer base)."""

    def __init__(self, preparer: Preparer) -> None:
        self.preparer = preparer

    async def NodePrepareResources(
        self, request: dra_v1_pb2.NodePrepareResourcesRequest, context: Any
    ) -> dra_v1_pb2.NodePrepareResourcesResponse:
        response = dra_v1_pb2.NodePrepareResourcesResponse()
        for claim in request.claims:
            entry = response.claims[claim.uid]
            try:
                prepared = await self.preparer.prepare(claim.namespace, claim.name, claim.uid)
            except PrepareError as exc:
                entry.error = str(exc)
                continue
            for device in prepared.devices:
                added = entry.devices.add(
                    request_names=device.requests,
                    pool_name=device.pool,
                    device_name=device.device,
                    cdi_device_ids=device.cdi_ids,
                )
                if device.share_id:
                    added.share_id = device.share_id
        return response

    async def NodeUnprepareResources(
        self, request: dra_v1_pb2.NodeUnprepareResourcesRequest, context: Any
    ) -> dra_v1_pb2.NodeUnprepareResourcesResponse:
        response = dra_v1_pb2.NodeUnprepareResourcesResponse()
        for claim in request.claims:
            entry = response.claims[claim.uid]
            try:
                self.preparer.unprepare(claim.uid, claim.namespace, claim.name)
            except OSError as exc:
                entry.error = f"claim {claim.namespace}/{claim.name}: unprepare failed: {exc}"
        return response


class RegistrationService:
    """The plugin-registration service the kubelet's plugin watcher talks to."""

    def __init__(self, driver: str, endpoint: Path) -> None:
        self.driver = driver
        self.endpoint = endpoint
        self.registered = asyncio.Event()

    async def GetInfo(
        self, request: pluginregistration_v1_pb2.InfoRequest, context: Any
    ) -> pluginregistration_v1_pb2.PluginInfo:
        return pluginregistration_v1_pb2.PluginInfo(
            type=PLUGIN_TYPE,
            name=self.driver,
            endpoint=str(self.endpoint),
            supported_versions=[DRA_SERVICE],
        )

    async def NotifyRegistrationStatus(
        self, request: pluginregistration_v1_pb2.RegistrationStatus, context: Any
    ) -> pluginregistration_v1_pb2.RegistrationStatusResponse:
        if request.plugin_registered:
            _log.info(DriverEvent.REGISTERED, driver=self.driver)
            self.registered.set()
        else:
            _log.error(DriverEvent.REGISTRATION_FAILED, driver=self.driver, error=request.error)
            self.registered.clear()
        return pluginregistration_v1_pb2.RegistrationStatusResponse()


async def serve(socket: Path, service: DRAService | RegistrationService) -> grpc.aio.Server:
    """Start a gRPC server for `service` on the unix socket `socket` (replacing a stale one)."""
    socket.parent.mkdir(parents=True, exist_ok=True)
    socket.unlink(missing_ok=True)
    server = grpc.aio.server()
    if isinstance(service, DRAService):
        dra_v1_pb2_grpc.add_DRAPluginServicer_to_server(service, server)
    else:
        pluginregistration_v1_pb2_grpc.add_RegistrationServicer_to_server(service, server)
    server.add_insecure_port(f"unix://{socket}")
    await server.start()
    return server
