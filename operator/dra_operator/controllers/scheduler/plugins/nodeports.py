"""NodePorts (PreFilter, Filter): a pod's host ports must be free on the node.

kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/nodeports. The host ports are those of
the app containers and the sidecar (restartable init) containers with `hostPort` > 0. A wanted
port conflicts with a used one of the same protocol and number when either binds every address
("" or 0.0.0.0) or both bind the same address. PreFilter says Skip for a pod without host ports.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence, Set

from dra_operator.controllers.scheduler.framework import (
    ALL_ADDRESSES,
    SKIP,
    SUCCESS,
    CycleState,
    Handle,
    HostPort,
    NodeInfo,
    PreFilterResult,
    Status,
    error,
    host_ports,
    unschedulable,
)
from dra_operator.controllers.scheduler.plugins._args import check_known
from dra_operator.model import Pod

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

_PRE_FILTER_KEY = "PreFilter" + NAME
_REJECT = unschedulable(ERR_REASON).with_plugin(NAME)


def _normal(port: HostPort) -> HostPort:
    if port.ip and port.protocol:
        return port
    return HostPort(port.ip or ALL_ADDRESSES, port.protocol or "TCP", port.port)


def conflicts(wanted: HostPort, used: Set[HostPort]) -> bool:
    """`HostPortInfo.CheckConflict` over a node's used ports."""
    if wanted.port <= 0:
        return False
    w = _normal(wanted)
    if w.ip == ALL_ADDRESSES:
        return any((u.protocol or "TCP", u.port) == (w.protocol, w.port) for u in used)
    return any(
        _normal(u) in (w, HostPort(ALL_ADDRESSES, w.protocol, w.port))
        for u in used
        if u.port == w.port
    )


def fits(wanted: Sequence[HostPort], node: NodeInfo) -> bool:
    return not any(conflicts(p, node.used_ports) for p in wanted)


class NodePorts:
    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable:
        return host_ports(pod)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        wanted = host_ports(pod)
        if not wanted:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, wanted)
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        wanted = state.get(_PRE_FILTER_KEY)
        if not isinstance(wanted, tuple):
            return error(f"reading {_PRE_FILTER_KEY!r} from cycleState: not found").with_plugin(
                NAME
            )
        return SUCCESS if fits(wanted, node) else _REJECT


def new(args: Mapping[str, object], handle: Handle) -> NodePorts:
    check_known(args, "args", ())
    return NodePorts()
