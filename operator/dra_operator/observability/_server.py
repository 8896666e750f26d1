"""The HTTP endpoints of one operator process: `/metrics`, `/healthz` and `/readyz`.

aiohttp applications on the operator's own event loop, on purpose: if the loop stalls, the
probes stall with it and the kubelet notices. `ProbeServer` owns the heartbeat task as well, so
starting the server is all it takes for liveness to mean something.

Probe answers follow kube-apiserver's: 200 with `ok`, or 503 with one `[+]`/`[-]` line per check;
`?verbose` lists the checks on success too. Access logging is off: a probe every few seconds
would drown the decisions the log is for. aiohttp is imported when a server is built, not with
the package, so a CLI command that only configures logging does not pay for it.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import TYPE_CHECKING

from dra_operator.observability._health import HEARTBEAT_INTERVAL, Check, Health
from dra_operator.observability._logging import LogEvent, get_logger
from dra_operator.observability._metrics import CONTENT_TYPE, Metrics

if TYPE_CHECKING:
    from aiohttp import web

_log = get_logger(__name__)


Address = tuple[str, int]
"""(host, port) to listen on; host "" means every interface, port 0 a free port."""


def parse_bind_address(text: str) -> Address | None:
    """controller-runtime's flag syntax: `host:port`, `:port` (every interface), `0` (off)."""
    if text == "0":
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"bind address must be host:port, :port or 0, not {text!r}")
    return host.strip("[]"), int(port)


def make_app(metrics: Metrics | None, health: Health | None) -> web.Application:
    """The routes of the parts given, for a caller that runs its own aiohttp server."""
    from aiohttp import web

    app = web.Application()
    if metrics is not None:
        page = metrics  # a name mypy keeps narrowed inside the closure

        async def serve_metrics(request: web.Request) -> web.Response:
            response = web.Response(body=page.render())
            response.headers["Content-Type"] = CONTENT_TYPE
            return response

        app.router.add_get("/metrics", serve_metrics)
    if health is not None:
        probes = health

        async def serve_healthz(request: web.Request) -> web.Response:
            return _answer(probes.liveness(), request)

        async def serve_readyz(request: web.Request) -> web.Response:
            return _answer(probes.readiness(), request)

        app.router.add_get("/healthz", serve_healthz)
        app.router.add_get("/readyz", serve_readyz)
    return app


def _answer(checks: list[Check], request: web.Request) -> web.Response:
    from aiohttp import web

    ok = all(check.ok for check in checks)
    if ok and "verbose" not in request.query:
        text = "ok\n"
    else:
        text = "".join(f"{check}\n" for check in checks)
        text += "ok\n" if ok else "check failed\n"
    return web.Response(text=text, status=200 if ok else 503)


class ProbeServer:
    """`/metrics` on one address and `/healthz`, `/readyz` on another (or the same), plus the
    heartbeat, while entered: `async with ProbeServer(...) as server:`.

    `health_address=None` serves the probes next to the metrics; `metrics_address=None` (the
    flag value `0`) serves no metrics. Port 0 picks a free port; `metrics_port` and
    `health_port` tell which after entering.
    """

    def __init__(
        self,
        metrics: Metrics,
        health: Health,
        *,
        metrics_address: Address | None = ("127.0.0.1", 8080),
        health_address: Address | None = None,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
    ) -> None:
        self._health = health
        # (address, metrics served there, health served there); one or two listeners
        self._listeners: list[tuple[Address, Metrics | None, Health | None]]
        if health_address is None:
            if metrics_address is None:
                raise ValueError("probe server: the probes need an address when metrics are off")
            self._listeners = [(metrics_address, metrics, health)]
        elif metrics_address is None:
            self._listeners = [(health_address, None, health)]
        else:
            self._listeners = [(metrics_address, metrics, None), (health_address, None, health)]
        self._interval = heartbeat_interval
        self._runners: list[web.AppRunner] = []
        self._heartbeat: asyncio.Task[None] | None = None
        self.metrics_port = 0
        self.health_port = 0

    async def __aenter__(self) -> ProbeServer:
        try:
            for address, metrics, health in self._listeners:
                port = await self._serve(address, metrics, health)
                if metrics is not None:
                    self.metrics_port = port
                if health is not None:
                    self.health_port = port
        except BaseException:
            await self._cleanup()
            raise
        self._heartbeat = asyncio.create_task(
            self._health.run_heartbeat(self._interval), name="heartbeat"
        )
        _log.info(
            LogEvent.PROBES_SERVING, metrics_port=self.metrics_port, health_port=self.health_port
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            # wait() never raises the task's CancelledError, so ours still propagates
            await asyncio.wait({self._heartbeat})
            self._heartbeat = None
        await self._cleanup()

    async def _serve(self, address: Address, metrics: Metrics | None, health: Health | None) -> int:
        from aiohttp import web

        runner = web.AppRunner(make_app(metrics, health), access_log=None)
        await runner.setup()
        self._runners.append(runner)
        host, port = address
        await web.TCPSite(runner, host or None, port).start()
        bound: int = runner.addresses[0][1]
        return bound

    async def _cleanup(self) -> None:
        while self._runners:
            await self._runners.pop().cleanup()
