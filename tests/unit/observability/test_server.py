"""The probes and metrics server, served for real on 127.0.0.1 with a free port.

Covers: `/metrics` in Prometheus text 0.0.4 from the operator's registry; `/healthz` failing on
a stale heartbeat and passing once the server's own heartbeat task stamps; `/readyz` listing
failing checks, `ok` when ready, `?verbose`; unknown paths; two servers side by side; the
heartbeat task and the socket gone after exit.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families

from dra_operator.observability import Health, Metrics, ProbeServer, Role, parse_bind_address

NEVER = 3600.0
"""A heartbeat interval no test lives through: the server stamps once, at start."""


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest_asyncio.fixture
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        yield session


def serve(metrics: Metrics, health: Health) -> ProbeServer:
    """Everything on one free port of 127.0.0.1."""
    return ProbeServer(metrics, health, metrics_address=("127.0.0.1", 0), heartbeat_interval=NEVER)


async def get(
    client: aiohttp.ClientSession, server: ProbeServer, path: str, port: int | None = None
) -> tuple[int, str]:
    url = f"http://127.0.0.1:{port or server.metrics_port}{path}"
    async with client.get(url) as response:
        return response.status, await response.text()


async def test_metrics_serves_the_registry(client: aiohttp.ClientSession) -> None:
    health = Health()
    metrics = Metrics(health=health)
    metrics.api_conflict("ResourceClaim")
    async with (
        serve(metrics, health) as server,
        client.get(f"http://127.0.0.1:{server.metrics_port}/metrics") as response,
    ):
        assert response.status == 200
        assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        page = await response.text()
    values = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
    }
    assert values[("dra_operator_api_conflicts_total", (("kind", "ResourceClaim"),))] == 1.0


async def test_healthz_fails_on_a_stale_heartbeat(client: aiohttp.ClientSession) -> None:
    clock = FakeClock()
    health = Health(stale_after=10.0, clock=clock)
    async with serve(Metrics(), health) as server:
        assert await get(client, server, "/healthz") == (200, "ok\n")
        clock.now += 30.0  # the loop "stalled" for 30 s: no beat came
        status, text = await get(client, server, "/healthz")
    assert status == 503
    assert text == "[-]event-loop failed: no heartbeat for 30.0s (limit 10s)\ncheck failed\n"


async def test_the_server_runs_the_heartbeat(client: aiohttp.ClientSession) -> None:
    clock = FakeClock()
    health = Health(stale_after=10.0, clock=clock)
    clock.now += 30.0  # stale before the server starts
    async with serve(Metrics(), health) as server:
        assert await get(client, server, "/healthz") == (200, "ok\n")
    assert not [task for task in asyncio.all_tasks() if task.get_name() == "heartbeat"]


async def test_readyz_names_what_is_missing(client: aiohttp.ClientSession) -> None:
    health = Health(caches=["Pod", "ResourceClaim"])
    async with serve(Metrics(), health) as server:
        status, text = await get(client, server, "/readyz")
        assert status == 503
        assert text == (
            "[-]caches failed: waiting for Pod, ResourceClaim\n"
            "[-]leader-election failed: not yet leader or standby\n"
            "check failed\n"
        )
        health.set_cache_synced("Pod")
        health.set_cache_synced("ResourceClaim")
        health.set_role(Role.STANDBY)
        assert await get(client, server, "/readyz") == (200, "ok\n")
        assert await get(client, server, "/readyz?verbose") == (
            200,
            "[+]caches ok\n[+]leader-election ok\nok\n",
        )


async def test_unknown_paths_are_not_found(client: aiohttp.ClientSession) -> None:
    health = Health()
    async with serve(Metrics(), health) as server:
        status, _ = await get(client, server, "/livez")
    assert status == 404


async def test_two_servers_listen_side_by_side(client: aiohttp.ClientSession) -> None:
    first, second = Metrics(), Metrics()
    first.api_conflict("Pod")
    async with (
        serve(first, Health()) as one,
        serve(second, Health()) as two,
    ):
        assert one.metrics_port != two.metrics_port
        _, page_one = await get(client, one, "/metrics")
        _, page_two = await get(client, two, "/metrics")
    assert 'dra_operator_api_conflicts_total{kind="Pod"} 1.0' in page_one
    assert 'kind="Pod"' not in page_two


async def test_the_port_is_closed_after_exit(client: aiohttp.ClientSession) -> None:
    async with serve(Metrics(), Health()) as server:
        port = server.metrics_port
    with pytest.raises(aiohttp.ClientConnectorError):
        await client.get(f"http://127.0.0.1:{port}/healthz")


async def test_metrics_and_probes_on_separate_ports(client: aiohttp.ClientSession) -> None:
    server = ProbeServer(
        Metrics(),
        Health(),
        metrics_address=("127.0.0.1", 0),
        health_address=("127.0.0.1", 0),
        heartbeat_interval=NEVER,
    )
    async with server:
        assert server.metrics_port != server.health_port
        metrics, health = server.metrics_port, server.health_port
        assert (await get(client, server, "/metrics", metrics))[0] == 200
        assert (await get(client, server, "/healthz", metrics))[0] == 404
        assert await get(client, server, "/healthz", health) == (200, "ok\n")
        assert (await get(client, server, "/metrics", health))[0] == 404


async def test_metrics_can_be_switched_off(client: aiohttp.ClientSession) -> None:
    server = ProbeServer(Metrics(), Health(), metrics_address=None, health_address=("127.0.0.1", 0))
    async with server:
        assert server.metrics_port == 0
        assert (await get(client, server, "/metrics", server.health_port))[0] == 404
        assert (await get(client, server, "/readyz", server.health_port))[0] == 503


def test_the_probes_need_an_address() -> None:
    with pytest.raises(ValueError, match="the probes need an address when metrics are off"):
        ProbeServer(Metrics(), Health(), metrics_address=None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(":8080", ("", 8080), id="every-interface"),
        pytest.param("127.0.0.1:9090", ("127.0.0.1", 9090), id="host-and-port"),
        pytest.param("[::1]:8081", ("::1", 8081), id="ipv6"),
        pytest.param("0", None, id="off"),
    ],
)
def test_parse_bind_address(text: str, expected: tuple[str, int] | None) -> None:
    assert parse_bind_address(text) == expected


@pytest.mark.parametrize("text", ["8080", "host:", ":http", ":70000"])
def test_bad_bind_addresses_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="bind address must be host:port, :port or 0"):
        parse_bind_address(text)
