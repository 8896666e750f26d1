"""Observability: metrics, structured logs and the health probes of the operator.

Used by the I/O layers (controllers, cluster, kube, hooks, cli); imports nothing of ours but
`model`, `names` and `errors`, so any of them can call it.
"""

from dra_operator.observability._health import (
    DEFAULT_STALE_AFTER,
    HEARTBEAT_INTERVAL,
    Check,
    Health,
    Role,
)
from dra_operator.observability._logging import (
    LOG_FORMATS,
    LOG_LEVELS,
    LogEvent,
    LogFormat,
    configure_logging,
    get_logger,
    reconcile_scope,
)

__all__ = [
    "DEFAULT_STALE_AFTER",
    "HEARTBEAT_INTERVAL",
    "LOG_FORMATS",
    "LOG_LEVELS",
    "Check",
    "Health",
    "LogEvent",
    "LogFormat",
    "Role",
    "configure_logging",
    "get_logger",
    "reconcile_scope",
]
