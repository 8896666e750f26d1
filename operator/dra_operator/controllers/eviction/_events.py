"""Watch events to work keys for the eviction controller (upstream's `handle*Change`).

Pure mappers over the stores; run on both sides of a change (`Change.objects`) or, for slices
and rules, on the pair. A pod maps to itself; a claim to the pods it is reserved for; a slice
to the pods of the claims whose devices changed NoExecute taints; a rule to itself and the pods
of the claims whose devices either version of it selects (brute force, as upstream).
"""

from __future__ import annotations

from collections.abc import Iterable

from dra_operator.cluster import CLAIMS_BY_DEVICE, Store
from dra_operator.controllers.eviction._controller import EvictionKey
from dra_operator.controllers.eviction._taints import NO_EXECUTE, rule_matches
from dra_operator.model import (
    DeviceID,
    DeviceTaint,
    DeviceTaintRule,
    Pod,
    ResourceClaim,
    ResourceSlice,
)


def keys_for_pod(pod: Pod) -> list[EvictionKey]:
    return [EvictionKey("pod", pod.metadata.namespace, pod.metadata.name)]


def keys_for_claim(claim: ResourceClaim) -> list[EvictionKey]:
    """The pods the claim is reserved for: their eviction time may have moved."""
    return [
        EvictionKey("pod", claim.metadata.namespace, ref.name)
        for ref in claim.status.reserved_for
        if ref.resource == "pods" and ref.api_group == ""
    ]


def _no_execute(s: ResourceSlice | None) -> dict[DeviceID, tuple[DeviceTaint, ...]]:
    if s is None:
        return {}
    return {
        DeviceID(s.driver, s.pool.name, d.name): tuple(
            t for t in d.taints if t.effect == NO_EXECUTE
        )
        for d in s.devices
    }


def changed_devices(old: ResourceSlice | None, new: ResourceSlice | None) -> set[DeviceID]:
    """Devices whose NoExecute taints differ; every device when the pool generation moved."""
    before, after = _no_execute(old), _no_execute(new)
    if old is None or new is None or old.pool.generation != new.pool.generation:
        return set(before) | set(after)
    return {d for d in set(before) | set(after) if before.get(d) != after.get(d)}


def keys_for_devices(
    devices: Iterable[DeviceID], claims: Store[ResourceClaim]
) -> list[EvictionKey]:
    keys: list[EvictionKey] = []
    for device in devices:
        for entry in claims.by_index(CLAIMS_BY_DEVICE, device):
            keys.extend(keys_for_claim(entry.obj))
    return keys


def keys_for_slice(
    old: ResourceSlice | None, new: ResourceSlice | None, claims: Store[ResourceClaim]
) -> list[EvictionKey]:
    return keys_for_devices(changed_devices(old, new), claims)


def keys_for_rule(
    old: DeviceTaintRule | None, new: DeviceTaintRule | None, claims: Store[ResourceClaim]
) -> list[EvictionKey]:
    """The rule's status, and every pod whose claim either version of the rule selects."""
    rules = [r for r in (old, new) if r is not None]
    keys = [EvictionKey("rule", "", new.metadata.name)] if new is not None else []
    for device in claims.index_values(CLAIMS_BY_DEVICE):
        if isinstance(device, DeviceID) and any(rule_matches(r, device) for r in rules):
            keys.extend(keys_for_devices([device], claims))
    return keys
