"""A TCP proxy of the tests' own, on loopback, between the operator and the API server.

It relays bytes (TLS passes through untouched) and injects the connection faults real
networks have, for as long as a test says:
  cut      every open connection is reset, and new ones are reset on accept
  stall    connections stay open but no byte moves either way (a half-open peer)
  latency  every chunk waits `delay` seconds before it is relayed
`heal()` ends a fault. `kubeconfig` writes a copy of a kubeconfig that points at the proxy
(the serving certificate names 127.0.0.1, so TLS still verifies).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import yaml

_CHUNK = 65536


class FaultProxy:
    """Relay 127.0.0.1:<port> to `upstream` (host, port); see the module docstring."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = 0
        self.delay = 0.0
        self.cutting = False
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.connections = 0  # accepted so far
        self.resets = 0  # connections reset by `cut`
        self._open: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._reset_all()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def kubeconfig(self, source: Path, target: Path) -> Path:
        doc: dict[str, Any] = yaml.safe_load(source.read_text())
        for cluster in doc["clusters"]:
            cluster["cluster"]["server"] = f"https://127.0.0.1:{self.port}"
        target.write_text(yaml.safe_dump(doc, sort_keys=False))
        target.chmod(0o600)
        return target

    # -- faults -------------------------------------------------------------------------------

    def cut(self) -> None:
        self.cutting = True
        self._reset_all()

    def stall(self) -> None:
        self.flowing.clear()

    def latency(self, delay: float) -> None:
        self.delay = delay

    def heal(self) -> None:
        self.cutting = False
        self.delay = 0.0
        self.flowing.set()

    # -- relaying -----------------------------------------------------------------------------

    def _reset_all(self) -> None:
        for writer in list(self._open):
            self.resets += 1
            writer.transport.abort()
        self._open.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.cutting:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        self._open.update((writer, up_writer))
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pump(source, sink))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while chunk := await source.read(_CHUNK):
                await self.flowing.wait()
                if self.delay:
                    await asyncio.sleep(self.delay)
                if sink.transport.is_closing():
                    break
                sink.write(chunk)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._open.discard(sink)
            with contextlib.suppress(Exception):
                sink.transport.abort() if self.cutting else sink.close()
