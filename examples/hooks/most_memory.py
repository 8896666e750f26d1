"""Example hook: prefer the devices with the most memory.

Load it with `dra-operator run --hook most_memory:MostMemory` (with this directory on
PYTHONPATH) or from a package's entry point of group `dra_operator.hooks`. It only reorders:
a device without a `memory` capacity scores 0 and is still usable.
"""

from __future__ import annotations

from dra_operator.hooks import DeviceInfo


class MostMemory:
    """score_device: the device's `<driver>/memory` capacity in bytes."""

    failure_mode = "ignore"
    timeout = 0.5

    def score_device(self, info: DeviceInfo) -> float:
        found = info.device.capacity.get(f"{info.id.driver}/memory")
        return float(found.value.value) if found is not None else 0.0
