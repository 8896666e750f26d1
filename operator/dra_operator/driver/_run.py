"""Assemble and run the simulated driver: inventory, checkpoint, slices and the two sockets.

Start order follows upstream's kubelet plugin helper: the DRA socket serves before the
registration socket appears, so the kubelet never registers a plugin it cannot call yet. Stop
order is the reverse: the registration socket goes first (the kubelet then sees the plugin
leave), the slices stay (see `_slices`), the checkpoint is always on disk already.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
from pathlib import Path
from types import TracebackType
from typing import Self

import grpc
from prometheus_client import start_http_server

from dra_operator.driver._checkpoint import Checkpoint
from dra_operator.driver._events import DriverEvent
from dra_operator.driver._grpc import DRAService, RegistrationService, serve
from dra_operator.driver._inventory import Inventory, load_inventory
from dra_operator.driver._metrics import DriverMetrics
from dra_operator.driver._node_allocatable import node_allocatable_document
from dra_operator.driver._prepare import Preparer
from dra_operator.driver._slices import SlicePublisher
from dra_operator.kube import Client, JSONObject, dra
from dra_operator.observability import get_logger

__all__ = ["Driver", "DriverSettings", "run_driver"]

CLAIMS = dra("resourceclaims")
_STOP_GRACE = 5.0  # seconds in-flight RPCs get to finish on shutdown

_log = get_logger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DriverSettings:
    """The command line of `dra-operator driver`, with upstream's default paths."""

    node: str
    devices: Path
    driver: str | None = None
    kubelet_root: Path = Path("/var/lib/kubelet")
    cdi_dir: Path = Path("/var/run/cdi")
    state_dir: Path | None = None
    kubeconfig: Path | None = None
    metrics_port: int | None = None
    node_allocatable: tuple[str, ...] = ()  # `--node-allocatable` profiles


@dataclasses.dataclass(frozen=True, slots=True)
class Sockets:
    registration: Path
    dra: Path
    state_dir: Path


def sockets(settings: DriverSettings, driver: str) -> Sockets:
    """Where the kubelet looks: plugins_registry/<driver>-reg.sock, plugins/<driver>/dra.sock."""
    plugin_dir = settings.kubelet_root / "plugins" / driver
    return Sockets(
        registration=settings.kubelet_root / "plugins_registry" / f"{driver}-reg.sock",
        dra=plugin_dir / "dra.sock",
        state_dir=settings.state_dir or plugin_dir,
    )


class Driver:
    """A running driver; `async with Driver(settings, inventory, api):` serves until exit."""

    def __init__(self, settings: DriverSettings, inventory: Inventory, api: Client) -> None:
        self.settings = settings
        self.inventory = inventory
        self.api = api
        self.paths = sockets(settings, inventory.driver)
        self.metrics = DriverMetrics()
        self.checkpoint = Checkpoint.load(self.paths.state_dir)
        self.preparer = Preparer(
            inventory, self.checkpoint, settings.cdi_dir, self._read_claim, self.metrics
        )
        self.publisher = SlicePublisher(api, inventory, self.metrics)
        self.registration = RegistrationService(inventory.driver, self.paths.dra)
        self._servers: list[tuple[grpc.aio.Server, Path]] = []
        self._publishing: asyncio.Task[None] | None = None

    async def _read_claim(self, namespace: str, name: str) -> JSONObject:
        return await self.api.get(CLAIMS, name, namespace=namespace)

    async def __aenter__(self) -> Self:
        self.settings.cdi_dir.mkdir(parents=True, exist_ok=True)
        self.metrics.prepared_claims.set(len(list(self.checkpoint)))
        self._publishing = asyncio.create_task(self.publisher.run(), name="slices")
        for socket, service in (
            (self.paths.dra, DRAService(self.preparer)),
            (self.paths.registration, self.registration),
        ):
            self._servers.append((await serve(socket, service), socket))
        _log.info(
            DriverEvent.STARTED,
            driver=self.inventory.driver,
            node=self.inventory.node,
            devices=len(self.inventory.devices),
            registration=str(self.paths.registration),
            endpoint=str(self.paths.dra),
            prepared=len(list(self.checkpoint)),
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for server, socket in reversed(self._servers):
            await server.stop(_STOP_GRACE)
            socket.unlink(missing_ok=True)
        self._servers.clear()
        if self._publishing is not None:
            self._publishing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._publishing
        _log.info(DriverEvent.STOPPED, driver=self.inventory.driver, node=self.inventory.node)


async def run_driver(settings: DriverSettings) -> None:
    """Run until SIGTERM or SIGINT. The inventory is read first: a bad file raises
    InvalidObjectError before anything is published or served."""
    document = node_allocatable_document(settings.node_allocatable)
    inventory = load_inventory(
        settings.devices,
        node=settings.node,
        driver=settings.driver,
        extra=() if document is None else (document,),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with (
        Client.from_kubeconfig(settings.kubeconfig) as api,
        Driver(settings, inventory, api) as driver,
    ):
        if settings.metrics_port is not None:
            start_http_server(settings.metrics_port, registry=driver.metrics.registry)
        await stop.wait()
