"""The ledger of allocated devices.

Covers: what counts (exclusive devices, shares with consumed capacity summed per device, admin
access never, shares as exclusive devices without consumable capacity); in-flight allocations
counting from decision until the watch shows our write at or past the written version, or until
rollback; claim deletion; per-pool in-use lists for counters; and, as properties, that the
ledger always equals a recomputation from scratch, that no device of an allocated or in-flight
claim is ever free, and that a rollback restores exactly the state before the decision.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)
from tests.support.counts import property_examples

from dra_operator import errors
from dra_operator.allocator import Ledger, SharedDeviceID
from dra_operator.cluster import DeviceLedger, Store
from dra_operator.cluster._ledger import JOURNAL_LENGTH
from dra_operator.model import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceID,
    DeviceRequestAllocationResult,
    FrozenMap,
    ObjectMeta,
    Quantity,
    ResourceClaim,
    ResourceClaimStatus,
)

GPU0 = DeviceID("gpu.example.com", "node-a", "gpu-0")
GPU1 = DeviceID("gpu.example.com", "node-a", "gpu-1")
NIC0 = DeviceID("nic.example.com", "node-b", "nic-0")


def result(
    device: DeviceID,
    *,
    admin: bool = False,
    share: str | None = None,
    **capacity: str,
) -> DeviceRequestAllocationResult:
    return DeviceRequestAllocationResult(
        request="req",
        driver=device.driver,
        pool=device.pool,
        device=device.device,
        admin_access=admin or None,
        share_id=share,
        consumed_capacity=FrozenMap({k: Quantity.parse(v) for k, v in capacity.items()}),
    )


def allocation(*results: DeviceRequestAllocationResult) -> AllocationResult:
    return AllocationResult(devices=DeviceAllocationResult(results=results))


def claim(uid: str, alloc: AllocationResult | None, rv: str = "1") -> ResourceClaim:
    return ResourceClaim(
        metadata=ObjectMeta(name=f"claim-{uid}", namespace="ns", uid=uid, resource_version=rv),
        status=ResourceClaimStatus(allocation=alloc),
    )


def mem(**sums: str) -> FrozenMap[str, Quantity]:
    """GPU0's consumed capacity as the ledger keys it: bare API names qualified by the driver."""
    return FrozenMap({f"{GPU0.driver}/{k}": Quantity.parse(v) for k, v in sums.items()})


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        pytest.param(
            [result(GPU0), result(NIC0)],
            Ledger(exclusive=frozenset({GPU0, NIC0})),
            id="exclusive-devices",
        ),
        pytest.param([result(GPU0, admin=True)], Ledger(), id="admin-access-is-not-use"),
        pytest.param(
            [result(GPU0, share="s1", memory="4Gi"), result(GPU0, share="s2", memory="2Gi")],
            Ledger(
                shares=frozenset({SharedDeviceID(GPU0, "s1"), SharedDeviceID(GPU0, "s2")}),
                consumed_capacity=FrozenMap({GPU0: mem(memory="6Gi")}),
            ),
            id="shares-sum-their-capacity",
        ),
        pytest.param(
            [result(GPU0, share="s1")],
            Ledger(shares=frozenset({SharedDeviceID(GPU0, "s1")})),
            id="share-without-capacity",
        ),
    ],
)
def test_what_an_allocation_puts_in_use(
    results: list[DeviceRequestAllocationResult], expected: Ledger
) -> None:
    ledger = DeviceLedger()
    ledger.claim_changed(claim("a", allocation(*results)))
    assert ledger.snapshot() == expected


def test_consumed_capacity_is_keyed_as_the_allocator_keys_device_capacity() -> None:
    """A bare name is in the driver's domain; the live ledger must agree with the allocator's
    own `Ledger.from_claims`, or shares never count against the device's capacity."""
    shared = result(GPU0, share="s1", memory="2Gi")
    foreign = DeviceRequestAllocationResult(
        request="req",
        driver=GPU0.driver,
        pool=GPU0.pool,
        device=GPU0.device,
        share_id="s2",
        consumed_capacity=FrozenMap({"other.example.com/links": Quantity.parse("1")}),
    )
    claims = [claim("a", allocation(shared)), claim("b", allocation(foreign))]
    ledger = DeviceLedger()
    for c in claims:
        ledger.claim_changed(c)
    assert ledger.snapshot() == Ledger.from_claims(claims)
    assert ledger.snapshot().consumed_capacity[GPU0] == {
        "gpu.example.com/memory": Quantity.parse("2Gi"),
        "other.example.com/links": Quantity.parse("1"),
    }


