"""Node-allocatable devices in the scheduler (DRANodeAllocatableResources), as kube-scheduler
v1.37.2's DynamicResources Filter and PreBind treat them (`nodeallocatabledynamicresources.go`,
after its tests `TestNodeFitsNativeResources`, `TestValidateNodeAllocatableDRAClaimSharing`,
`TestPatchNodeAllocatableResourceClaimStatus`): the devices' amounts count against the node's
allocatable, a claim with a mapped device is not shared, the pod's status records the amounts."""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator.controllers.scheduler import Placement, State, Unschedulable, decide_pod
from dra_operator.controllers.scheduler._nodealloc_fit import status_patch

from .builders import (
    DRIVER,
    NS,
    claim,
    device_class,
    new_state,
    node,
    pod,
    settings,
)
from .test_scheduler import WatchedWorld, eventually, running


def _slice(node_name: str, count: int, resources: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-cpus", "uid": f"slice-{node_name}"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node_name,
            "devices": [
                {"name": f"cpu-{i}", "nodeAllocatableResources": resources} for i in range(count)
            ],
        },
    }


CPU_MAPPED = {"cpu": {"mapping": {"deviceMultiplier": "2"}}}
MEMORY_OVERHEAD = {"memory": {"overhead": {"perPod": "1Gi"}}}


def _state(*objects: tuple[str, dict[str, Any]]) -> State:
    state = new_state()
    stores: dict[str, Any] = {
        "node": state.nodes,
        "class": state.classes,
        "slice": state.slices,
        "claim": state.claims,
        "pod": state.pods,
    }
    for version, (kind, raw) in enumerate(objects, start=1):
        raw["metadata"].setdefault("resourceVersion", str(version))
        change = stores[kind].apply("ADDED", raw)
        assert change is not None and change.new is not None
        if kind == "claim":
            state.ledger.observe(change)
        if kind == "node":
            state.node_infos.node_changed(change.new.obj)
        if kind == "pod":
            state.node_infos.pod_changed(change.new.obj)
    return state


def _consumer(name: str, *, cpu: str = "1", claims: tuple[str, ...] = ("c",)) -> dict[str, Any]:
    raw = pod(name, claims=claims, cpu=cpu)
    raw["spec"]["containers"][0]["resources"]["claims"] = [{"name": c} for c in claims]
    return raw


def _decide(state: State, name: str) -> Any:
    entry = state.pods.get(next(e.key for e in state.pods if e.key.name == name))
    assert entry is not None
    return decide_pod(entry.obj, state, settings())


def test_mapped_devices_count_against_the_nodes_cpu_and_another_node_is_chosen() -> None:
    small = node("a-small", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"})
    big = node("b-big", allocatable={"cpu": "8", "memory": "8Gi", "pods": "110"})
    state = _state(
        ("node", small),
        ("node", big),
        ("class", device_class()),
        ("slice", _slice("a-small", 2, CPU_MAPPED)),
        ("slice", _slice("b-big", 2, CPU_MAPPED)),
        ("claim", claim("c", count=2)),
        ("pod", _consumer("p")),
    )
    decision = _decide(state, "p")
    assert isinstance(decision, Placement)
    assert decision.node == "b-big"  # 1 cpu + 2 devices x 2 cpu = 5 > 4 on a-small
    (status,) = decision.node_allocatable
    assert status.resource_claim_name == "c"
    assert status.containers == ("c",)
    assert [(n, str(q)) for n, q in status.mapping] == [("cpu", "4")]


@pytest.mark.parametrize(
    ("resources", "reason"),
    [
        pytest.param(CPU_MAPPED, "Insufficient cpu", id="cpu"),
        pytest.param(
            {"memory": {"mapping": {"deviceMultiplier": "8Gi"}}}, "Insufficient memory", id="memory"
        ),
        pytest.param(
            {"hugepages-2Mi": {"overhead": {"perPod": "1Gi"}}},
            "Insufficient hugepages-2Mi",
            id="hugepages",
        ),
    ],
)
def test_a_pod_whose_claims_do_not_fit_the_node_gets_upstreams_reason(
    resources: dict[str, Any], reason: str
) -> None:
    state = _state(
        ("node", node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"})),
        ("class", device_class()),
        ("slice", _slice("n1", 2, resources)),
        ("claim", claim("c", count=2)),
        ("pod", _consumer("p")),
    )
    decision = _decide(state, "p")
    assert isinstance(decision, Unschedulable)
    assert decision.message == f"0/1 nodes are available: 1 {reason}."


def test_overhead_only_devices_fit_and_are_recorded_per_pod() -> None:
    state = _state(
        ("node", node("n1")),
        ("class", device_class()),
        ("slice", _slice("n1", 1, MEMORY_OVERHEAD)),
        ("claim", claim("c")),
        ("pod", _consumer("p")),
    )
    decision = _decide(state, "p")
    assert isinstance(decision, Placement)
    assert status_patch(decision.node_allocatable) == {
        "status": {
            "nodeAllocatableResourceClaimStatuses": [
                {
                    "resourceClaimName": "c",
                    "containers": ["c"],
                    "overhead": [{"name": "memory", "perPod": "1Gi"}],
                }
            ]
        }
    }


def _allocated(raw: dict[str, Any], reserved_for: str) -> dict[str, Any]:
    raw["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "cpu-0"}]
            }
        },
        "reservedFor": [{"resource": "pods", "name": reserved_for, "uid": f"uid-{reserved_for}"}],
    }
    return raw


def test_a_claim_with_a_mapped_device_is_not_shared_with_another_pod() -> None:
    state = _state(
        ("node", node("n1", allocatable={"cpu": "16", "memory": "8Gi", "pods": "110"})),
        ("class", device_class()),
        ("slice", _slice("n1", 1, CPU_MAPPED)),
        ("claim", _allocated(claim("c"), "first")),
        ("pod", _consumer("second")),
    )
    decision = _decide(state, "second")
    assert isinstance(decision, Unschedulable)
    assert decision.message == (
        "0/1 nodes are available: 1 node allocatable resource claim c has a mapped device "
        "and cannot be shared across pods."
    )


def test_a_claim_with_overhead_only_may_be_shared() -> None:
    state = _state(
        ("node", node("n1")),
        ("class", device_class()),
        ("slice", _slice("n1", 1, MEMORY_OVERHEAD)),
        ("claim", _allocated(claim("c"), "first")),
        ("pod", _consumer("second")),
    )
    decision = _decide(state, "second")
    assert isinstance(decision, Placement) and decision.node == "n1"
    assert [s.resource_claim_name for s in decision.node_allocatable] == ["c"]


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.looptime
async def test_the_scheduler_records_the_amounts_in_the_pod_status_before_binding() -> None:
    world = WatchedWorld()
    world.put("classes", device_class())
    world.put("nodes", node("n1", allocatable={"cpu": "16", "memory": "8Gi", "pods": "110"}))
    world.put("slices", _slice("n1", 1, CPU_MAPPED))
    world.put("claims", claim("c"))
    world.put("pods", _consumer("p"))
    async with running(world) as scheduler:
        await eventually(lambda: bool(world.get("pods", NS, "p")["spec"].get("nodeName")))
        await scheduler.wait_for_writes()
    assert world.calls.index(f"pod status {NS}/p") < world.calls.index(f"bind {NS}/p n1")
    status = world.get("pods", NS, "p")["status"]["nodeAllocatableResourceClaimStatuses"]
    assert status == [
        {
            "resourceClaimName": "c",
            "containers": ["c"],
            "mapping": [{"name": "cpu", "quantity": "2"}],
        }
    ]
