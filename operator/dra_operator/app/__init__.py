"""The running operator: caches fed by our reflectors (every kind), controllers chosen by
settings, leader election.

`cli run` builds `Settings`, discovers the server (`discover`), builds an `Operator` and runs it
with its reflectors beside kopf (`serve`). Controllers plug in through `_registry.BUILDERS`
(one line each; see `Plugin`). Design: docs/design/operator.md.
"""

from dra_operator.app._caches import CORE_KINDS, Caches, Kind
from dra_operator.app._claims import ClaimsPlugin, build_claims
from dra_operator.app._coexistence import EVENT_UNSAFE_CONFIGURATION, UNSAFE_TWO_SCHEDULERS
from dra_operator.app._discovery import (
    CLASSIC_VERSION,
    DRA_KINDS,
    ServerInfo,
    discover,
    features_for,
    newest_versions,
)
from dra_operator.app._kopf import (
    build_operator,
    connection_info,
    kopf_settings,
    serve,
    upstream_watch,
)
from dra_operator.app._leader import LeaseElector
from dra_operator.app._operator import Operator
from dra_operator.app._plugin import Builder, Context, Plugin
from dra_operator.app._registry import BUILDERS
from dra_operator.app._settings import (
    CLAIMS,
    CONTROLLER_NAMES,
    EVICTION,
    KCM_LEASE,
    KCM_LEASE_NAME,
    KCM_LEASE_NAMESPACE,
    SCHEDULER,
    SCHEDULER_LEASE,
    LeaderElection,
    Settings,
    choose_controllers,
    yielding_controllers,
)
from dra_operator.app._upstream import LeaseName, LeaseWatch, Upstream, UpstreamWatch

__all__ = [
    "BUILDERS",
    "CLAIMS",
    "CLASSIC_VERSION",
    "CONTROLLER_NAMES",
    "CORE_KINDS",
    "DRA_KINDS",
    "EVENT_UNSAFE_CONFIGURATION",
    "EVICTION",
    "KCM_LEASE",
    "KCM_LEASE_NAME",
    "KCM_LEASE_NAMESPACE",
    "SCHEDULER",
    "SCHEDULER_LEASE",
    "UNSAFE_TWO_SCHEDULERS",
    "Builder",
    "Caches",
    "ClaimsPlugin",
    "Context",
    "Kind",
    "LeaderElection",
    "LeaseElector",
    "LeaseName",
    "LeaseWatch",
    "Operator",
    "Plugin",
    "ServerInfo",
    "Settings",
    "Upstream",
    "UpstreamWatch",
    "build_claims",
    "build_operator",
    "choose_controllers",
    "connection_info",
    "discover",
    "features_for",
    "kopf_settings",
    "newest_versions",
    "serve",
    "upstream_watch",
    "yielding_controllers",
]
