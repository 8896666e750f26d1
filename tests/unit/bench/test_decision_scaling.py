"""bench/decision_scaling.py on a tiny cluster: every pod placed, no device twice, the table.

No timing is asserted: the probe's figures are for docs/benchmarks.md, not for tests.
"""

from __future__ import annotations

import collections

from bench.decision_scaling import Outcome, main, measure_memory, run_size, table

from dra_operator.model import Pod, ResourceClaim


def _held(claims: list[ResourceClaim]) -> collections.Counter[tuple[str, str]]:
    return collections.Counter(
        (result.pool, result.device)
        for claim in claims
        if claim.status.allocation is not None
        for result in claim.status.allocation.devices.results
    )


def test_fill_and_churn_place_every_pod_on_its_own_device() -> None:
    outcome = run_size(3, churn=30, alive=2)
    assert (outcome.nodes, outcome.fill.pods, outcome.churn.pods) == (3, 21, 30)
    caches = outcome.probe.caches
    pods: list[Pod] = [entry.obj for entry in caches.pods]
    claims: list[ResourceClaim] = [entry.obj for entry in caches.claims]
    assert len(pods) == len(claims) == 21 + 2  # the fill stays; churn keeps two alive
    held = _held(claims)
    assert sum(held.values()) == len(claims)
    assert max(held.values()) == 1
    by_uid = {pod.metadata.uid: pod for pod in pods}
    for claim in claims:
        (consumer,) = claim.status.reserved_for
        (result,) = claim.status.allocation.devices.results  # type: ignore[union-attr]
        assert by_uid[consumer.uid].spec.node_name == result.pool  # one pool per node
    assert len(caches.ledger.snapshot().exclusive) == len(claims)


def test_the_table_relates_each_size_to_the_first(capsys: object) -> None:
    small, large = run_size(2, churn=4, alive=1), run_size(4, churn=4, alive=1)
    lines = table([small, large]).splitlines()
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["2", "4"]
    assert lines[2].split("|")[5].strip() == "1.00"
    assert isinstance(small, Outcome)


def test_main_prints_the_profile_of_each_phase(capsys) -> None:  # type: ignore[no-untyped-def]
    main(["--sizes", "2", "--churn", "3", "--alive", "1", "--profile"])
    out = capsys.readouterr().out
    assert "## 2 nodes, fill" in out and "## 2 nodes, churn" in out
    assert out.count("Ordered by: internal time") == 2  # one top 15 per phase


def test_a_prefill_leaves_the_decisions_the_devices_still_free() -> None:
    outcome = run_size(3, churn=5, alive=1, prefill=50)
    assert (outcome.fill.pods, outcome.churn.pods) == (21 - 12, 5)
    held = _held([entry.obj for entry in outcome.probe.caches.claims])
    assert sum(held.values()) == 21 + 1 and max(held.values()) == 1


def test_memory_per_object_is_measured_for_each_step() -> None:
    memory = measure_memory(2, churn=3, alive=1)
    assert memory.nodes == 2
    assert memory.per_node > 0 and memory.per_pod > 0
