"""Scenario 2: watch expiry. The operator's watches resume after etcd compacted their history.

The apiserver runs without its watch cache (`--watch-cache=false`), so a resumed watch is
served by etcd itself and a compacted resourceVersion answers "410 Gone", as client-go meets
it after long disconnects. The operator talks through the tests' `FaultProxy`: its
connections are cut, pods it had bound are deleted and new ones created while it sees
nothing, etcd is compacted, the connections heal. The watches get 410 and list again; the
deletions it never saw as events must still reach it (their claims deleted, their devices
free), and nothing may be processed twice. The relist shows in the operator's log
(`watch.relisted`, per kind); how long it took after the heal is reported.
"""

from __future__ import annotations

import asyncio
import time
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
    per_round = pods // rounds
    relists: list[float] = []
    for round_ in range(rounds):
        first = round_ * per_round
        await burst.create(first, per_round)
        await burst.wait_bound(len(burst.created) - len(burst.deleted))
        seen = operator.output().count("watch.relisted")
        proxy.cut()
        # Unseen by the operator: two of its pods go, their claims must follow.
        await burst.delete([f"p-{first:05d}", f"p-{first + 1:05d}"])
        await asyncio.to_thread(compact_etcd, plane.etcd_url)
        proxy.heal()
        healed = time.monotonic()

        def relisted(before: int = seen) -> bool:
            return operator.output().count("watch.relisted") > before

        await wait_for(relisted, timeout=120, what="the operator to list again after 410 Gone")
        relists.append(time.monotonic() - healed)
    figures = await burst.check(plane)
    record(
        record_property,
        "watch-expiry",
        runs=1,
        faults=rounds,
        relist_after_heal_s=round(max(relists), 2),
        **figures,
    )
