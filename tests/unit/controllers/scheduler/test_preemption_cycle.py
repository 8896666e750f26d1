"""Preemption for the live scheduler's unschedulable pods: cpu room is freed by evicting a
lower-priority pod; a device held only by a victim is counted free (beyond kube-scheduler
v1.37.2, KEP-5690), one shared with a pod that stays never is."""

from __future__ import annotations

from typing import Any

from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import State, Unschedulable, decide_pod
from dra_operator.controllers.scheduler._preemption_cycle import find_victims, nominated_allocation
from dra_operator.controllers.scheduler.framework import Nominator
from dra_operator.controllers.scheduler.plugins.defaultpreemption import Candidate
from dra_operator.model import Pod
from dra_operator.observability import Metrics

from .builders import NS, claim, device_class, new_state, node, pod, resource_slice, settings


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
        if kind == "claim" and change is not None:
            state.ledger.observe(change)
        if kind == "pod" and change is not None and change.new is not None:
            state.node_infos.pod_changed(change.new.obj)
        if kind == "node" and change is not None and change.new is not None:
            state.node_infos.node_changed(change.new.obj)
    return state


def _prioritized(raw: dict[str, Any], priority: int) -> dict[str, Any]:
    raw["spec"]["priority"] = priority
    return raw


def _pod(state: State, name: str) -> Pod:
    entry = state.pods.get(ObjectKey(NS, name))
    assert entry is not None
    return entry.obj


def _holding(raw: dict[str, Any], node_name: str, holder: dict[str, Any]) -> dict[str, Any]:
    """`raw` allocated gpu-0 on `node_name`, reserved for pod `holder`."""
    raw["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "gpu",
                        "driver": "gpu.example.com",
                        "pool": node_name,
                        "device": "gpu-0",
                    }
                ]
            },
        },
        "reservedFor": [
            {
                "resource": "pods",
                "name": holder["metadata"]["name"],
                "uid": holder["metadata"]["uid"],
            }
        ],
    }
    return raw


def _find(state: State, name: str) -> tuple[list[str], str]:
    metrics = Metrics()
    candidate, message = find_victims(
        _pod(state, name),
        state,
        settings(),
        nominator=Nominator(),
        budgets=lambda: (),
        metrics=metrics,
    )
    attempts = metrics.registry.get_sample_value("scheduler_preemption_attempts_total")
    assert attempts == 1.0  # PostFilter ran once, whatever it found
    victims = [v.metadata.name for v in candidate.victims] if candidate else []
    return victims, message


def test_a_low_priority_pod_holding_the_cpu_is_chosen_for_a_high_one_with_a_claim() -> None:
    low = _prioritized(pod("low", cpu="1", node_name="n1"), 0)
    high = _prioritized(pod("high", claims=["c"], cpu="1"), 1000)
    state = _state(
        ("class", device_class()),
        ("node", node("n1", allocatable={"cpu": "1", "pods": "10"})),
        ("slice", resource_slice("n1", 1)),
        ("claim", claim("c")),
        ("pod", low),
        ("pod", high),
    )
    assert isinstance(decide_pod(_pod(state, "high"), state, settings()), Unschedulable)
    victims, message = _find(state, "high")
    assert victims == ["low"]
    assert (
        message
        == "preemption: found a potential placement for pod on node n1, preempting 1 victims"
    )


def test_a_pod_of_equal_priority_is_never_a_victim() -> None:
    state = _state(
        ("class", device_class()),
        ("node", node("n1", allocatable={"cpu": "1", "pods": "10"})),
        ("slice", resource_slice("n1", 1)),
        ("claim", claim("c")),
        ("pod", _prioritized(pod("low", cpu="1", node_name="n1"), 5)),
        ("pod", _prioritized(pod("high", claims=["c"], cpu="1"), 5)),
    )
    victims, message = _find(state, "high")
    assert victims == []
    assert message == (
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_a_device_held_only_by_the_victim_is_counted_free_and_nominated() -> None:
    low = _prioritized(pod("low", claims=["held"], node_name="n1"), 0)
    high = _prioritized(pod("high", claims=["c"]), 1000)
    state = _state(
        ("class", device_class()),
        ("node", node("n1", allocatable={"cpu": "1", "pods": "10"})),
        ("slice", resource_slice("n1", 1)),
        ("claim", _holding(claim("held"), "n1", low)),
        ("claim", claim("c")),
        ("pod", low),
        ("pod", high),
    )
    victims, _ = _find(state, "high")
    assert victims == ["low"]  # beyond upstream: its only GPU is freed with it (KEP-5690)
    candidate = Candidate("n1", (_pod(state, "low"),), 0)
    [(uid, allocation)] = nominated_allocation(_pod(state, "high"), candidate, state, settings())
    claim_c = state.claims.get(ObjectKey(NS, "c"))
    assert claim_c is not None and uid == claim_c.obj.metadata.uid
    assert [r.device for r in allocation.devices.results] == ["gpu-0"]


def test_a_claim_shared_with_a_pod_that_stays_is_never_counted_free() -> None:
    low = _prioritized(pod("low", claims=["held"], node_name="n1"), 0)
    peer = _prioritized(pod("peer", claims=["held"], node_name="n1"), 2000)
    high = _prioritized(pod("high", claims=["c"]), 1000)
    shared = _holding(claim("held"), "n1", low)
    shared["status"]["reservedFor"].append(
        {"resource": "pods", "name": "peer", "uid": peer["metadata"]["uid"]}
    )
    state = _state(
        ("class", device_class()),
        ("node", node("n1", allocatable={"cpu": "2", "pods": "10"})),
        ("slice", resource_slice("n1", 1)),
        ("claim", shared),
        ("claim", claim("c")),
        ("pod", low),
        ("pod", peer),
        ("pod", high),
    )
    victims, message = _find(state, "high")
    assert victims == []  # evicting low frees nothing: peer (higher priority) keeps the claim
    assert message.startswith("preemption: 0/1 nodes are available: 1 cannot allocate all claims")


def test_a_node_without_the_device_is_not_preempted_on() -> None:
    state = _state(
        ("class", device_class()),
        ("node", node("n1", allocatable={"cpu": "1", "pods": "10"})),
        ("claim", claim("c")),
        ("pod", _prioritized(pod("low", cpu="1", node_name="n1"), 0)),
        ("pod", _prioritized(pod("high", claims=["c"], cpu="1"), 1000)),
    )
    victims, _ = _find(state, "high")
    assert victims == []
