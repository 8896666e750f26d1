"""Node-allocatable devices for the simulated driver (`--node-allocatable`, KEP-5517).

Each profile `RESOURCE=COUNTxAMOUNT` (e.g. `cpu=4x1`, `memory=2x4Gi`, `hugepages-2Mi=2x1Gi`)
adds COUNT devices `<resource>-<i>` that each *are* AMOUNT of a node-allocatable resource:
`nodeAllocatableResources: {RESOURCE: {mapping: {deviceMultiplier: AMOUNT}}}`, with the string
attribute `resource` naming it and the quantity capacity `amount`, so a claim selects them by
CEL (`device.attributes["<driver>"].resource == "cpu"`). They are published as one more slice
of the node's pool. Only `cpu`, `memory` and `hugepages-*` can be mapped (API validation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from dra_operator.errors import InvalidObjectError
from dra_operator.model import Quantity

__all__ = ["node_allocatable_document"]

_PROFILE = re.compile(r"^(cpu|memory|hugepages-[0-9A-Za-z]+)=([1-9][0-9]*)x(\S+)$")


def _devices(profile: str) -> list[dict[str, Any]]:
    match = _PROFILE.match(profile)
    if match is None:
        raise InvalidObjectError(
            "--node-allocatable",
            f"{profile!r} is not RESOURCE=COUNTxAMOUNT with RESOURCE cpu, memory or hugepages-*",
        )
    resource, count, amount = match.group(1), int(match.group(2)), match.group(3)
    try:
        quantity = Quantity.parse(amount)
    except InvalidObjectError as exc:
        raise InvalidObjectError("--node-allocatable", f"{profile!r}: {exc.message}") from exc
    if quantity.value <= 0:
        raise InvalidObjectError("--node-allocatable", f"{profile!r}: the amount must be positive")
    return [
        {
            "name": f"{resource}-{index}",
            "attributes": {"resource": {"string": resource}},
            "capacity": {"amount": {"value": amount}},
            "nodeAllocatableResources": {resource: {"mapping": {"deviceMultiplier": amount}}},
        }
        for index in range(count)
    ]


def node_allocatable_document(profiles: Sequence[str]) -> dict[str, Any] | None:
    """The inventory document of the profiles' devices; None without profiles."""
    if not profiles:
        return None
    devices = [device for profile in profiles for device in _devices(profile)]
    names = [d["name"] for d in devices]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidObjectError("--node-allocatable", f"names a resource twice: {repeated[0]}")
    return {"kind": "ResourceSlice", "spec": {"devices": devices}}
