"""When a Lease counts as held (`LeaseWatch`, the leader elector's rule on our clock).

Covers: no Lease or an empty holder is not held; a record seen for the first time is held for
one duration from then; each renewal starts the duration again; a record that stops changing
expires after its duration (or client-go's default 15 s when it names none).
"""

from __future__ import annotations

from typing import Any

from dra_operator.app import LeaseWatch


def lease(holder: str, renewed: str, rv: str, duration: int | None = 15) -> dict[str, Any]:
    spec: dict[str, Any] = {"holderIdentity": holder, "renewTime": renewed}
    if duration is not None:
        spec["leaseDurationSeconds"] = duration
    return {"metadata": {"resourceVersion": rv}, "spec": spec}


def test_no_lease_or_no_holder_is_not_held() -> None:
    watch = LeaseWatch()
    assert not watch.observe(None, 0.0)
    assert not watch.observe(lease("", "t0", "1"), 0.0)


def test_a_renewed_lease_stays_held_and_a_silent_one_expires() -> None:
    watch = LeaseWatch()
    assert watch.observe(lease("kcm-a", "t0", "1"), 100.0)  # first sight: held from now
    assert watch.observe(lease("kcm-a", "t0", "1"), 115.0)
    assert watch.observe(lease("kcm-a", "t1", "2"), 116.0)  # renewed
    assert watch.observe(lease("kcm-a", "t1", "2"), 131.0)
    assert not watch.observe(lease("kcm-a", "t1", "2"), 131.5)  # holder gone silent


def test_a_lease_without_duration_uses_fifteen_seconds() -> None:
    watch = LeaseWatch()
    assert watch.observe(lease("kcm-a", "t0", "1", duration=None), 0.0)
    assert not watch.observe(lease("kcm-a", "t0", "1", duration=None), 15.5)


def test_a_released_lease_is_free_at_once() -> None:
    watch = LeaseWatch()
    assert watch.observe(lease("kcm-a", "t0", "1"), 0.0)
    assert not watch.observe(lease("", "t1", "2", duration=1), 1.0)
