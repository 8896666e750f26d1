"""Example hook: never use the devices named in $DRA_OPERATOR_VETO_DEVICES.

The variable is a comma-separated list of `driver/pool/device` or bare device names, read when
the hook is loaded. A vetoed device is left out of the search (and shown as "vetoed by the
allocation policy" in explanations); a request that needs it cannot be allocated.
"""

from __future__ import annotations

import os

from dra_operator.hooks import DeviceInfo


class VetoByName:
    """filter_device: False for the listed devices."""

    failure_mode = "refuse"  # if this hook fails, rather not use the device

    def __init__(self) -> None:
        listed = os.environ.get("DRA_OPERATOR_VETO_DEVICES", "")
        self.names = frozenset(name.strip() for name in listed.split(",") if name.strip())

    def filter_device(self, info: DeviceInfo) -> bool:
        return info.id.device not in self.names and str(info.id) not in self.names
