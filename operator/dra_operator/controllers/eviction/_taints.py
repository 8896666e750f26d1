"""When a pod must go: NoExecute device taints, tolerations and eviction times (sans I/O).

Upstream's device-taint-eviction controller (upstream-dra.md §5.4), as pure functions:

* the taints of an allocated device are those in its current slice entry (only slices at the
  pool's highest generation count) plus every DeviceTaintRule whose selector matches it by
  driver/pool/device equality; a rule without a selector matches nothing;
* of these only NoExecute taints evict; a toleration in the allocation result delays the
  eviction only if its effect is exactly NoExecute and it tolerates the taint; one such
  toleration without seconds keeps the pod forever, otherwise the pod goes at
  `timeAdded + min(tolerationSeconds)` (negatives count as 0), at once without any;
* a pod's eviction time is the earliest over its claims that are allocated and reserved for
  its UID; the reasons are the taints that produced that time.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dra_operator.model import (
    DeviceID,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
    Pod,
    ResourceClaim,
    ResourceSlice,
    tolerates,
)

NO_EXECUTE = "NoExecute"


@dataclass(frozen=True, slots=True, order=True)
class SliceTaint:
    """A taint published in a ResourceSlice: the device and the taint's index there."""

    device: DeviceID
    index: int


@dataclass(frozen=True, slots=True, order=True)
class RuleTaint:
    """A taint added by a DeviceTaintRule, named by the rule (and its UID)."""

    name: str
    uid: str


Reason = RuleTaint | SliceTaint


@dataclass(frozen=True, slots=True)
class Eviction:
    """When a pod (or claim) must go, and which taints say so (rules first, by name)."""

    at: datetime.datetime
    reasons: tuple[Reason, ...]

    @property
    def rules(self) -> tuple[RuleTaint, ...]:
        return tuple(r for r in self.reasons if isinstance(r, RuleTaint))


def rule_matches(rule: DeviceTaintRule, device: DeviceID) -> bool:
    """Upstream's `ruleMatchesDevice`: every selector field given must be equal."""
    selector = rule.device_selector
    if selector is None:
        return False
    return (
        (selector.driver is None or selector.driver == device.driver)
        and (selector.pool is None or selector.pool == device.pool)
        and (selector.device is None or selector.device == device.device)
    )


def current_slices(slices: Iterable[ResourceSlice]) -> list[ResourceSlice]:
    """The slices of each pool at that pool's highest generation (older ones are stale)."""
    newest: dict[tuple[str, str], int] = {}
    found = list(slices)
    for s in found:
        pool = (s.driver, s.pool.name)
        newest[pool] = max(newest.get(pool, s.pool.generation), s.pool.generation)
    return [s for s in found if s.pool.generation == newest[(s.driver, s.pool.name)]]


def slice_taints(slices: Iterable[ResourceSlice]) -> dict[DeviceID, tuple[DeviceTaint, ...]]:
    """NoExecute taints per published device, from the current slices only."""
    taints: dict[DeviceID, tuple[DeviceTaint, ...]] = {}
    for s in current_slices(slices):
        for device in s.devices:
            found = tuple(t for t in device.taints if t.effect == NO_EXECUTE)
            if found:
                taints[DeviceID(s.driver, s.pool.name, device.name)] = found
    return taints


def _deadline(
    taint: DeviceTaint, tolerations: Iterable[DeviceToleration], now: datetime.datetime
) -> datetime.datetime | None:
    """When `taint` evicts a user of a device allocated with `tolerations`; None: never."""
    seconds: list[int] = []
    for toleration in tolerations:
        if toleration.effect != NO_EXECUTE or not tolerates(toleration, taint):
            continue
        if toleration.toleration_seconds is None:
            return None
        seconds.append(max(toleration.toleration_seconds, 0))
    # The server defaults timeAdded; an object without one is treated as tainted just now.
    added = taint.time_added or now
    if not seconds:
        return added
    try:
        return added + datetime.timedelta(seconds=min(seconds))
    except OverflowError:  # int64 seconds reach past year 9999: that is never, too
        return None


def claim_eviction(
    claim: ResourceClaim,
    published: Callable[[DeviceID], tuple[DeviceTaint, ...]],
    rules: Iterable[DeviceTaintRule],
    now: datetime.datetime,
) -> Eviction | None:
    """Upstream's `claimEvictionTime`: the earliest deadline over the allocated devices.

    `published(device)` gives the NoExecute taints the device's current slice entry carries.
    """
    allocation = claim.status.allocation
    if allocation is None:
        return None
    evicting = [r for r in rules if r.taint.effect == NO_EXECUTE]
    best: datetime.datetime | None = None
    reasons: set[Reason] = set()
    for result in allocation.devices.results:
        device = DeviceID(result.driver, result.pool, result.device)
        candidates: list[tuple[Reason, DeviceTaint]] = [
            (RuleTaint(r.metadata.name, r.metadata.uid), r.taint)
            for r in evicting
            if rule_matches(r, device)
        ]
        candidates += [(SliceTaint(device, i), t) for i, t in enumerate(published(device))]
        for reason, taint in candidates:
            at = _deadline(taint, result.tolerations, now)
            if at is None:
                continue
            if best is None or at < best:
                best, reasons = at, {reason}
            elif at == best:
                reasons.add(reason)
    if best is None:
        return None
    return Eviction(best, _ordered(reasons))


def _ordered(reasons: Iterable[Reason]) -> tuple[Reason, ...]:
    rules = sorted(r for r in reasons if isinstance(r, RuleTaint))
    published = sorted(
        (r for r in reasons if isinstance(r, SliceTaint)),
        key=lambda r: (r.device.driver, r.device.pool, r.device.device, r.index),
    )
    return (*rules, *published)


def is_reserved_for(claim: ResourceClaim, pod: Pod) -> bool:
    return any(
        ref.resource == "pods" and ref.api_group == "" and ref.uid == pod.metadata.uid
        for ref in claim.status.reserved_for
    )


def pod_eviction(
    pod: Pod,
    claims: Iterable[ResourceClaim],
    eviction_of: Callable[[ResourceClaim], Eviction | None],
) -> Eviction | None:
    """The earliest eviction over the pod's allocated claims reserved for it; None: stays.

    Pods not yet scheduled are left alone, as upstream's `handlePod` does.
    """
    if not pod.spec.node_name:
        return None
    best: Eviction | None = None
    for claim in claims:
        if claim.status.allocation is None or not is_reserved_for(claim, pod):
            continue
        eviction = eviction_of(claim)
        if eviction is None:
            continue
        if best is None or eviction.at < best.at:
            best = eviction
        elif eviction.at == best.at:
            best = Eviction(best.at, _ordered({*best.reasons, *eviction.reasons}))
    return best
