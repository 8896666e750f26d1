"""Devices nominated to a preemptor in the ledger (KEP-5690): held against every other
decision, out of the ledger only for the preemptor's own, dropped on bind, deletion or timeout;
shares by what the preemptor takes. And the ledger's view without a victim's claims."""

from __future__ import annotations

from tests.unit.cluster.test_ledger import GPU0, GPU1, allocation, claim, mem, result

from dra_operator.allocator import SharedDeviceID
from dra_operator.cluster import DeviceLedger
from dra_operator.controllers.scheduler._claim_nomination import ClaimNominations


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_nominated_devices_are_in_use_for_everyone_but_the_preemptor_decision() -> None:
    ledger = DeviceLedger()
    clock = Clock()
    nominations = ClaimNominations(ledger, timeout=10, clock=clock)
    held = nominations.hold("pod-a", "n1", [("claim-a", allocation(result(GPU0)))])
    assert held.devices() == ["gpu.example.com/node-a/gpu-0"]
    assert ledger.snapshot().exclusive == {GPU0}
    assert nominations.release("pod-a") == held
    assert ledger.snapshot().exclusive == frozenset()  # the preemptor's own decision
    assert nominations.restore("pod-a")
    assert ledger.snapshot().exclusive == {GPU0}
    clock.now = 10
    nominations.release("pod-a")
    assert not nominations.restore("pod-a")  # timed out: forgotten
    assert nominations.held("pod-a") is None
    assert ledger.snapshot().exclusive == frozenset()


def test_a_dropped_nomination_frees_exactly_what_it_held() -> None:
    ledger = DeviceLedger()
    ledger.claim_changed(claim("victim", allocation(result(GPU0))))
    nominations = ClaimNominations(ledger)
    nominations.hold("pod-a", "n1", [("claim-a", allocation(result(GPU0), result(GPU1)))])
    ledger.claim_changed(claim("victim", None, rv="2"))  # deallocated by the claims controller
    assert ledger.snapshot().exclusive == {GPU0, GPU1}  # still nominated
    nominations.drop("pod-a")
    assert ledger.snapshot().exclusive == frozenset()


def test_a_share_is_nominated_by_what_the_preemptor_takes() -> None:
    ledger = DeviceLedger()
    nominations = ClaimNominations(ledger)
    share = allocation(result(GPU0, share="s1", memory="4Gi"))
    nominations.hold("pod-a", "n1", [("claim-a", share)])
    snapshot = ledger.snapshot()
    assert snapshot.exclusive == frozenset()
    assert snapshot.shares == {SharedDeviceID(GPU0, "s1")}
    assert snapshot.consumed_capacity[GPU0] == mem(memory="4Gi")


def test_the_view_without_victims_keeps_what_others_hold() -> None:
    ledger = DeviceLedger()
    ledger.claim_changed(claim("victim", allocation(result(GPU0))))
    ledger.claim_changed(claim("other", allocation(result(GPU1))))
    pools = [("gpu.example.com", "node-a")]
    assert ledger.snapshot_without({"victim"}, pools).exclusive == {GPU1}
    assert ledger.snapshot(pools).exclusive == {GPU0, GPU1}  # the ledger itself is unchanged
