"""The client's edges that need no API server: URLs, query strings, transport failures.

Covers: resource paths for core and grouped, namespaced and cluster-scoped resources, with
names escaped; a refused connection and a server that never answers surface as APIServerError
(no aiohttp or socket exception leaks, for calls and for watches); closing is idempotent.
The verbs themselves are tested against a real apiserver in tests/integration.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import pytest

from dra_operator.errors import APIServerError, ClientClosedError
from dra_operator.kube import NODES, PODS, Client, ClusterConfig, dra


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(
            PODS.path(namespace="ns", name="p"), "/api/v1/namespaces/ns/pods/p", id="core"
        ),
        pytest.param(
            NODES.path(namespace="ignored", name="n"), "/api/v1/nodes/n", id="cluster-scoped"
        ),
        pytest.param(
            dra("resourceclaims", "v1beta2").path(namespace="ns"),
            "/apis/resource.k8s.io/v1beta2/namespaces/ns/resourceclaims",
            id="grouped-collection",
        ),
        pytest.param(PODS.path(), "/api/v1/pods", id="all-namespaces"),
        pytest.param(
            dra("deviceclasses").path(name="a/b"),
            "/apis/resource.k8s.io/v1/deviceclasses/a%2Fb",
            id="escaped",
        ),
    ],
)
def test_paths(path: str, expected: str) -> None:
    assert path == expected


def test_dra_scopes() -> None:
    assert dra("resourceclaims").namespaced and dra("resourceclaimtemplates").namespaced
    assert not any(
        dra(p).namespaced for p in ("deviceclasses", "resourceslices", "devicetaintrules")
    )
    assert dra("resourceslices", "v1beta1").api_version == "resource.k8s.io/v1beta1"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
async def silent_server() -> AsyncIterator[str]:
    """A TCP listener that accepts and never answers: a hung API server."""

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.close()
    await server.wait_closed()


async def test_refused_connection_is_a_server_error() -> None:
    config = ClusterConfig(server=f"http://127.0.0.1:{_closed_port()}")
    async with Client(config, timeout=5) as api:
        with pytest.raises(APIServerError) as caught:
            await api.get(NODES, "n")
    assert caught.value.reason == "Unreachable"
    assert caught.value.__cause__ is not None


async def test_unanswered_call_times_out_as_a_server_error(silent_server: str) -> None:
    async with Client(ClusterConfig(server=silent_server), timeout=0.2) as api:
        with pytest.raises(APIServerError) as caught:
            await api.list(PODS, namespace="ns")
    assert caught.value.reason == "Timeout"


async def test_watch_transport_failure_is_a_server_error() -> None:
    config = ClusterConfig(server=f"http://127.0.0.1:{_closed_port()}")
    async with Client(config, timeout=5) as api:
        stream = api.watch(PODS, timeout_seconds=1)
        with pytest.raises(APIServerError):
            async with contextlib.aclosing(stream):
                async for _ in stream:
                    pass


async def test_close_is_idempotent() -> None:
    api = Client(ClusterConfig(server="http://127.0.0.1:1"))
    await api.close()
    async with api:
        pass
    await api.close()


async def test_a_client_past_its_async_with_opens_no_session() -> None:
    """A task that outlives the client (a read-back, a relist's prune) must not leave an
    unclosed session behind: its request fails instead of reopening one."""
    async with Client(ClusterConfig(server="http://127.0.0.1:1")) as api:
        pass
    with pytest.raises(ClientClosedError):
        await api.get(PODS, "p", namespace="default")
    assert api._session is None


async def test_requests_take_turns_in_order_under_a_burst() -> None:
    """A request that arrives while busy callers fill every slot, each sending its next request
    the moment one returns, is served after the callers already waiting, not after the burst.
    (aiohttp's own connection limit let the busy callers take each freed connection first.)"""
    from aiohttp import web
    from aiohttp.test_utils import TestServer

    async def answer(request: web.Request) -> web.Response:
        await asyncio.sleep(0)
        return web.json_response({})

    app = web.Application()
    app.router.add_get("/x", answer)
    served: list[str] = []
    async with TestServer(app, host="127.0.0.1") as server:
        config = ClusterConfig(server=str(server.make_url("")).rstrip("/"))
        async with Client(config, max_connections=2) as api:
            stop = asyncio.Event()

            async def busy(name: str) -> None:
                while not stop.is_set():
                    await api.request("GET", "/x")
                    served.append(name)

            callers = [asyncio.create_task(busy(f"busy-{i}")) for i in range(6)]
            while len(served) < 20:
                await asyncio.sleep(0)
            before = len(served)
            await api.request("GET", "/x")
            late = len(served) - before
            stop.set()
            await asyncio.gather(*callers)
    assert late <= 8  # the 6 callers' requests already waiting, and the 2 in flight
