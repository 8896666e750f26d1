"""The HTTP endpoints of one operator process: `/metrics`, `/healthz` and `/readyz`.

An aiohttp application on the operator's own event loop, on purpose: if the loop stalls, the
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


def make_app(metrics: Metrics, health: Health) -> web.Application:
    """The three routes, for a caller that runs its own aiohttp server."""
    from aiohttp import web

    async def serve_metrics(request: web.Request) -> web.Response:
        response = web.Response(body=metrics.render())
        response.headers["Content-Type"] = CONTENT_TYPE
        return response

    async def serve_healthz(request: web.Request) -> web.Response:
        return _answer(health.liveness(), request)

    async def serve_readyz(request: web.Request) -> web.Response:
        return _answer(health.readiness(), request)

    app = web.Application()
    app.router.add_get("/metrics", serve_metrics)
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
    """`/metrics`, `/healthz`, `/readyz` on `host:port`, plus the heartbeat, while entered.

    Port 0 picks a free port; `port` tells which. Use as `async with ProbeServer(...) as s:`.
    """

    def __init__(
        self,
        metrics: Metrics,
        health: Health,
        *,
        host: str = "127.0.0.1",
        port: int = 8080,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
    ) -> None:
        self.host = host
        self._requested_port = port
        self._health = health
        self._interval = heartbeat_interval
        self._app = make_app(metrics, health)
        self._runner: web.AppRunner | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self.port = 0

    async def __aenter__(self) -> ProbeServer:
        from aiohttp import web

        runner = web.AppRunner(self._app, access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self._requested_port)
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = runner.addresses[0][1]
        self._heartbeat = asyncio.create_task(
            self._health.run_heartbeat(self._interval), name="heartbeat"
        )
        _log.info(LogEvent.PROBES_SERVING, host=self.host, port=self.port)
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
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
