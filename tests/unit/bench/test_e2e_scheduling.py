"""bench/scheduling's pure parts: percentiles, py-spy profiles, audit counting, workloads."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from bench.scheduling import WORKLOADS, build, parse_collapsed, percentile
from bench.scheduling._system import count_requests
from bench.scheduling._tracker import claim_names


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        pytest.param([], 0.5, math.nan, id="empty"),
        pytest.param([5.0], 0.99, 5.0, id="one"),
        pytest.param([float(i) for i in range(1, 101)], 0.5, 50.0, id="p50-of-100"),
        pytest.param([float(i) for i in range(1, 101)], 0.99, 99.0, id="p99-of-100"),
        pytest.param([3.0, 1.0, 2.0], 0.9, 3.0, id="unsorted"),
    ],
)
def test_percentile(values: list[float], q: float, expected: float) -> None:
    got = percentile(values, q)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_profile_counts_self_at_the_leaf_and_cumulative_once_per_stack() -> None:
    lines = [
        "main (app.py:1);work (app.py:5);work (app.py:7) 3",
        "main (app.py:1);idle (app.py:9) 1",
        "garbage",
    ]
    profile = parse_collapsed(lines)
    assert profile.total == 4
    assert profile.top("self", 1) == [("work (app.py)", 3, 0.75)]
    # `main` is under every sample: left out of the cumulative list as uninformative.
    assert dict((f, c) for f, c, _ in profile.top("cumulative", 5)) == {
        "work (app.py)": 3,
        "idle (app.py)": 1,
    }


def _event(user: str, agent: str, verb: str, at: str) -> str:
    return json.dumps(
        {
            "user": {"username": user},
            "userAgent": agent,
            "verb": verb,
            "requestReceivedTimestamp": at,
        }
    )


@pytest.mark.parametrize(
    ("ours", "expected"),
    [
        pytest.param(True, (2, 1), id="ours-by-identity"),
        pytest.param(False, (2, 2), id="upstream-by-user-agent"),
    ],
)
def test_count_requests(ours: bool, expected: tuple[int, int]) -> None:
    inside, outside = "2026-11-22T05:00:01.000000Z", "2026-11-22T05:10:00.000000Z"
    lines = [
        _event("dra-operator", "kopf/1.45", "list", inside),
        _event("dra-operator", "dra-operator", "create", inside),
        _event("dra-operator", "dra-operator", "create", outside),
        _event("admin", "kube-scheduler/v1.36.4 (linux/amd64)", "create", inside),
        _event("admin", "kube-controller-manager/v1.36.4 (linux/amd64)", "patch", inside),
        _event("admin", "dra-bench", "create", inside),
        "not json",
    ]
    start = 1_795_323_600.0  # 2026-11-22T05:00:00Z
    got = count_requests(lines, ours, start, start + 60)
    assert (got.total, got.writes) == expected


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(
            {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}},
            ["shared"],
            id="by-name",
        ),
        pytest.param(
            {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}},
            None,
            id="template-not-generated-yet",
        ),
        pytest.param(
            {
                "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]},
                "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-x"}]},
            },
            ["p-x"],
            id="template-generated",
        ),
    ],
)
def test_claim_names(pod: dict[str, Any], expected: list[str] | None) -> None:
    assert claim_names(pod) == expected


@pytest.mark.parametrize("key", sorted(WORKLOADS))
def test_workloads_scale_and_stay_within_their_devices(key: str) -> None:
    small, default = build(key, 0.05), build(key, 1)
    assert len(small.nodes) == 1
    assert len(default.nodes) == 20
    assert all(p.pods > 0 for p in default.phases)
    assert all(p.preallocate <= len(default.device_order) for p in default.phases)
    pod = default.pod(7, "ns", "sched")
    assert pod["spec"]["schedulerName"] == "sched"
    assert pod["metadata"]["name"] == "pod-00007"
    slice_names = [s["metadata"]["name"] for s in default.slices]
    assert len(set(slice_names)) == len(slice_names)
