"""NodeResourcesFit's strategies and NodeResourcesBalancedAllocation: upstream's
TestLeastAllocatedScoringStrategy, TestMostAllocatedScoringStrategy,
TestRequestedToCapacityRatioScoringStrategy, TestBrokenLinearFunction and
TestNodeResourcesBalancedAllocation cases (noderesources/*_test.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dra_operator.controllers.scheduler.framework import SKIP, SUCCESS
from dra_operator.controllers.scheduler.plugins._args import PluginArgsError
from dra_operator.controllers.scheduler.plugins.noderesources import balanced_allocation, fit
from dra_operator.controllers.scheduler.plugins.noderesources._scoring import broken_linear
from dra_operator.model import Pod

from .builders import FakeHandle, make_node, make_pod, node_info, state

Raw = dict[str, Any]
Req = Mapping[str, str]
DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXT = "intel.com/foo"
EXTENDED_SET = [
    {"name": "cpu", "weight": 1},
    {"name": "memory", "weight": 1},
    {"name": EXT, "weight": 1},
]


def pod_req(*reqs: Req) -> Pod:
    """upstream's `st.MakePod().Req(...)`: one container per request map."""
    return make_pod(
        containers=[
            {"name": f"c{i}", "resources": {"requests": dict(r)}} if r else {"name": f"c{i}"}
            for i, r in enumerate(reqs)
        ]
    )


def cpu_mem(cpu: str, mem: str) -> Req:
    return {"cpu": cpu, "memory": mem}


REQ_1_2 = (cpu_mem("1000", "2000"), cpu_mem("2000", "3000"))  # upstream's usual pair


def scores(
    plugin: Any,
    incoming: Pod,
    nodes: Sequence[tuple[str, Req]],
    existing: Sequence[tuple[str, Pod]] = (),
    *,
    pre_score: bool = True,
) -> list[int]:
    infos = [
        node_info(make_node(name, allocatable=alloc), [p for n, p in existing if n == name])
        for name, alloc in nodes
    ]
    cycle = state()
    if pre_score:
        assert plugin.pre_score(cycle, incoming, infos) == SUCCESS
    result = []
    for info in infos:
        score, status = plugin.score(cycle, incoming, info)
        assert status == SUCCESS
        result.append(score)
    return result


def strategy(kind: str, resources: list[Raw], **more: Any) -> Raw:
    return {"scoringStrategy": {"type": kind, "resources": resources, **more}}


N4K = cpu_mem("4000", "10000")
N6K = cpu_mem("6000", "10000")
N10K = cpu_mem("10000", "20000")

