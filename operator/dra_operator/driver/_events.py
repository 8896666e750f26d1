"""The driver's log event names (docs/driver.md): a process of its own, so not the operator's
`LogEvent`, but the same rule: one event per decision, details in keys."""

from __future__ import annotations

import enum

__all__ = ["DriverEvent"]


class DriverEvent(enum.StrEnum):
    """The driver's log events, one per decision; keys carry the details."""

    STARTED = "driver.started"
    STOPPED = "driver.stopped"
    REGISTERED = "driver.registered"
    REGISTRATION_FAILED = "driver.registration_failed"
    SLICES_PUBLISHED = "driver.slices_published"
    SLICES_FAILED = "driver.slices_failed"
    PREPARED = "driver.prepared"
    PREPARE_REFUSED = "driver.prepare_refused"
    UNPREPARED = "driver.unprepared"
    CLASSIC_SYNC_FAILED = "classic_driver.sync_failed"
    CLASSIC_WATCH_ENDED = "classic_driver.watch_ended"
    CLASSIC_ALLOCATED = "classic_driver.allocated"
    CLASSIC_DEALLOCATED = "classic_driver.deallocated"
