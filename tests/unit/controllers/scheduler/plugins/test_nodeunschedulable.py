"""NodeUnschedulable, upstream's TestNodeUnschedulable cases."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import SUCCESS, Code, Status
from dra_operator.controllers.scheduler.plugins import nodeunschedulable

from .builders import FakeHandle, make_node, make_pod, node_info, state

REJECT = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",), "NodeUnschedulable"
)
TOLERATE = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]


@pytest.mark.parametrize(
    ("tolerations", "unschedulable", "want"),
    [
        pytest.param(
            [],
            True,
            REJECT,
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param([], False, SUCCESS, id="Schedule pod to normal node"),
        pytest.param(
            TOLERATE,
            True,
            SUCCESS,
            id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        ),
    ],
)
def test_filter(tolerations: list[Any], unschedulable: bool, want: Status) -> None:
    plugin = nodeunschedulable.new({}, FakeHandle())
    pod = make_pod(tolerations=tolerations)
    node = node_info(make_node(unschedulable=unschedulable))
    assert plugin.filter(state(), pod, node) == want