LEAST = [
    pytest.param(
        pod_req(),
        [("node1", N4K), ("node2", N4K)],
        [],
        DEFAULT,
        [100, 100],
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        pod_req(*REQ_1_2),
        [("node1", N4K), ("node2", N6K)],
        [],
        DEFAULT,
        [37, 50],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        pod_req(),
        [("node1", N4K), ("node2", N4K)],
        [("node1", pod_req()), ("node1", pod_req()), ("node2", pod_req()), ("node2", pod_req())],
        DEFAULT,
        [100, 100],
        id="no resources requested, pods scheduled",
    ),
    pytest.param(
        pod_req(),
        [("node1", N10K), ("node2", N10K)],
        [
            ("node1", pod_req(cpu_mem("3000", "0"))),
            ("node1", pod_req(cpu_mem("3000", "0"))),
            ("node2", pod_req(cpu_mem("3000", "0"))),
            ("node2", pod_req(cpu_mem("3000", "5000"))),
        ],
        DEFAULT,
        [70, 57],
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        pod_req(*REQ_1_2),
        [("node1", N10K), ("node2", N10K)],
        [("node1", pod_req(cpu_mem("3000", "0"))), ("node2", pod_req(cpu_mem("3000", "5000")))],
        DEFAULT,
        [57, 45],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        pod_req(*REQ_1_2),
        [("node1", N10K), ("node2", cpu_mem("10000", "50000"))],
        [("node1", pod_req(cpu_mem("3000", "0"))), ("node2", pod_req(cpu_mem("3000", "5000")))],
        DEFAULT,
        [57, 60],
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        pod_req(cpu_mem("3000", "0")),
        [("node1", N4K), ("node2", N4K)],
        [("node1", pod_req(cpu_mem("3000", "0"))), ("node2", pod_req(cpu_mem("3000", "5000")))],
        DEFAULT,
        [50, 25],
        id="requested resources exceed node capacity",
    ),
    pytest.param(
        pod_req(),
        [("node1", {}), ("node2", {})],
        [("node1", pod_req(cpu_mem("3000", "0"))), ("node2", pod_req(cpu_mem("3000", "5000")))],
        DEFAULT,
        [0, 0],
        id="zero node resources, pods scheduled with resources",
    ),
    pytest.param(
        pod_req(*REQ_1_2),
        [("node1", N4K), ("node2", N6K)],
        [],
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
        [41, 50],
        id="nothing scheduled, resources requested with different weight on CPU and"
        " memory, differently sized nodes",
    ),
    pytest.param(
        pod_req(*REQ_1_2),
        [("node1", N6K), ("node2", {**N6K, EXT: "4"})],
        [],
        EXTENDED_SET,
        [50, 50],
        id="bypass extended resource if the pod does not request",
    ),
    pytest.param(
        pod_req({"cpu": "3000", "memory": "5000", EXT: "2"}),
        [("node1", {**N6K, EXT: "4"}), ("node2", {**N6K, EXT: "10"})],
        [],
        EXTENDED_SET,
        [50, 60],
        id="honor extended resource if the pod requests",
    ),
    pytest.param(
        pod_req(cpu_mem("3000", "4000")),
        [("node1", N6K), ("node2", {**N6K, EXT: "4"})],
        [],
        [{"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        [55, 55],
        id="if the node doesn't have a resource",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "resources", "expected"), LEAST)
def test_least_allocated_scoring_strategy(
    incoming: Pod,
    nodes: list[tuple[str, Req]],
    existing: list[tuple[str, Pod]],
    resources: list[Raw],
    expected: list[int],
) -> None:
    plugin = fit.new(strategy("LeastAllocated", resources), FakeHandle())
    assert scores(plugin, incoming, nodes, existing) == expected


MOST = [
    pytest.param(
        pod_req(),
        [("node1", N4K), ("node2", N4K)],
        [],
        DEFAULT,
        [0, 0],
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        pod_req(*REQ_1_2),
        [("node1", N4K), ("node2", N6K)],
        [],
        DEFAULT,
        [62, 50],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        pod_req(),
        [("node1", N10K), ("node2", N10K)],
        [
            ("node1", pod_req(cpu_mem("3000", "0"))),
            ("node1", pod_req(cpu_mem("3000", "0"))),
            ("node2", pod_req(cpu_mem("3000", "0"))),
            ("node2", pod_req(cpu_mem("3000", "5000"))),
        ],
        DEFAULT,
        [30, 42],
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        pod_req(*REQ_1_2),
        [("node1", N10K), ("node2", N10K)],
        [("node1", pod_req(cpu_mem("3000", "0"))), ("node2", pod_req(cpu_mem("3000", "5000")))],
        DEFAULT,
        [42, 55],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        pod_req(cpu_mem("2000", "4000"), cpu_mem("3000", "5000")),
        [("node1", cpu_mem("5000", "10000")), ("node2", cpu_mem("10000", "9000"))],
        [],
        DEFAULT,
        [95, 75],
        id="resources requested equal node capacity",
    ),
    pytest.param(
        pod_req({}),
        [("node1", cpu_mem("250m", "1000Mi")), ("node2", cpu_mem("250m", "1000Mi"))],
        [("node1", pod_req({})), ("node1", pod_req({}))],
        DEFAULT,
        [80, 30],
        id="no resources requested, pods scheduled, nonzero request for resource",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "resources", "expected"), MOST)
def test_most_allocated_scoring_strategy(
    incoming: Pod,
    nodes: list[tuple[str, Req]],
    existing: list[tuple[str, Pod]],
    resources: list[Raw],
    expected: list[int],
) -> None:
    plugin = fit.new(strategy("MostAllocated", resources), FakeHandle())
    assert scores(plugin, incoming, nodes, existing) == expected


def test_most_allocated_with_different_weights() -> None:
    # upstream's second "nothing scheduled, resources requested, differently sized nodes"
    resources = [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]
    plugin = fit.new(strategy("MostAllocated", resources), FakeHandle())
    assert scores(plugin, pod_req(*REQ_1_2), [("node1", N4K), ("node2", N6K)]) == [58, 50]


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        pytest.param(
            [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
            "args.scoringStrategy.resources[0].weight",
            id="resource with negative weight",
        ),
        pytest.param(
            [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}],
            "args.scoringStrategy.resources[1].weight",
            id="resource weight larger than MaxNodeScore",
        ),
    ],
)
def test_invalid_resource_weights(resources: list[Raw], message: str) -> None:
    for kind in ("LeastAllocated", "MostAllocated"):
        with pytest.raises(PluginArgsError, match=message.replace("[", r"\[").replace("]", r"\]")):
            fit.new(strategy(kind, resources), FakeHandle())


