"""SchedulingGates, upstream's TestPreEnqueue cases."""

from __future__ import annotations

import pytest

from dra_operator.controllers.scheduler.framework import SUCCESS, Code, Status
from dra_operator.controllers.scheduler.plugins import schedulinggates

from .builders import FakeHandle, make_pod


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        pytest.param([], SUCCESS, id="pod does not carry scheduling gates"),
        pytest.param(
            ["foo", "bar"],
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ("waiting for scheduling gates: [foo bar]",),
                "SchedulingGates",
            ),
            id="pod carries scheduling gates",
        ),
    ],
)
def test_pre_enqueue(gates: list[str], want: Status) -> None:
    plugin = schedulinggates.new({}, FakeHandle())
    pod = make_pod(schedulingGates=[{"name": g} for g in gates])
    assert plugin.pre_enqueue(pod) == want
