"""The assembly without a server: events into the caches, and to the plugins while leading.

Covers: a watch event lands in its store whether or not this replica leads; only while `lead()`
runs do plugins exist and see changes, after a `resync`; a term's end shuts its plugins down
and the next term builds new ones; controllers without a builder are reported and skipped;
controllers that yield to kube-controller-manager stop while it holds its Lease and start
afresh when it lets go; our scheduler beside kube-scheduler without the routing policy is
reported unsafe (metric), and stops being so once the policy is there; a claim another
scheduler allocates while ours runs is counted; a claim another claims controller generates
pauses ours (whatever the Leases say) until none was seen for a minute; every kind gets a
reflector (namespaced kinds one per namespace served), whose relist applies its objects, prunes
the rest of its namespace only (even when it found nothing) and is counted; the caches are
synced once every reflector has listed.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
from tests.support.make import MakeClaim, MakeNode, MakePod

from dra_operator import kube
from dra_operator.allocator import Features
from dra_operator.app import Caches, Context, Kind, Operator, ServerInfo, Settings, Upstream
from dra_operator.app._coexistence import HANDOVER_RECHECK
from dra_operator.cluster import Change, ObjectKey

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.looptime]

SERVER = ServerInfo(
    "v1.36.4",
    36,
    {
        k: "v1"
        for k in ("resourceclaims", "resourceclaimtemplates", "deviceclasses", "resourceslices")
    },
    Features.for_kubernetes("1.36"),
)


class Recorder:
    """A plugin that records what it is told."""

    name = "recorder"
    built: ClassVar[list[Recorder]] = []

    def __init__(self, ctx: Context) -> None:
        self.caches: Caches = ctx.caches
        self.changes: list[tuple[Kind, str]] = []
        self.resynced = 0
        self.stopped = False
        self._done = asyncio.Event()
        Recorder.built.append(self)

    def on_change(self, kind: Kind, change: Change[Any]) -> None:
        self.changes.append((kind, str(change.key)))

    def resync(self) -> None:
        self.resynced += 1

    async def run(self) -> None:
        await self._done.wait()

    def shut_down(self) -> None:
        self.stopped = True
        self._done.set()


def node(name: str, rv: str) -> dict[str, Any]:
    return MakeNode().name(name).version(rv).obj()


@pytest.fixture
def operator() -> Operator:
    Recorder.built.clear()
    api = kube.Client(kube.ClusterConfig(server="https://127.0.0.1:1"))  # never called here
    return Operator(
        Settings(), api, SERVER, ["recorder", "eviction"], builders={"recorder": Recorder}
    )


async def test_events_fill_the_caches_and_reach_plugins_only_while_leading(
    operator: Operator,
) -> None:
    operator.handle(Kind.NODES, None, node("a", "1"))
    assert operator.caches.nodes.get(ObjectKey("", "a")) is not None
    assert operator.controllers == ["recorder"]

    term = asyncio.create_task(operator.lead())
    await asyncio.wait_for(operator.leading.wait(), 1)
    (plugin,) = Recorder.built
    assert plugin.resynced == 1
    operator.handle(Kind.NODES, "MODIFIED", node("a", "2"))
    operator.handle(Kind.NODES, "MODIFIED", node("a", "2"))  # same version: no change
    assert plugin.changes == [(Kind.NODES, "a")]

    term.cancel()
    with pytest.raises(asyncio.CancelledError):
        await term
    assert plugin.stopped
    assert not operator.leading.is_set()
    operator.handle(Kind.NODES, "MODIFIED", node("a", "3"))
    assert plugin.changes == [(Kind.NODES, "a")]

    second = asyncio.create_task(operator.lead())
    await asyncio.wait_for(operator.leading.wait(), 1)
    assert len(Recorder.built) == 2 and Recorder.built[1] is not plugin
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second


class Other(Recorder):
    name = "other"


def operator_of(builders: dict[str, Any], *, yield_to: frozenset[str] = frozenset()) -> Operator:
    """An operator running `builders`, whose API is never reached (Events fail quietly)."""
    Recorder.built.clear()
    api = kube.Client(kube.ClusterConfig(server="https://127.0.0.1:1"))
    return Operator(Settings(), api, SERVER, list(builders), builders=builders, yield_to=yield_to)


async def test_controllers_hand_over_to_kube_controller_manager_and_back() -> None:
    operator = operator_of({"recorder": Recorder, "other": Other}, yield_to=frozenset({"recorder"}))
    operator.set_upstream(Upstream(controller_manager=True))
    term = asyncio.create_task(operator.lead())
    await asyncio.wait_for(operator.leading.wait(), 1)
    (other,) = Recorder.built
    assert other.name == "other"
    assert operator.wanted() == ["other"]

    operator.set_upstream(Upstream(controller_manager=False))  # its Lease expired
    await asyncio.sleep(0)
    assert [p.name for p in Recorder.built] == ["other", "recorder"]
    ours = Recorder.built[1]
    assert ours.resynced == 1 and not ours.stopped

    operator.set_upstream(Upstream(controller_manager=True))  # it is back
    await asyncio.sleep(0)
    assert ours.stopped and not other.stopped
    operator.handle(Kind.NODES, None, node("b", "1"))
    assert ours.changes == [] and other.changes == [(Kind.NODES, "b")]

    term.cancel()
    with pytest.raises(asyncio.CancelledError):
        await term
    assert other.stopped


@pytest.mark.parametrize(
    ("upstream", "unsafe"),
    [
        pytest.param(Upstream(scheduler=True), True, id="kube-scheduler-without-routing"),
        pytest.param(Upstream(scheduler=True, routing=True), False, id="routed"),
        pytest.param(Upstream(), False, id="no-kube-scheduler"),
    ],
)
async def test_an_unsafe_configuration_is_counted(upstream: Upstream, unsafe: bool) -> None:
    api = kube.Client(kube.ClusterConfig(server="https://127.0.0.1:1"))  # never called here
    operator = Operator(Settings(), api, SERVER, ["scheduler"])
    operator.set_upstream(upstream)
    assert operator.coexistence.unsafe is unsafe
    page = operator.metrics.render().decode()
    sample = 'dra_operator_unsafe_configuration{reason="kube-scheduler-without-routing"}'
    assert f"{sample} {1.0 if unsafe else 0.0}" in page


def allocated_claim(rv: str, manager: str | None) -> dict[str, Any]:
    made = MakeClaim().uid("u").version(rv).requests([])
    if manager is not None:
        made.managed_by(manager, {"f:status": {"f:allocation": {}}})
        made.allocated("d", "p", "x", request="gpu")
    return made.obj()


async def test_a_claim_another_scheduler_allocates_is_counted() -> None:
    operator = operator_of({"scheduler": Recorder})
    term = asyncio.create_task(operator.lead())
    await asyncio.wait_for(operator.leading.wait(), 1)
    operator.handle(Kind.CLAIMS, None, allocated_claim("1", None))
    operator.handle(Kind.CLAIMS, "MODIFIED", allocated_claim("2", "kube-scheduler"))
    sample = 'dra_operator_foreign_allocations_total{manager="kube-scheduler"} 1.0'
    assert sample in operator.metrics.render().decode()
    term.cancel()
    with pytest.raises(asyncio.CancelledError):
        await term
    await operator.api.close()


class Claims(Recorder):
    name = "claims"


def generated_claim(rv: str, creator: str) -> dict[str, Any]:
    annotation = "resource.kubernetes.io/pod-claim-name"
    owned = {"f:metadata": {"f:annotations": {f"f:{annotation}": {}}}}
    made = MakeClaim().name(f"pod-gpu-{rv}").uid(f"u{rv}").version(rv).requests([])
    return made.annotations({annotation: "gpu"}).managed_by(creator, owned).obj()


async def test_another_claims_creator_pauses_ours_for_a_minute() -> None:
    operator = operator_of({"claims": Claims}, yield_to=frozenset({"claims"}))
    term = asyncio.create_task(operator.lead())
    await asyncio.wait_for(operator.leading.wait(), 1)
    (ours,) = Recorder.built
    operator.handle(Kind.CLAIMS, None, generated_claim("1", "dra-operator"))  # our own
    await asyncio.sleep(0)
    assert not ours.stopped

    operator.handle(Kind.CLAIMS, None, generated_claim("2", "kube-controller-manager"))
    await asyncio.sleep(0)
    assert ours.stopped and operator.wanted() == []

    await asyncio.sleep(30)
    operator.handle(Kind.CLAIMS, None, generated_claim("3", "kube-controller-manager"))
    await asyncio.sleep(59)  # seen again 59 s ago: still paused
    assert len(Recorder.built) == 1
    await asyncio.sleep(2)
    assert len(Recorder.built) == 2 and not Recorder.built[1].stopped
    term.cancel()
    with pytest.raises(asyncio.CancelledError):
        await term


async def test_claims_are_rechecked_on_the_server_only_right_after_a_handover() -> None:
    operator = operator_of({"claims": Claims}, yield_to=frozenset({"claims"}))
    assert not operator.handover_recent()  # no other claims controller ever seen
    operator.set_upstream(Upstream(controller_manager=True))
    await asyncio.sleep(120)
    operator.set_upstream(Upstream(controller_manager=False))  # its Lease expired just now
    assert operator.handover_recent()
    await asyncio.sleep(HANDOVER_RECHECK + 1)
    assert not operator.handover_recent()


async def test_claims_are_rechecked_on_the_server_right_after_leadership_comes_back() -> None:
    """A creation the lost term had in flight may land after the next term begins; the first
    term of the process starts from a fresh LIST and needs no recheck."""
    operator = operator_of({"claims": Claims})
    term = asyncio.create_task(operator.lead())
    await asyncio.wait_for(operator.leading.wait(), 1)
    assert not operator.handover_recent()
    term.cancel()  # the Lease was lost
    with pytest.raises(asyncio.CancelledError):
        await term
    await asyncio.sleep(120)
    term = asyncio.create_task(operator.lead())
    await asyncio.wait_for(operator.leading.wait(), 1)
    assert operator.handover_recent()
    await asyncio.sleep(HANDOVER_RECHECK + 1)
    assert not operator.handover_recent()
    term.cancel()
    with pytest.raises(asyncio.CancelledError):
        await term


async def test_a_relist_that_finds_nothing_prunes_and_is_counted() -> None:
    """Every kind comes through a Reflector, whose every LIST prunes: a relist that returns no
    object (the server holds no node any more) still forgets the cached ones."""
    operator = operator_of({"recorder": Recorder})
    operator.informer.reflected(Kind.NODES, None, [node("a", "1")], "5", False)
    assert "dra_operator_watch_relists_total{" not in operator.metrics.render().decode()

    operator.informer.reflected(Kind.NODES, None, [], "7", True)

    assert operator.caches.nodes.get(ObjectKey("", "a")) is None
    relists = 'dra_operator_watch_relists_total{resource="nodes"} 1.0'
    assert relists in operator.metrics.render().decode()
    await operator.api.close()


async def test_synced_once_every_reflector_has_listed() -> None:
    operator = operator_of({"recorder": Recorder})
    kinds = {reflector.resource.plural for reflector in operator.reflectors}
    assert kinds == {operator.resource(kind).plural for kind in operator.caches.kinds}
    waiting = asyncio.create_task(operator.wait_synced())
    for reflector in operator.reflectors[:-1]:
        reflector.synced.set()
    await asyncio.sleep(1)
    assert not waiting.done()
    operator.reflectors[-1].synced.set()
    await asyncio.wait_for(waiting, 1)
    assert operator.health.readiness()[0].ok  # every cache synced
    await operator.api.close()


def a_pod(namespace: str, name: str, rv: str) -> dict[str, Any]:
    return MakePod().namespace(namespace).name(name).uid(name).version(rv).obj()


async def test_a_reflector_relist_applies_its_objects_and_prunes_its_namespace() -> None:
    Recorder.built.clear()
    api = kube.Client(kube.ClusterConfig(server="https://127.0.0.1:1"))
    settings = Settings(namespaces=("a", "b"))
    operator = Operator(settings, api, SERVER, ["recorder"], builders={"recorder": Recorder})
    scopes = {reflector.scope for reflector in operator.reflectors}
    assert {f"{kind}@{ns}" for kind in ("pods", "resourceclaims") for ns in "ab"} <= scopes
    assert "nodes@*" in scopes  # cluster-scoped: one watch whatever the namespaces
    operator.informer.reflected(
        Kind.PODS, "a", [a_pod("a", "p", "5"), a_pod("a", "q", "6")], "10", False
    )
    operator.informer.reflected(Kind.PODS, "b", [a_pod("b", "p", "7")], "11", False)
    term = asyncio.create_task(operator.lead())
    await asyncio.wait_for(operator.leading.wait(), 1)
    (plugin,) = Recorder.built

    operator.informer.reflected(Kind.PODS, "a", [a_pod("a", "q", "12")], "20", True)

    assert sorted(str(entry.key) for entry in operator.caches.pods) == ["a/q", "b/p"]
    assert plugin.changes == [(Kind.PODS, "a/q"), (Kind.PODS, "a/p")]
    assert 'dra_operator_watch_relists_total{resource="pods"} 1.0' in (
        operator.metrics.render().decode()
    )
    term.cancel()
    with pytest.raises(asyncio.CancelledError):
        await term