SHAPE = {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}
RTCR = [
    pytest.param(
        pod_req(),
        [("node1", N4K), ("node2", N4K)],
        [("node1", pod_req()), ("node1", pod_req())],
        [100, 100],
        id="nothing scheduled, nothing requested (default - least requested nodes have priority)",
    ),
    pytest.param(
        pod_req(*REQ_1_2),
        [("node1", N4K), ("node2", N6K)],
        [("node1", pod_req()), ("node1", pod_req())],
        [38, 50],
        id="nothing scheduled, resources requested, differently sized nodes (default -"
        " least requested nodes have priority)",
    ),
    pytest.param(
        pod_req(),
        [("node1", N4K), ("node2", N6K)],
        [("node1", pod_req(cpu_mem("3000", "5000"))), ("node2", pod_req(cpu_mem("3000", "5000")))],
        [38, 50],
        id="no resources requested, pods scheduled with resources (default - least"
        " requested nodes have priority)",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "expected"), RTCR)
def test_requested_to_capacity_ratio_scoring_strategy(
    incoming: Pod,
    nodes: list[tuple[str, Req]],
    existing: list[tuple[str, Pod]],
    expected: list[int],
) -> None:
    args = strategy("RequestedToCapacityRatio", DEFAULT, requestedToCapacityRatio=SHAPE)
    plugin = fit.new(args, FakeHandle())
    assert scores(plugin, incoming, nodes, existing) == expected


@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        pytest.param(
            [(10, 1), (90, 9)],
            [
                (-10, 1),
                (0, 1),
                (9, 1),
                (10, 1),
                (15, 1),
                (19, 1),
                (20, 2),
                (89, 8),
                (90, 9),
                (99, 9),
                (100, 9),
                (110, 9),
            ],
            id="case_0",
        ),
        pytest.param(
            [(0, 2), (40, 10), (100, 0)],
            [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
            id="case_1",
        ),
        pytest.param(
            [(0, 2), (40, 2), (100, 2)],
            [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
            id="case_2",
        ),
    ],
)
def test_broken_linear_function(
    points: list[tuple[int, int]], assertions: list[tuple[int, int]]
) -> None:
    f = broken_linear(points)
    assert [f(p) for p, _ in assertions] == [want for _, want in assertions]


def test_a_decreasing_shape_truncates_toward_zero_as_go() -> None:
    # (100 - 0) from 10 to 0: at 15, 10 + (0 - 10) * 5 / 10 = 5; at 13, 10 - 3 = 7 (not 6)
    f = broken_linear([(10, 10), (20, 0)])
    assert (f(13), f(15)) == (7, 5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            strategy("Bogus", DEFAULT),
            "args.scoringStrategy.type: unsupported value",
            id="unknown strategy",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", DEFAULT),
            "args.scoringStrategy.requestedToCapacityRatio: required",
            id="missing shape",
        ),
        pytest.param(
            strategy("LeastAllocated", DEFAULT, requestedToCapacityRatio=SHAPE),
            "args.scoringStrategy.requestedToCapacityRatio: must be unset",
            id="shape with another strategy",
        ),
        pytest.param(
            strategy(
                "RequestedToCapacityRatio",
                DEFAULT,
                requestedToCapacityRatio={
                    "shape": [{"utilization": 50, "score": 1}, {"utilization": 40, "score": 2}]
                },
            ),
            r"args.scoringStrategy.requestedToCapacityRatio.shape\[1\].utilization: values must"
            " be sorted",
            id="unsorted shape",
        ),
        pytest.param(
            strategy(
                "RequestedToCapacityRatio",
                DEFAULT,
                requestedToCapacityRatio={"shape": [{"utilization": 50, "score": 11}]},
            ),
            r"shape\[0\].score: 11 not in range",
            id="score above 10",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.com/x"]},
            r"args.ignoredResourceGroups\[0\]",
            id="group with a slash",
        ),
    ],
)
def test_invalid_fit_args(args: Raw, message: str) -> None:
    with pytest.raises(PluginArgsError, match=message):
        fit.new(args, FakeHandle())


