"""Observability: metrics, structured logs and the health probes of the operator.

Used by the I/O layers (controllers, cluster, kube, hooks, cli); imports nothing of ours but
`model`, `names` and `errors`, so any of them can call it. See docs/metrics.md for the metric
names and the calls that feed them, docs/observability.md for logging and probes.
"""

from dra_operator.observability._collectors import ClaimSource, claim_source, has_admin_access
from dra_operator.observability._health import (
    DEFAULT_STALE_AFTER,
    HEARTBEAT_INTERVAL,
    Check,
    Health,
    Role,
)
from dra_operator.observability._labels import (
    AllocationOutcome,
    BlockingReason,
    CELStats,
    HookFailure,
    RetryReason,
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
from dra_operator.observability._loop import watch_loop_stalls
from dra_operator.observability._metrics import CONTENT_TYPE, Metrics
from dra_operator.observability._reconcile import ReconcileObserver, reconcile_observer
from dra_operator.observability._server import Address, ProbeServer, make_app, parse_bind_address
from dra_operator.observability._workqueue import QueueMetrics

__all__ = [
    "CONTENT_TYPE",
    "DEFAULT_STALE_AFTER",
    "HEARTBEAT_INTERVAL",
    "LOG_FORMATS",
    "LOG_LEVELS",
    "Address",
    "AllocationOutcome",
    "BlockingReason",
    "CELStats",
    "Check",
    "ClaimSource",
    "Health",
    "HookFailure",
    "LogEvent",
    "LogFormat",
    "Metrics",
    "ProbeServer",
    "QueueMetrics",
    "ReconcileObserver",
    "RetryReason",
    "Role",
    "claim_source",
    "configure_logging",
    "get_logger",
    "has_admin_access",
    "make_app",
    "parse_bind_address",
    "reconcile_observer",
    "reconcile_scope",
    "watch_loop_stalls",
]