def test_shares_are_exclusive_devices_without_consumable_capacity() -> None:
    ledger = DeviceLedger(consumable_capacity=False)
    ledger.claim_changed(claim("a", allocation(result(GPU0, share="s1", memory="1Gi"))))
    assert ledger.snapshot() == Ledger(exclusive=frozenset({GPU0}))


def test_deallocation_and_deletion_free_devices() -> None:
    ledger = DeviceLedger()
    ledger.claim_changed(claim("a", allocation(result(GPU0))))
    ledger.claim_changed(claim("b", allocation(result(GPU1))))
    ledger.claim_changed(claim("a", None, rv="2"))
    ledger.claim_deleted("b")
    assert ledger.snapshot() == Ledger()
    assert ledger.in_use_in_pool("gpu.example.com", "node-a") == frozenset()


def test_in_flight_counts_until_the_watch_shows_the_written_version() -> None:
    ledger = DeviceLedger()
    ledger.claim_changed(claim("a", None, rv="10"))
    ledger.reserve("a", allocation(result(GPU0)))
    assert ledger.is_in_use(GPU0)
    ledger.claim_changed(claim("a", None, rv="11"))  # finalizer added: not our status write yet
    ledger.written("a", "12")
    ledger.claim_changed(claim("a", None, rv="11"))  # a late duplicate of an older version
    assert ledger.is_in_flight("a")
    ledger.claim_changed(claim("a", allocation(result(GPU0)), rv="12"))
    assert not ledger.is_in_flight("a")
    assert ledger.snapshot().exclusive == {GPU0}  # now held by the observed claim


def test_a_watch_event_that_overtook_the_write_response_confirms_at_once() -> None:
    ledger = DeviceLedger()
    ledger.reserve("a", allocation(result(GPU0)))
    ledger.claim_changed(claim("a", allocation(result(GPU0)), rv="7"))
    ledger.written("a", "7")
    assert not ledger.is_in_flight("a")
    assert ledger.is_in_use(GPU0)


def test_rollback_frees_only_what_the_decision_added() -> None:
    ledger = DeviceLedger()
    ledger.claim_changed(claim("a", allocation(result(GPU0, share="s1", memory="1Gi"))))
    before = ledger.snapshot()
    ledger.reserve("b", allocation(result(GPU0, share="s2", memory="3Gi"), result(GPU1)))
    assert ledger.snapshot().consumed_capacity == {GPU0: mem(memory="4Gi")}
    ledger.rollback("b")
    assert ledger.snapshot() == before


def test_deleting_a_claim_drops_its_in_flight_allocation() -> None:
    ledger = DeviceLedger()
    ledger.reserve("a", allocation(result(GPU0)))
    ledger.claim_deleted("a")
    assert not ledger.is_in_flight("a")
    assert ledger.snapshot() == Ledger()


def test_a_claim_cannot_have_two_decisions_in_flight() -> None:
    ledger = DeviceLedger()
    ledger.reserve("a", allocation(result(GPU0)))
    with pytest.raises(errors.TerminalError, match="claim a: an allocation is already in flight"):
        ledger.reserve("a", allocation(result(GPU1)))


def test_in_use_in_pool_lists_each_device_once_however_it_is_used() -> None:
    ledger = DeviceLedger()
    ledger.claim_changed(claim("a", allocation(result(GPU0, share="s1", memory="1Gi"))))
    ledger.claim_changed(claim("b", allocation(result(GPU0, share="s2", memory="1Gi"))))
    ledger.reserve("c", allocation(result(GPU1), result(NIC0, admin=True)))
    assert ledger.in_use_in_pool("gpu.example.com", "node-a") == {GPU0, GPU1}
    assert ledger.in_use_in_pool("nic.example.com", "node-b") == frozenset()


def test_claim_store_changes_feed_the_ledger() -> None:
    claims: Store[ResourceClaim] = Store("resourceclaims", lambda raw: raw["parsed"])
    ledger = DeviceLedger()
    allocated = claim("a", allocation(result(GPU0)), rv="2")
    body = {"metadata": {"namespace": "ns", "name": "claim-a", "resourceVersion": "2"}}
    for event, parsed in (("ADDED", allocated), ("DELETED", allocated)):
        change = claims.apply(event, {**body, "parsed": parsed})
        assert change is not None
        ledger.observe(change)
        assert ledger.is_in_use(GPU0) is (event == "ADDED")


