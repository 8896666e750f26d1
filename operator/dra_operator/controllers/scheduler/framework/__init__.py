"""The scheduling framework: kube-scheduler's extension points, plugin verdicts and snapshot.

Pure: it imports only `model`, and does no I/O (PreBind and Bind plugins write through the
writers they were built with; Permit's waiting pods use the event loop's timers). Plugins live
in `controllers.scheduler.plugins`, one module per upstream plugin, and implement the Protocols
of the points they serve. `Framework` builds a profile's plugins from a registry and runs each
point; `schedule_pod` is one pod's algorithm on a `Snapshot`, `evaluate` every plugin's verdict
on every node; `NodeInfoCache` keeps the live scheduler's NodeInfos between cycles.
"""

from dra_operator.controllers.scheduler.framework._cache import NodeInfoCache
from dra_operator.controllers.scheduler.framework._diagnosis import (
    NO_NODES,
    Diagnosis,
    NodeToStatus,
    fit_error_message,
)
from dra_operator.controllers.scheduler.framework._evaluate import Evaluation, evaluate
from dra_operator.controllers.scheduler.framework._handle import CycleHandle, FrameworkHandle
from dra_operator.controllers.scheduler.framework._images import (
    node_image_states,
    normalized_image_name,
)
from dra_operator.controllers.scheduler.framework._nodeinfo import (
    ALL_ADDRESSES,
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    PODS,
    HostPort,
    ImageState,
    NodeInfo,
    PodInfo,
    Snapshot,
    host_ports,
    next_generation,
)
from dra_operator.controllers.scheduler.framework._nominator import Nominator
from dra_operator.controllers.scheduler.framework._permit import WaitingPod, WaitingPods
from dra_operator.controllers.scheduler.framework._plugins import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    FilterPlugin,
    Handle,
    NodeScore,
    PermitPlugin,
    Plugin,
    PluginFactory,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    SignedPlugin,
)
from dra_operator.controllers.scheduler.framework._profile import EXTENSION_POINTS, Profile
from dra_operator.controllers.scheduler.framework._requests import (
    EPHEMERAL_STORAGE,
    is_scalar_resource,
    non_zero_requests,
    pod_requests,
    to_units,
)
from dra_operator.controllers.scheduler.framework._reuse import ShapeMemo
from dra_operator.controllers.scheduler.framework._runtime import (
    MAX_PERMIT_TIMEOUT,
    Framework,
    NodePluginScores,
    PluginScore,
)
from dra_operator.controllers.scheduler.framework._schedule import (
    FitError,
    Scheduled,
    ScheduleError,
    num_feasible_nodes_to_find,
    schedule_pod,
    select_host,
)
from dra_operator.controllers.scheduler.framework._snapshot import (
    build_snapshot,
    counts_on_node,
    node_info,
    pod_info,
)
from dra_operator.controllers.scheduler.framework._state import CycleState
from dra_operator.controllers.scheduler.framework._status import (
    SKIP,
    SUCCESS,
    Code,
    Status,
    error,
    unresolvable,
    unschedulable,
)

__all__ = [
    "ALL_ADDRESSES",
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "EXTENSION_POINTS",
    "MAX_NODE_SCORE",
    "MAX_PERMIT_TIMEOUT",
    "MEMORY",
    "MIN_NODE_SCORE",
    "NO_NODES",
    "PODS",
    "SKIP",
    "SUCCESS",
    "BindPlugin",
    "Code",
    "CycleHandle",
    "CycleState",
    "Diagnosis",
    "Evaluation",
    "FilterPlugin",
    "FitError",
    "Framework",
    "FrameworkHandle",
    "Handle",
    "HostPort",
    "ImageState",
    "NodeInfo",
    "NodeInfoCache",
    "NodePluginScores",
    "NodeScore",
    "NodeToStatus",
    "Nominator",
    "PermitPlugin",
    "Plugin",
    "PluginFactory",
    "PluginScore",
    "PodInfo",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "Profile",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScheduleError",
    "Scheduled",
    "ScoreExtensions",
    "ScorePlugin",
    "ShapeMemo",
    "SignedPlugin",
    "Snapshot",
    "Status",
    "WaitingPod",
    "WaitingPods",
    "build_snapshot",
    "counts_on_node",
    "error",
    "evaluate",
    "fit_error_message",
    "host_ports",
    "is_scalar_resource",
    "next_generation",
    "node_image_states",
    "node_info",
    "non_zero_requests",
    "normalized_image_name",
    "num_feasible_nodes_to_find",
    "pod_info",
    "pod_requests",
    "schedule_pod",
    "select_host",
    "to_units",
    "unresolvable",
    "unschedulable",
]
