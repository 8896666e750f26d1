"""The running operator: caches fed by kopf, controllers chosen by settings, leader election.

`cli run` builds `Settings`, discovers the server (`discover`), builds an `Operator` and runs it
with the kopf watches (`run_operator`). Controllers plug in through `_registry.BUILDERS`
(one line each; see `Plugin`). Design: docs/design/operator.md.
"""

from dra_operator.app._caches import CORE_KINDS, Caches, Kind
from dra_operator.app._claims import ClaimsPlugin, build_claims
from dra_operator.app._discovery import (
    DRA_KINDS,
    ServerInfo,
    discover,
    features_for,
    newest_versions,
    release_minor,
    upstream_controllers_running,
)
from dra_operator.app._kopf import (
    build_operator,
    connection_info,
    kopf_settings,
    serve,
)
from dra_operator.app._leader import LeaseElector
from dra_operator.app._operator import Operator
from dra_operator.app._plugin import Builder, Context, Plugin
from dra_operator.app._registry import BUILDERS
from dra_operator.app._settings import (
    CLAIMS,
    CONTROLLER_NAMES,
    EVICTION,
    KCM_LEASE_NAME,
    KCM_LEASE_NAMESPACE,
    SCHEDULER,
    LeaderElection,
    Settings,
    choose_controllers,
)

__all__ = [
    "BUILDERS",
    "CLAIMS",
    "CONTROLLER_NAMES",
    "CORE_KINDS",
    "DRA_KINDS",
    "EVICTION",
    "KCM_LEASE_NAME",
    "KCM_LEASE_NAMESPACE",
    "SCHEDULER",
    "Builder",
    "Caches",
    "ClaimsPlugin",
    "Context",
    "Kind",
    "LeaderElection",
    "LeaseElector",
    "Operator",
    "Plugin",
    "ServerInfo",
    "Settings",
    "build_claims",
    "build_operator",
    "choose_controllers",
    "connection_info",
    "discover",
    "features_for",
    "kopf_settings",
    "newest_versions",
    "release_minor",
    "serve",
    "upstream_controllers_running",
]