def test_snapshot_is_shared_until_something_changes() -> None:
    ledger = DeviceLedger()
    first = ledger.snapshot()
    assert ledger.snapshot() is first
    revision = ledger.revision
    ledger.claim_changed(claim("a", None))  # nothing allocated: no change
    assert (ledger.snapshot(), ledger.revision) == (first, revision)
    ledger.claim_changed(claim("a", allocation(result(GPU0))))
    assert ledger.snapshot() is not first
    assert ledger.revision > revision


# -- properties --------------------------------------------------------------------------------

DEVICES = [DeviceID("drv", pool, f"dev-{i}") for pool in ("p0", "p1") for i in range(3)]

results_strategy = st.builds(
    lambda device, admin, share, amount: result(
        device, admin=admin, share=share, **({"memory": str(amount)} if share and amount else {})
    ),
    st.sampled_from(DEVICES),
    st.booleans(),
    st.one_of(st.none(), st.sampled_from(["s0", "s1", "s2"])),
    st.integers(min_value=0, max_value=4),
)
decisions = st.lists(results_strategy, max_size=3).map(lambda rs: allocation(*rs))
allocations = st.one_of(st.none(), decisions)
UIDS = st.sampled_from(["u0", "u1", "u2", "u3"])


def recompute(allocs: list[AllocationResult]) -> Ledger:
    """The state from scratch, straight from the definition."""
    exclusive: set[DeviceID] = set()
    shares: set[SharedDeviceID] = set()
    capacity: dict[DeviceID, dict[str, Quantity]] = {}
    for alloc in allocs:
        for r in alloc.devices.results:
            if r.admin_access:
                continue
            device = DeviceID(r.driver, r.pool, r.device)
            if r.share_id is None:
                exclusive.add(device)
                continue
            shares.add(SharedDeviceID(device, r.share_id))
            if r.consumed_capacity:
                totals = capacity.setdefault(device, {})
                for bare, q in r.consumed_capacity.items():
                    name = bare if "/" in bare else f"{r.driver}/{bare}"
                    totals[name] = totals[name] + q if name in totals else q
    return Ledger(
        exclusive=frozenset(exclusive),
        shares=frozenset(shares),
        consumed_capacity=FrozenMap({d: FrozenMap(t) for d, t in capacity.items()}),
    )


