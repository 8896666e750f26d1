"""Scenario 2: watch expiry. The operator's watches resume after etcd compacted their history.

The apiserver runs without its watch cache (`--watch-cache=false`), so a resumed watch is
served by etcd itself and a compacted resourceVersion answers "410 Gone", as client-go meets
it after long disconnects. The operator talks through the tests' `FaultProxy`: its
connections are cut, pods it had bound are deleted while it sees nothing, etcd is compacted,
the connections heal. Every watch gets 410 and lists again; the deletions it never saw as
events must still reach it (their claims deleted, their devices free), and nothing may be
processed twice. Every other round deletes all the burst's pods, so that the pods' relist
returns nothing at all: the relist must be seen (and the cache pruned) all the same.

The proof that each watch relisted is the operator's own account: one `watch.relisted` log
line per kind and round, for every kind its `cache.synced` line names (kinds with no object,
such as DeviceTaintRules, relist empty every round). How long the last kind took after the
heal is reported.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.chaos.conftest import Operators, Proxies
from tests.chaos.harness import Burst, compact_etcd, record, scale
from tests.support.controlplane import running_control_plane
from tests.support.operator import wait_for

from dra_operator import controlplane
from dra_operator.kube import Client

pytestmark = pytest.mark.controlplane


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[controlplane.ControlPlaneState]:
    with running_control_plane(tmp_path_factory.mktemp("expiry"), ["--watch-cache=false"]) as state:
        yield state


def events(output: str, name: str) -> list[dict[str, object]]:
    """The operator's JSON log lines of event `name`."""
    found = []
    for line in output.splitlines():
        if f'"{name}"' in line and line.startswith("{"):
            entry = json.loads(line)
            if entry.get("event") == name:
                found.append(entry)
    return found


def watched(output: str) -> set[str]:
    """The kinds the operator watches (`cache.synced` logs each one's object count); none
    before its caches synced."""
    synced = events(output, "cache.synced")[:1]
    return {key for entry in synced for key, value in entry.items() if isinstance(value, int)}


def relists(output: str) -> Counter[str]:
    return Counter(str(entry["resource"]) for entry in events(output, "watch.relisted"))


async def test_watches_resumed_after_compaction_relist_and_miss_nothing(
    plane: controlplane.ControlPlaneState,
    admin: Client,
    proxies: Proxies,
    operators: Operators,
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    pods = scale(30, 200)
    rounds = scale(2, 10)
    burst = await Burst.prepare(admin, nodes=3, devices_per_node=pods // 3 + 2)
    proxy = await proxies(plane.server)
    kubeconfig = proxy.kubeconfig(plane.operator_kubeconfig, tmp_path / "proxied.kubeconfig")
    operator = operators(kubeconfig, burst.namespace)
    operator.start("chaos")
    kinds = await wait_for(lambda: watched(operator.output()), what="the caches synced")
    per_round = pods // (rounds + 1)
    relist_times: list[float] = []
    emptied = 0
    for round_ in range(rounds):
        await burst.create(round_ * per_round, per_round)
        await burst.wait_bound(len(burst.created) - len(burst.deleted))
        before = relists(operator.output())
        proxy.cut()
        # Unseen by the operator: two of its pods go, or all of them; their claims must follow.
        live = sorted(set(burst.created) - burst.deleted)
        gone = live if round_ % 2 else live[:2]
        emptied += gone == live
        await burst.delete(gone)
        await asyncio.to_thread(compact_etcd, plane.etcd_url)
        proxy.heal()
        healed = time.monotonic()

        def not_relisted(before: Counter[str] = before) -> set[str]:
            now = relists(operator.output())
            return {kind for kind in kinds if now[kind] <= before[kind]}

        try:
            await wait_for(lambda: not not_relisted(), timeout=120, what="relists")
        except pytest.fail.Exception:
            pytest.fail(f"no relist after 410 seen for {sorted(not_relisted())}")
        relist_times.append(time.monotonic() - healed)
    # A last wave after the heal: bound beside (or on the devices of) the pods deleted unseen.
    await burst.create(rounds * per_round, per_round)
    figures = await burst.check(plane)
    record(
        record_property,
        "watch-expiry",
        runs=1,
        faults=rounds,
        empty_pod_relists=emptied,
        kinds_relisted=len(kinds),
        relist_after_heal_s=round(max(relist_times), 2),
        **figures,
    )
