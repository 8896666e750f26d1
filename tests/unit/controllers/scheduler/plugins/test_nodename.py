"""NodeName, upstream's TestNodeName and TestNodeName_PreFilter cases."""

from __future__ import annotations

import pytest

from dra_operator.controllers.scheduler.framework import SUCCESS, Code, PreFilterResult, Status
from dra_operator.controllers.scheduler.plugins import nodename

from .builders import FakeHandle, make_node, make_pod, node_info, state

REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (nodename.ERR_REASON,), "NodeName")


@pytest.mark.parametrize(
    ("pod_node", "want"),
    [
        pytest.param("", SUCCESS, id="no host specified"),
        pytest.param("foo", SUCCESS, id="host matches"),
        pytest.param("bar", REJECT, id="host doesn't match"),
    ],
)
def test_filter(pod_node: str, want: Status) -> None:
    plugin = nodename.new({}, FakeHandle())
    pod = make_pod(nodeName=pod_node) if pod_node else make_pod()
    assert plugin.filter(state(), pod, node_info(make_node("foo"))) == want


@pytest.mark.parametrize(
    ("pod_node", "want"),
    [
        pytest.param(
            "node-1",
            PreFilterResult(frozenset({"node-1"})),
            id="assigned pod with nodeName set, prefilter restricts to assigned node",
        ),
        pytest.param("", None, id="unassigned pod without nodeName set, prefilter returns nil"),
    ],
)
def test_pre_filter(pod_node: str, want: PreFilterResult | None) -> None:
    plugin = nodename.new({}, FakeHandle())
    pod = make_pod(nodeName=pod_node) if pod_node else make_pod()
    assert plugin.pre_filter(state(), pod, []) == (want, SUCCESS)
