"""PrioritySort, upstream's TestLess cases (queue time is the pod's creation time here)."""

from __future__ import annotations

import pytest

from dra_operator.controllers.scheduler.plugins import queuesort
from dra_operator.model import Pod, parse_pod

from .builders import FakeHandle

T1, T2 = "2026-11-27T10:00:00Z", "2026-11-27T10:00:01Z"


def _pod(name: str, priority: int, created: str = T1) -> Pod:
    meta = {"name": name, "namespace": "default", "creationTimestamp": created}
    return parse_pod({"metadata": meta, "spec": {"containers": [], "priority": priority}})


@pytest.mark.parametrize(
    ("p1", "p2", "expected"),
    [
        pytest.param(_pod("a", 10), _pod("b", 100), False, id="p1.priority less than p2.priority"),
        pytest.param(
            _pod("a", 100), _pod("b", 10), True, id="p1.priority greater than p2.priority"
        ),
        pytest.param(
            _pod("a", 100, T1),
            _pod("b", 100, T2),
            True,
            id="equal priority. p1 is added to schedulingQ earlier than p2",
        ),
        pytest.param(
            _pod("a", 100, T2),
            _pod("b", 100, T1),
            False,
            id="equal priority. p2 is added to schedulingQ earlier than p1",
        ),
    ],
)
def test_less(p1: Pod, p2: Pod, expected: bool) -> None:
    assert queuesort.new({}, FakeHandle()).less(p1, p2) is expected


def test_a_pod_without_priority_counts_as_zero() -> None:
    plugin = queuesort.new({}, FakeHandle())
    no_priority = parse_pod({"metadata": {"name": "n"}, "spec": {"containers": []}})
    assert plugin.less(_pod("a", 1), no_priority)
    assert plugin.less(no_priority, _pod("b", -1))
