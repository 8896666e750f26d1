"""The probe state.

Covers: liveness from the heartbeat age against `stale_after` (with an injected clock); the
heartbeat task stamping until cancelled; readiness as "every declared cache synced and leader
or standby", with the failing checks named; undeclared caches and bad limits refused.
"""

from __future__ import annotations

import asyncio

import pytest

from dra_operator.observability import Check, Health, Role


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("age", "alive"),
    [
        pytest.param(0.0, True, id="fresh"),
        pytest.param(10.0, True, id="at-the-limit"),
        pytest.param(10.5, False, id="stale"),
    ],
)
def test_liveness_follows_the_heartbeat_age(age: float, alive: bool) -> None:
    clock = FakeClock()
    health = Health(stale_after=10.0, clock=clock)
    clock.now += age
    [check] = health.liveness()
    assert check.ok is alive
    assert health.heartbeat_age() == age


def test_a_beat_makes_a_stale_process_alive_again() -> None:
    clock = FakeClock()
    health = Health(stale_after=5.0, clock=clock)
    clock.now += 60.0
    assert str(health.liveness()[0]) == "[-]event-loop failed: no heartbeat for 60.0s (limit 5s)"
    health.beat()
    assert str(health.liveness()[0]) == "[+]event-loop ok"


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.looptime
async def test_the_heartbeat_task_stamps_until_cancelled() -> None:
    clock = FakeClock()
    health = Health(stale_after=5.0, clock=clock)
    clock.now += 60.0
    task = asyncio.create_task(health.run_heartbeat(interval=1.0))
    await asyncio.sleep(0)
    assert health.heartbeat_age() == 0.0
    clock.now += 3.0
    await asyncio.sleep(1.0)  # the loop clock: looptime does not really wait
    assert health.heartbeat_age() == 0.0
    task.cancel()
    await asyncio.wait({task})
    assert task.cancelled()


@pytest.mark.parametrize(
    ("synced", "role", "expected"),
    [
        pytest.param(
            (),
            Role.STARTING,
            [
                Check("caches", False, "waiting for Pod, ResourceClaim"),
                Check("leader-election", False, "not yet leader or standby"),
            ],
            id="nothing-yet",
        ),
        pytest.param(
            ("Pod",),
            Role.LEADER,
            [
                Check("caches", False, "waiting for ResourceClaim"),
                Check("leader-election", True),
            ],
            id="leader-with-a-cache-syncing",
        ),
        pytest.param(
            ("Pod", "ResourceClaim"),
            Role.STARTING,
            [
                Check("caches", True),
                Check("leader-election", False, "not yet leader or standby"),
            ],
            id="synced-but-not-in-the-election",
        ),
    ],
)
def test_not_ready(synced: tuple[str, ...], role: Role, expected: list[Check]) -> None:
    health = Health(caches=["ResourceClaim", "Pod"])
    for kind in synced:
        health.set_cache_synced(kind)
    health.set_role(role)
    assert health.readiness() == expected


@pytest.mark.parametrize("role", [Role.LEADER, Role.STANDBY], ids=["leader", "standby"])
def test_ready_when_synced_and_leader_or_standby(role: Role) -> None:
    health = Health(caches=["Pod"])
    health.set_cache_synced("Pod")
    health.set_role(role)
    assert all(check.ok for check in health.readiness())


def test_a_cache_can_lose_its_sync() -> None:
    health = Health(caches=["Pod"])
    health.set_cache_synced("Pod")
    health.set_cache_synced("Pod", synced=False)
    assert not health.readiness()[0].ok


def test_an_undeclared_cache_is_refused() -> None:
    with pytest.raises(ValueError, match="cache Node was not declared; known: \\['Pod'\\]"):
        Health(caches=["Pod"]).set_cache_synced("Node")


def test_stale_after_must_be_positive() -> None:
    with pytest.raises(ValueError, match="stale_after must be positive, not 0"):
        Health(stale_after=0)
