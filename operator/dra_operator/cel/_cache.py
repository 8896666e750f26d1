"""Per-device selector results, keyed by (expression, features, device identity + generation)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

from dra_operator.cel._device import DeviceView
from dra_operator.cel._selector import CELFeatures, CompiledSelector
from dra_operator.errors import CELRuntimeError

_Outcome = bool | CELRuntimeError


class ResultCache:
    """Remembers `matches` outcomes, errors included (they are deterministic and fatal).

    `device_key` must change whenever the device may have: upstream-style
    `(slice uid, slice generation, device name)`. Entries are grouped per device so that a
    device's results leave together, least recently used first, once `max_devices` is passed.
    """

    def __init__(self, max_devices: int = 65536) -> None:
        self.max_devices = max_devices
        self._devices: OrderedDict[Hashable, dict[tuple[str, CELFeatures], _Outcome]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def matches(self, selector: CompiledSelector, device: DeviceView, device_key: Hashable) -> bool:
        key = (selector.expression, selector.features)
        with self._lock:
            results = self._devices.get(device_key)
            if results is None:
                results = self._devices[device_key] = {}
                while len(self._devices) > self.max_devices:
                    self._devices.popitem(last=False)
            else:
                self._devices.move_to_end(device_key)
            outcome = results.get(key)
        if outcome is None:
            try:
                outcome = selector.matches(device)
            except CELRuntimeError as exc:
                outcome = exc
            with self._lock:
                results[key] = outcome
        if isinstance(outcome, CELRuntimeError):
            raise outcome
        return outcome

    def __len__(self) -> int:
        return sum(len(r) for r in self._devices.values())
