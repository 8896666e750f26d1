"""What a hook is and how one is found: entry points of `dra_operator.hooks` or `module:attr`.

A hook is any object with some of the hook methods (docs/hooks.md); a class is instantiated
without arguments. It may declare `failure_mode` ("ignore" or "refuse") and `timeout`
(seconds) as attributes; the defaults keep a broken hook from changing anything. A hook with
scheduler plugin methods (`SCHEDULER_POINTS`: Filter, Score, Permit) may also declare its Score
`weight` (a positive integer, 1 by default).
"""

from __future__ import annotations

import enum
import importlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points

from dra_operator.errors import HookLoadError

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_WEIGHT",
    "ENTRY_POINT_GROUP",
    "POINTS",
    "SCHEDULER_POINTS",
    "FailureMode",
    "LoadedHook",
    "load_hooks",
]

ENTRY_POINT_GROUP = "dra_operator.hooks"
DEFAULT_TIMEOUT = 1.0  # seconds per call
POINTS = (
    "filter_device",
    "score_device",
    "score_node",
    "before_allocate",
    "after_allocate",
    "before_evict",
)
SCHEDULER_POINTS = ("filter", "score", "permit")
"""The scheduling framework's points a hook may serve as a plugin named in the profile."""
DEFAULT_WEIGHT = 1


class FailureMode(enum.StrEnum):
    """What a call that raised or ran past its time limit counts as.

    `ignore`: as if the hook had not been called (keep the device, score 0, allow, evict now).
    `refuse`: the safe "no" (veto the device, rank the node last, refuse the allocation,
    delay the eviction).
    """

    IGNORE = "ignore"
    REFUSE = "refuse"


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedHook:
    """One hook object with its configured name (entry-point name or `module:attr`)."""

    name: str
    target: object
    failure_mode: FailureMode = FailureMode.IGNORE
    timeout: float = DEFAULT_TIMEOUT
    weight: int = DEFAULT_WEIGHT  # of its Score, when it serves as a scheduler plugin

    def has(self, point: str) -> bool:
        return callable(getattr(self.target, point, None))


def _declared(name: str, target: object) -> LoadedHook:
    if isinstance(target, type):
        try:
            target = target()
        except Exception as exc:
            raise HookLoadError(f"hook {name}: cannot instantiate: {exc}") from exc
    if not any(callable(getattr(target, point, None)) for point in POINTS + SCHEDULER_POINTS):
        every = ", ".join(POINTS + SCHEDULER_POINTS)
        raise HookLoadError(f"hook {name}: has none of the methods {every}")
    raw_mode = getattr(target, "failure_mode", FailureMode.IGNORE)
    try:
        mode = FailureMode(str(raw_mode))
    except ValueError as exc:
        raise HookLoadError(
            f"hook {name}: failure_mode {raw_mode!r}: expected ignore or refuse"
        ) from exc
    timeout = getattr(target, "timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise HookLoadError(f"hook {name}: timeout {timeout!r}: expected positive seconds")
    weight = getattr(target, "weight", DEFAULT_WEIGHT)
    if isinstance(weight, bool) or not isinstance(weight, int) or weight <= 0:
        raise HookLoadError(f"hook {name}: weight {weight!r}: expected a positive integer")
    return LoadedHook(
        name=name, target=target, failure_mode=mode, timeout=float(timeout), weight=weight
    )


def _import(spec: str) -> LoadedHook:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise HookLoadError(f"hook {spec}: expected module:attr")
    try:
        found: object = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise HookLoadError(f"hook {spec}: cannot import: {exc}") from exc
    return _declared(spec, found)


def load_hooks(
    specs: Iterable[str] = (), *, use_entry_points: bool = True
) -> tuple[LoadedHook, ...]:
    """The entry-point hooks (by name), then the `--hook module:attr` ones, in order.

    Raises HookLoadError for a hook that cannot be imported or has no hook method, and for a
    name given twice, so a typo stops the operator at start-up instead of silently doing less.
    """
    loaded: list[LoadedHook] = []
    if use_entry_points:
        for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                target = point.load()
            except Exception as exc:
                raise HookLoadError(f"hook {point.name}: cannot load entry point: {exc}") from exc
            loaded.append(_declared(point.name, target))
    loaded += [_import(spec) for spec in specs]
    seen: set[str] = set()
    for hook in loaded:
        if hook.name in seen:
            raise HookLoadError(f"hook {hook.name}: loaded twice")
        seen.add(hook.name)
    return tuple(loaded)
