"""Logging: structlog, configured once per process, with the standard library routed through it.

One handler on the root logger renders every record, ours and those of kopf, aiohttp and the
Kubernetes client, as one JSON object per line when stderr is not a terminal (in a cluster) or
as readable console lines when it is. structlog events travel through the standard library
(`ProcessorFormatter`), so the level is set in one place and both kinds of record get the same
timestamp, level, logger name and bound context.

Context comes from `contextvars`: `reconcile_scope` binds `controller`, a fresh `reconcile_id`
and the object keys for the duration of one reconcile, so a conflict logged deep in `kube/` while
writing a claim carries the claim's key without being handed a logger. Event names are the
constants of `LogEvent`; variable data goes in keys, never in the event text.

This module does not decide what to log: the controllers log one event per decision.
"""

from __future__ import annotations

import enum
import logging
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, TextIO

import structlog
from structlog.typing import Processor

LogFormat = Literal["auto", "json", "console"]
LOG_FORMATS: tuple[LogFormat, ...] = ("auto", "json", "console")
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


class LogEvent(enum.StrEnum):
    """The event names the operator logs, one per decision; keys carry the details."""

    # claims controller
    CLAIM_CREATED = "claim.created"
    CLAIM_CREATE_FAILED = "claim.create_failed"
    CLAIM_RESERVED = "claim.reserved"
    CLAIM_DEALLOCATED = "claim.deallocated"
    CLAIM_DELETED = "claim.deleted"
    # scheduler controller
    CLAIM_ALLOCATED = "claim.allocated"
    ALLOCATION_PLACED = "allocation.placed"
    ALLOCATION_UNSCHEDULABLE = "allocation.unschedulable"
    ALLOCATION_REFUSED = "allocation.refused"
    ALLOCATION_WAITING = "allocation.waiting"
    ALLOCATION_NODE = "allocation.node"
    ALLOCATION_WRITE_FAILED = "allocation.write_failed"
    ALLOCATION_ABORTED = "allocation.aborted"
    POD_BOUND = "pod.bound"
    # eviction controller
    EVICTION_SCHEDULED = "eviction.scheduled"
    EVICTION_CANCELLED = "eviction.cancelled"
    POD_EVICTED = "pod.evicted"
    # routing parameters (admission policies beside kube-scheduler)
    ROUTING_PARAMS_WRITTEN = "routing.params_written"
    ROUTING_PARAMS_FAILED = "routing.params_failed"
    ROUTING_BINDING_UNREADABLE = "routing.binding_unreadable"
    ROUTING_UNROUTED_POD = "routing.unrouted_pod"
    # pool status controller
    POOL_STATUS_CLEANUP = "poolstatus.cleanup"
    POOL_STATUS_CLEANUP_FAILED = "poolstatus.cleanup_failed"
    # shared machinery
    RECONCILE_FAILED = "reconcile.failed"
    RECONCILE_DROPPED = "reconcile.dropped"
    WRITE_CONFLICT = "write.conflict"
    WRITE_RETRIED = "write.retried"
    HOOK_FAILED = "hook.failed"
    CACHE_SYNCED = "cache.synced"
    WATCH_RELISTED = "watch.relisted"
    WATCH_EXPIRED = "watch.expired"
    WATCH_FAILED = "watch.failed"
    WATCH_HANDLER_FAILED = "watch.handler_failed"
    CACHE_PRUNED = "cache.pruned"
    LEADER_ACQUIRED = "leader.acquired"
    LEADER_LOST = "leader.lost"
    LEADER_RELEASED = "leader.released"
    LEADER_READ_FAILED = "leader.read_failed"
    LEADER_WRITE_FAILED = "leader.write_failed"
    LEADER_RELEASE_FAILED = "leader.release_failed"
    LOOP_STALL = "loop.stall"
    METRICS_SOURCE_FAILED = "metrics.source_failed"
    PROBES_SERVING = "probes.serving"
    EVENT_FAILED = "event.failed"
    API_RETRYING = "api.retrying"
    # the operator's assembly and what runs beside it
    OPERATOR_STARTING = "operator.starting"
    OPERATOR_STOPPED = "operator.stopped"
    UPSTREAM_READ_FAILED = "upstream.read_failed"
    HOOKS_LOADED = "hooks.loaded"
    CONTROLLER_UNAVAILABLE = "controller.unavailable"
    CONTROLLER_STARTED = "controller.started"
    CONTROLLER_STOPPED = "controller.stopped"
    OBJECT_INVALID = "object.invalid"
    UPSTREAM_CHANGED = "upstream.changed"
    COEXISTENCE_UNSAFE = "coexistence.unsafe"
    COEXISTENCE_SAFE = "coexistence.safe"
    CLAIMS_FOREIGN_CREATOR = "claims.foreign_creator"
    ALLOCATION_FOREIGN = "allocation.foreign"


_SHARED: list[Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_logger_name,
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]
"""Run on structlog events and on foreign (standard-library) records alike."""

_handler: logging.Handler | None = None


def configure_logging(
    level: str | int = "info",
    format: LogFormat = "auto",
    *,
    stream: TextIO | None = None,
) -> None:
    """Route all logging to `stream` (stderr) as JSON or console lines, at `level` and above.

    `format="auto"` picks console lines for a terminal and JSON otherwise. Calling it again
    replaces the previous configuration (tests do), it never stacks handlers.
    """
    global _handler
    if format not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}, not {format!r}")
    numeric = _level_number(level)
    out = stream if stream is not None else sys.stderr
    is_tty = out.isatty()
    as_json = format == "json" or (format == "auto" and not is_tty)

    renderer: list[Processor] = (
        [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
        if as_json
        else [structlog.dev.ConsoleRenderer(colors=is_tty)]
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=_SHARED,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *renderer],
        )
    )
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    root.addHandler(handler)
    root.setLevel(numeric)
    _handler = handler

    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *_SHARED,
            structlog.stdlib.PositionalArgumentsFormatter(),
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


def _level_number(level: str | int) -> int:
    if isinstance(level, int):
        return level
    if level.lower() not in LOG_LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
    return logging.getLevelNamesMapping()[level.upper()]


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """A logger named `name` (use the module's `__name__`); context keys are added when used."""
    logger: structlog.stdlib.BoundLogger = structlog.stdlib.get_logger(name)
    return logger


@contextmanager
def reconcile_scope(
    controller: str,
    *,
    claim: str | None = None,
    pod: str | None = None,
    node: str | None = None,
    request: str | None = None,
) -> Iterator[structlog.stdlib.BoundLogger]:
    """Bind `controller`, a new `reconcile_id` and the given keys for one reconcile.

    Keys are `namespace/name` for claims and pods. Everything logged inside the `with` block,
    through structlog or the standard library and from any layer, carries them; keys learned
    later in the reconcile go on the yielded logger with `.bind(node=...)`.
    """
    keys: dict[str, Any] = {"controller": controller, "reconcile_id": str(uuid.uuid4())}
    for key, value in (("claim", claim), ("pod", pod), ("node", node), ("request", request)):
        if value is not None:
            keys[key] = value
    with structlog.contextvars.bound_contextvars(**keys):
        yield get_logger(f"dra_operator.controllers.{controller}")
