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

from dra_operator.observability import Health, Metrics, ProbeServer, Role

pytestmark = pytest.mark.asyncio(loop_scope="function")

NEVER = 3600.0
"""A heartbeat interval no test lives through: the server stamps once, at start."""


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest_asyncio.fixture(loop_scope="function")
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        yield session


async def get(client: aiohttp.ClientSession, server: ProbeServer, path: str) -> tuple[int, str]:
    async with client.get(f"http://127.0.0.1:{server.port}{path}") as response:
        return response.status, await response.text()


async def test_metrics_serves_the_registry(client: aiohttp.ClientSession) -> None:
    health = Health()
    metrics = Metrics(health=health)
    metrics.api_conflict("ResourceClaim")
    async with (
        ProbeServer(metrics, health, port=0, heartbeat_interval=NEVER) as server,
        client.get(f"http://127.0.0.1:{server.port}/metrics") as response,
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
    async with ProbeServer(Metrics(), health, port=0, heartbeat_interval=NEVER) as server:
        assert await get(client, server, "/healthz") == (200, "ok\n")
        clock.now += 30.0  # the loop "stalled" for 30 s: no beat came
        status, text = await get(client, server, "/healthz")
    assert status == 503
    assert text == "[-]event-loop failed: no heartbeat for 30.0s (limit 10s)\ncheck failed\n"


async def test_the_server_runs_the_heartbeat(client: aiohttp.ClientSession) -> None:
    clock = FakeClock()
    health = Health(stale_after=10.0, clock=clock)
    clock.now += 30.0  # stale before the server starts
    async with ProbeServer(Metrics(), health, port=0, heartbeat_interval=NEVER) as server:
        assert await get(client, server, "/healthz") == (200, "ok\n")
    assert not [task for task in asyncio.all_tasks() if task.get_name() == "heartbeat"]


async def test_readyz_names_what_is_missing(client: aiohttp.ClientSession) -> None:
    health = Health(caches=["Pod", "ResourceClaim"])
    async with ProbeServer(Metrics(), health, port=0, heartbeat_interval=NEVER) as server:
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
    async with ProbeServer(Metrics(), health, port=0, heartbeat_interval=NEVER) as server:
        status, _ = await get(client, server, "/livez")
    assert status == 404


async def test_two_servers_listen_side_by_side(client: aiohttp.ClientSession) -> None:
    first, second = Metrics(), Metrics()
    first.api_conflict("Pod")
    async with (
        ProbeServer(first, Health(), port=0, heartbeat_interval=NEVER) as one,
        ProbeServer(second, Health(), port=0, heartbeat_interval=NEVER) as two,
    ):
        assert one.port != two.port
        _, page_one = await get(client, one, "/metrics")
        _, page_two = await get(client, two, "/metrics")
    assert 'dra_operator_api_conflicts_total{kind="Pod"} 1.0' in page_one
    assert 'kind="Pod"' not in page_two


async def test_the_port_is_closed_after_exit(client: aiohttp.ClientSession) -> None:
    async with ProbeServer(Metrics(), Health(), port=0, heartbeat_interval=NEVER) as server:
        port = server.port
    with pytest.raises(aiohttp.ClientConnectorError):
        await client.get(f"http://127.0.0.1:{port}/healthz")
