"""Lease-based leader election (`app.LeaseElector`) against the real API server.

Covers: one of two candidates leads and keeps renewing while the other waits; a leader whose
Lease is taken over (renewals fail past the renew deadline) stops leading, its `lead()` is
cancelled; a stopped leader releases the Lease, so the other candidate leads without waiting
for it to expire. Runs under the operator identity, i.e. the deploy/ ClusterRole.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.support.operator import wait_for

from dra_operator.app import LeaderElection, LeaseElector
from dra_operator.kube import LEASES, Client

pytestmark = pytest.mark.controlplane


class Candidate:
    """An elector plus a `lead()` that records whether it runs and how it ended."""

    def __init__(self, api: Client, namespace: str, identity: str, **timing: float) -> None:
        config = LeaderElection(
            namespace=namespace,
            name="election",
            **({"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.25} | timing),
        )
        self.elector = LeaseElector(api, config, identity)
        self.leading = asyncio.Event()
        self.stopped_leading = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def lead(self) -> None:
        self.leading.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.leading.clear()
            self.stopped_leading.set()

    def start(self) -> Candidate:
        self.task = asyncio.create_task(self.elector.run(self.lead))
        return self

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


@pytest.fixture
async def candidates(operator_api: Client, namespace: str) -> AsyncIterator[list[Candidate]]:
    made: list[Candidate] = []
    yield made
    for candidate in made:
        await candidate.stop()


async def lease(api: Client, namespace: str) -> dict[str, Any]:
    return await api.get(LEASES, "election", namespace=namespace)


async def test_one_leads_and_renews_while_the_other_waits(
    operator_api: Client, admin_api: Client, namespace: str, candidates: list[Candidate]
) -> None:
    first = Candidate(operator_api, namespace, "first").start()
    candidates.append(first)
    await wait_for(lambda: first.leading.is_set(), what="the first candidate to lead")
    second = Candidate(operator_api, namespace, "second").start()
    candidates.append(second)

    seen: set[str] = set()

    async def renewed_three_times() -> bool:
        spec = (await lease(admin_api, namespace))["spec"]
        assert spec["holderIdentity"] == "first"
        seen.add(spec["renewTime"])
        return len(seen) >= 3

    await wait_for(renewed_three_times, what="three renewals by the leader")
    assert not second.leading.is_set()


async def test_a_leader_that_cannot_renew_stops_leading(
    operator_api: Client, admin_api: Client, namespace: str, candidates: list[Candidate]
) -> None:
    leader = Candidate(operator_api, namespace, "leader").start()
    candidates.append(leader)
    await wait_for(lambda: leader.leading.is_set(), what="the candidate to lead")

    # Someone else takes the Lease (an admin, as a partitioned leader would see it).
    current = await lease(admin_api, namespace)
    current["spec"] |= {"holderIdentity": "usurper", "leaseDurationSeconds": 3600}
    await admin_api.update(LEASES, current)

    await wait_for(lambda: leader.stopped_leading.is_set(), what="the leader to stop leading")
    assert not leader.leading.is_set()
    assert (await lease(admin_api, namespace))["spec"]["holderIdentity"] == "usurper"


async def test_a_stopped_leader_releases_the_lease(
    operator_api: Client, admin_api: Client, namespace: str, candidates: list[Candidate]
) -> None:
    # A Lease duration far beyond the test timeout: only the release lets the second lead.
    first = Candidate(operator_api, namespace, "first", lease_duration=3600).start()
    candidates.append(first)
    await wait_for(lambda: first.leading.is_set(), what="the first candidate to lead")
    second = Candidate(operator_api, namespace, "second").start()
    candidates.append(second)

    await first.stop()

    assert first.stopped_leading.is_set()
    await wait_for(lambda: second.leading.is_set(), what="the second candidate to lead")
    spec = (await lease(admin_api, namespace))["spec"]
    assert spec["holderIdentity"] == "second"
    assert spec["leaseTransitions"] == 1