def test_default_args_are_least_allocated_over_cpu_and_memory() -> None:
    plugin = fit.new({}, FakeHandle())
    assert plugin.strategy == "LeastAllocated"
    assert scores(plugin, pod_req(*REQ_1_2), [("node1", N4K), ("node2", N6K)]) == [37, 50]


def cpu_only(cpu: str) -> Req:
    return {"cpu": cpu}


def n(name: str, cpu: int, mem: int, gpu: int | None = None) -> tuple[str, Req]:
    alloc = {"cpu": f"{cpu}m", "memory": str(mem)}
    if gpu is not None:
        alloc["nvidia.com/gpu"] = str(gpu)
    return name, alloc


REQ_BAL = (cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"))
WITH_GPU = [{"name": "cpu"}, {"name": "memory"}, {"name": "nvidia.com/gpu"}]
BALANCED = [
    pytest.param(
        pod_req(*REQ_BAL),
        [n("node1", 4000, 10000), n("node2", 6000, 10000)],
        [],
        {},
        [68, 75],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        pod_req(*REQ_BAL),
        [n("node1", 10000, 20000), n("node2", 10000, 20000)],
        [("node1", pod_req(cpu_only("1000m"), cpu_only("2000m"))), ("node2", pod_req(*REQ_BAL))],
        {},
        [73, 74],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        pod_req(*REQ_BAL),
        [n("node1", 10000, 20000), n("node2", 10000, 50000)],
        [("node1", pod_req(cpu_only("1000m"), cpu_only("2000m"))), ("node2", pod_req(*REQ_BAL))],
        {},
        [73, 70],
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        pod_req({"memory": "2000"}, {"memory": "3000"}),
        [n("node1", 3000, 5000), n("node2", 3000, 5000)],
        [("node1", pod_req(cpu_only("1000m"), cpu_only("2000m")))],
        {},
        [100, 50],
        id="resources requested, pods scheduled with resources, nodes to reach min/max score",
    ),
    pytest.param(
        pod_req(cpu_only("1000m"), cpu_only("2000m")),
        [n("node1", 6000, 10000), n("node2", 6000, 10000)],
        [("node1", pod_req(cpu_only("1000m"), cpu_only("2000m"))), ("node2", pod_req(*REQ_BAL))],
        {},
        [62, 62],
        id="requested resources at node capacity",
    ),
    pytest.param(
        pod_req({"cpu": "0", "memory": "0", "nvidia.com/gpu": "1"}),
        [n("node1", 3500, 40000, 8), n("node2", 3500, 40000, 8)],
        [
            (
                "node1",
                pod_req(
                    cpu_mem("1000m", "2000"),
                    {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"},
                ),
            ),
            ("node2", pod_req(*REQ_BAL)),
        ],
        {"resources": WITH_GPU},
        [75, 76],
        id="scalar resource is included in the score computation if pod requests the"
        " scalar resource",
    ),
    pytest.param(
        pod_req(*REQ_BAL),
        [n("node1", 3500, 40000, 8), n("node2", 3500, 40000)],
        [],
        {"resources": WITH_GPU},
        [56, 56],
        id="scalar resource is not included in the score computation if pod doesn't"
        " request the scalar resource",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "args", "expected"), BALANCED)
def test_node_resources_balanced_allocation(
    incoming: Pod,
    nodes: list[tuple[str, Req]],
    existing: list[tuple[str, Pod]],
    args: Raw,
    expected: list[int],
) -> None:
    plugin = balanced_allocation.new(args, FakeHandle())
    assert scores(plugin, incoming, nodes, existing) == expected


def test_balanced_allocation_skips_a_pod_requesting_nothing() -> None:
    # upstream: "nothing scheduled, nothing requested, skip in PreScore"
    plugin = balanced_allocation.new({}, FakeHandle())
    infos = [node_info(make_node("node1", allocatable=cpu_mem("4000m", "10000")))]
    assert plugin.pre_score(state(), pod_req(), infos) == SKIP


def test_balanced_allocation_without_pre_score() -> None:
    # upstream: "resources requested, pods scheduled with resources if PreScore not called"
    plugin = balanced_allocation.new({}, FakeHandle())
    got = scores(
        plugin,
        pod_req(*REQ_BAL),
        [n("node1", 10000, 20000), n("node2", 10000, 20000)],
        [("node1", pod_req(cpu_only("1000m"), cpu_only("2000m"))), ("node2", pod_req(*REQ_BAL))],
        pre_score=False,
    )
    assert got == [73, 74]


def test_balanced_allocation_weights_must_be_one() -> None:
    with pytest.raises(PluginArgsError, match=r"args.resources\[0\].weight: must be 1"):
        balanced_allocation.new({"resources": [{"name": "cpu", "weight": 2}]}, FakeHandle())


def test_an_empty_resource_list_means_cpu_and_memory() -> None:
    # v1 defaulting: upstream's "Resources not set" error cannot come from a configuration
    plugin = fit.new(strategy("LeastAllocated", []), FakeHandle())
    assert scores(plugin, pod_req(*REQ_1_2), [("node1", N4K), ("node2", N6K)]) == [37, 50]


def sidecar_pod(main: Req, sidecar: Req) -> Pod:
    return make_pod(
        containers=[{"name": "c", "resources": {"requests": dict(main)}}],
        initContainers=[
            {"name": "s", "restartPolicy": "Always", "resources": {"requests": dict(sidecar)}}
        ],
    )


RTCR_DOWN = {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}
RTCR_UP = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}
EXISTING = [
    ("node1", pod_req(cpu_mem("2000", "4000"))),
    ("node2", pod_req(cpu_mem("1000", "2000"))),
]
SIDECAR_EXISTING = [
    ("node1", sidecar_pod(cpu_mem("1000", "2000"), cpu_mem("1000", "2000"))),
    ("node2", pod_req(cpu_mem("1000", "2000"))),
]
FIT_SCORE = [
    pytest.param(
        pod_req(cpu_mem("3000", "5000")),
        [("node1", N4K), ("node2", N6K)],
        EXISTING,
        strategy("RequestedToCapacityRatio", DEFAULT, requestedToCapacityRatio=RTCR_DOWN),
        True,
        [10, 32],
        id="test case for ScoringStrategy RequestedToCapacityRatio case1",
    ),
    pytest.param(
        pod_req(cpu_mem("3000", "5000")),
        [("node1", N4K), ("node2", N6K)],
        EXISTING,
        strategy("RequestedToCapacityRatio", DEFAULT, requestedToCapacityRatio=RTCR_UP),
        True,
        [95, 68],
        id="test case for ScoringStrategy RequestedToCapacityRatio case2",
    ),
    pytest.param(
        pod_req(cpu_mem("1000", "2000")),
        [("node1", N4K), ("node2", N6K)],
        EXISTING,
        strategy("MostAllocated", DEFAULT),
        True,
        [67, 36],
        id="test case for ScoringStrategy MostAllocated",
    ),
    pytest.param(
        pod_req(cpu_mem("1000", "2000")),
        [("node1", N4K), ("node2", N6K)],
        EXISTING,
        strategy("LeastAllocated", DEFAULT),
        True,
        [32, 63],
        id="test case for ScoringStrategy LeastAllocated",
    ),
    pytest.param(
        pod_req(cpu_mem("3000", "5000")),
        [("node1", N4K), ("node2", N6K)],
        EXISTING,
        strategy("RequestedToCapacityRatio", DEFAULT, requestedToCapacityRatio=RTCR_DOWN),
        False,
        [10, 32],
        id="test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
    ),
    pytest.param(
        pod_req(cpu_mem("1000", "2000")),
        [("node1", N4K), ("node2", N6K)],
        EXISTING,
        strategy("MostAllocated", DEFAULT),
        False,
        [67, 36],
        id="test case for ScoringStrategy MostAllocated if PreScore is not called",
    ),
    pytest.param(
        pod_req(cpu_mem("1000", "2000")),
        [("node1", N4K), ("node2", N6K)],
        EXISTING,
        strategy("LeastAllocated", DEFAULT),
        False,
        [32, 63],
        id="test case for ScoringStrategy LeastAllocated if PreScore is not called",
    ),
    pytest.param(
        pod_req(cpu_mem("1000", "2000")),
        [("node1", N4K), ("node2", N4K)],
        SIDECAR_EXISTING,
        strategy("MostAllocated", DEFAULT),
        True,
        [67, 45],
        id="test case for ScoringStrategy MostAllocated with sidecar container",
    ),
    pytest.param(
        pod_req(cpu_mem("1000", "2000")),
        [("node1", N4K), ("node2", N4K)],
        SIDECAR_EXISTING,
        strategy("LeastAllocated", DEFAULT),
        True,
        [32, 55],
        id="test case for ScoringStrategy LeastAllocated with sidecar container",
    ),
]


@pytest.mark.parametrize(
    ("incoming", "nodes", "existing", "args", "pre_score", "expected"), FIT_SCORE
)
def test_fit_score(
    incoming: Pod,
    nodes: list[tuple[str, Req]],
    existing: list[tuple[str, Pod]],
    args: Raw,
    pre_score: bool,
    expected: list[int],
) -> None:
    plugin = fit.new(args, FakeHandle())
    assert scores(plugin, incoming, nodes, existing, pre_score=pre_score) == expected


FOO = "intel.com/foo"
BIN_NODES = [
    ("node1", {"cpu": "4000m", "memory": str(10000 * 1024 * 1024), FOO: "8"}),
    ("node2", {"cpu": "4000m", "memory": str(10000 * 1024 * 1024), FOO: "4"}),
]


@pytest.mark.parametrize(
    ("incoming", "existing", "expected"),
    [
        pytest.param(pod_req(), [], [0, 0], id="nothing scheduled, nothing requested"),
        pytest.param(
            pod_req({FOO: "2"}),
            [("none", pod_req())],
            [2, 5],
            id="resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            pod_req({FOO: "2"}),
            [("node2", pod_req({FOO: "2"}))],
            [2, 10],
            id="resources requested, pods scheduled with resources, on node with"
            " existing pod running ",
        ),
        pytest.param(
            pod_req({FOO: "4"}),
            [("none", pod_req())],
            [5, 10],
            id="resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_resource_bin_packing_single_extended(
    incoming: Pod, existing: list[tuple[str, Pod]], expected: list[int]
) -> None:
    args = strategy(
        "RequestedToCapacityRatio",
        [{"name": FOO, "weight": 1}],
        requestedToCapacityRatio={
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]
        },
    )
    plugin = fit.new(args, FakeHandle())
    assert scores(plugin, incoming, BIN_NODES, existing) == expected


BAR = "intel.com/bar"
MULTI_NODES = [
    ("node1", {"cpu": "4000m", "memory": str(10000 * 1024 * 1024), FOO: "8", BAR: "4"}),
    ("node2", {"cpu": "4000m", "memory": str(10000 * 1024 * 1024), FOO: "4", BAR: "8"}),
]
POD1 = {FOO: "2", BAR: "2"}
POD2 = {FOO: "4", BAR: "2"}


@pytest.mark.parametrize(
    ("incoming", "existing", "expected"),
    [
        pytest.param(pod_req(), [], [0, 0], id="nothing scheduled, nothing requested"),
        pytest.param(
            pod_req(POD1),
            [("none", pod_req())],
            [4, 3],
            id="resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            pod_req(POD1),
            [("node2", pod_req(POD2))],
            [4, 7],
            id="resources requested, pods scheduled with resources, on node with"
            " existing pod running ",
        ),
        pytest.param(
            pod_req(POD2),
            [("none", pod_req())],
            [5, 5],
            id="resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_resource_bin_packing_multiple_extended(
    incoming: Pod, existing: list[tuple[str, Pod]], expected: list[int]
) -> None:
    args = strategy(
        "RequestedToCapacityRatio",
        [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}],
        requestedToCapacityRatio={
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]
        },
    )
    plugin = fit.new(args, FakeHandle())
    assert scores(plugin, incoming, MULTI_NODES, existing) == expected