class LedgerMachine(RuleBasedStateMachine):
    """Random watch events and decisions against a model of observed and in-flight claims."""

    def __init__(self) -> None:
        super().__init__()
        self.ledger = DeviceLedger()
        self.observed: dict[str, AllocationResult | None] = {}
        self.version: dict[str, int] = {}
        self.in_flight: dict[str, tuple[AllocationResult, int | None]] = {}
        self.clock = 0

    def _confirm(self, uid: str) -> None:
        flight = self.in_flight.get(uid)
        seen = self.version.get(uid)
        if flight and flight[1] is not None and seen is not None and seen >= flight[1]:
            del self.in_flight[uid]

    @rule(uid=UIDS, alloc=allocations)
    def watch_event(self, uid: str, alloc: AllocationResult | None) -> None:
        self.clock += 1
        self.ledger.claim_changed(claim(uid, alloc, rv=str(self.clock)))
        self.observed[uid] = alloc
        self.version[uid] = self.clock
        self._confirm(uid)

    @rule(uid=UIDS)
    def delete(self, uid: str) -> None:
        self.ledger.claim_deleted(uid)
        self.observed.pop(uid, None)
        self.version.pop(uid, None)
        self.in_flight.pop(uid, None)

    @rule(uid=UIDS, alloc=decisions)
    def decide_and_fail(self, uid: str, alloc: AllocationResult) -> None:
        if uid in self.in_flight:
            return
        before = self.ledger.snapshot()
        self.ledger.reserve(uid, alloc)
        self.ledger.rollback(uid)
        assert self.ledger.snapshot() == before

    @rule(uid=UIDS, alloc=decisions)
    def decide(self, uid: str, alloc: AllocationResult) -> None:
        if uid in self.in_flight:
            return
        self.ledger.reserve(uid, alloc)
        self.in_flight[uid] = (alloc, None)

    @precondition(lambda self: bool(self.in_flight))
    @rule(data=st.data())
    def write_succeeded(self, data: st.DataObject) -> None:
        uid = data.draw(st.sampled_from(sorted(self.in_flight)))
        written = self.clock + data.draw(st.integers(min_value=-1, max_value=2))
        self.ledger.written(uid, str(written))
        self.in_flight[uid] = (self.in_flight[uid][0], written)
        self._confirm(uid)

    @precondition(lambda self: bool(self.in_flight))
    @rule(data=st.data())
    def write_failed(self, data: st.DataObject) -> None:
        uid = data.draw(st.sampled_from(sorted(self.in_flight)))
        self.ledger.rollback(uid)
        del self.in_flight[uid]

    @invariant()
    def equals_a_recomputation(self) -> None:
        allocs = [a for a in self.observed.values() if a is not None]
        allocs += [a for a, _ in self.in_flight.values()]
        expected = recompute(allocs)
        snapshot = self.ledger.snapshot()
        assert snapshot == expected

    @invariant()
    def a_pools_snapshot_is_the_whole_one_restricted_to_it(self) -> None:
        whole = self.ledger.snapshot()
        pools = [(GPU0.driver, GPU0.pool), (NIC0.driver, NIC0.pool)]
        for chosen in ([pools[0]], [pools[1]], pools):
            assert self.ledger.snapshot(chosen) == Ledger(
                exclusive=frozenset(d for d in whole.exclusive if (d.driver, d.pool) in chosen),
                shares=frozenset(
                    s for s in whole.shares if (s.device.driver, s.device.pool) in chosen
                ),
                consumed_capacity=FrozenMap(
                    {
                        d: c
                        for d, c in whole.consumed_capacity.items()
                        if (d.driver, d.pool) in chosen
                    }
                ),
            )

    @invariant()
    def no_device_in_use_is_free(self) -> None:
        allocs = [a for a in self.observed.values() if a is not None]
        allocs += [a for a, _ in self.in_flight.values()]
        for alloc in allocs:
            for r in alloc.devices.results:
                if not r.admin_access:
                    assert self.ledger.is_in_use(DeviceID(r.driver, r.pool, r.device))

    @invariant()
    def in_flight_matches(self) -> None:
        for uid in ("u0", "u1", "u2", "u3"):
            assert self.ledger.is_in_flight(uid) == (uid in self.in_flight)


TestLedgerMachine = LedgerMachine.TestCase
TestLedgerMachine.settings = settings(
    max_examples=property_examples(80), stateful_step_count=30, deadline=None
)


@given(st.lists(allocations, max_size=6))
def test_watch_order_does_not_matter(allocs: list[AllocationResult | None]) -> None:
    forward, backward = DeviceLedger(), DeviceLedger()
    for i, alloc in enumerate(allocs):
        forward.claim_changed(claim(f"u{i}", alloc))
    for i, alloc in reversed(list(enumerate(allocs))):
        backward.claim_changed(claim(f"u{i}", alloc))
    assert forward.snapshot() == backward.snapshot()


def test_pools_changed_since_names_the_pools_each_change_touched() -> None:
    ledger = DeviceLedger()
    start = ledger.revision
    assert ledger.pools_changed_since(start) == frozenset()
    ledger.reserve("a", allocation(result(GPU0)))
    middle = ledger.revision
    ledger.claim_changed(claim("b", allocation(result(NIC0))))
    assert ledger.pools_changed_since(start) == {
        ("gpu.example.com", "node-a"),
        ("nic.example.com", "node-b"),
    }
    assert ledger.pools_changed_since(middle) == {("nic.example.com", "node-b")}
    ledger.claim_changed(claim("b", allocation(result(NIC0)), rv="2"))  # same use: no change
    assert ledger.pools_changed_since(ledger.revision) == frozenset()


def test_pools_changed_since_too_long_ago_is_unknown() -> None:
    ledger = DeviceLedger()
    for i in range(JOURNAL_LENGTH + 1):
        ledger.reserve(f"c{i}", allocation(result(GPU0)))
    assert ledger.pools_changed_since(0) is None
    assert ledger.pools_changed_since(1) == {("gpu.example.com", "node-a")}
