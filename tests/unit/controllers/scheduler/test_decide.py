"""Decisions over real stores: claim resolution, node choice, sharing, waits, explanations."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as settings_hypothesis
from hypothesis import strategies as st
from tests.support.counts import property_examples

from dra_operator import names
from dra_operator.allocator import BinPack, Features
from dra_operator.cluster import ObjectKey
from dra_operator.controllers.scheduler import (
    Placement,
    Settings,
    State,
    Unschedulable,
    Wait,
    decide_claim,
    decide_pod,
)
from dra_operator.model import AllocationResult, Pod, ResourceClaim, render_allocation_result

from .builders import (
    NS,
    claim,
    device_class,
    new_state,
    node,
    pod,
    resource_slice,
    settings,
)


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


def _pod(state: State, name: str) -> Pod:
    entry = state.pods.get(ObjectKey(NS, name))
    assert entry is not None
    return entry.obj


def _claim(state: State, name: str) -> ResourceClaim:
    entry = state.claims.get(ObjectKey(NS, name))
    assert entry is not None
    return entry.obj


def _cluster(*node_devices: tuple[str, int]) -> list[tuple[str, dict[str, Any]]]:
    objects: list[tuple[str, dict[str, Any]]] = [("class", device_class())]
    for name, count in node_devices:
        objects.append(("node", node(name)))
        if count:
            objects.append(("slice", resource_slice(name, count)))
    return objects


def _allocated(raw: dict[str, Any], node_name: str, *devices: str, reserved: int = 0) -> None:
    """Mark a raw claim allocated on `node_name` (with `reserved` made-up consumers)."""
    raw["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": node_name, "device": d}
                    for d in devices
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [node_name]}
                        ]
                    }
                ]
            },
        },
        "reservedFor": [
            {"resource": "pods", "name": f"other-{i}", "uid": f"other-{i}"} for i in range(reserved)
        ],
    }


def _devices(allocation: AllocationResult | None) -> list[str]:
    assert allocation is not None
    return [r.device for r in allocation.devices.results]


def test_allocates_on_the_first_node_by_name_when_scores_tie() -> None:
    state = _state(
        *_cluster(("n2", 1), ("n1", 1)), ("claim", claim("c")), ("pod", pod("p", claims=["c"]))
    )
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert isinstance(decision, Placement)
    assert decision.node == "n1" and decision.bind
    (write,) = decision.claims
    assert write.key == ObjectKey(NS, "c") and _devices(write.allocation) == ["gpu-0"]
    assert write.resource_version == _claim(state, "c").metadata.resource_version
    assert decision.consumer is not None and decision.consumer.name == "p"


def test_the_policy_score_chooses_the_node() -> None:
    # BinPack scores a node by its devices already in use: n2 has one, n1 none.
    used = claim("used")
    _allocated(used, "n2", "gpu-0")
    state = _state(
        *_cluster(("n1", 2), ("n2", 2)),
        ("claim", used),
        ("claim", claim("c")),
        ("pod", pod("p", claims=["c"])),
    )
    base = settings()
    binpack = Settings(features=base.features, policy=BinPack(), selectors=base.selectors)
    decision = decide_pod(_pod(state, "p"), state, binpack)
    assert isinstance(decision, Placement) and decision.node == "n2"


def test_no_device_explains_per_node_and_other_reasons_count_too() -> None:
    used = claim("used")
    _allocated(used, "n1", "gpu-0")
    tainted = node("n3", taints=[("dedicated", "x", "NoSchedule")])
    state = _state(
        *_cluster(("n1", 1), ("n2", 0)),
        ("node", tainted),
        ("claim", used),
        ("claim", claim("c")),
        ("pod", pod("p", claims=["c"])),
    )
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert decision == Unschedulable(
        "0/3 nodes are available: "
        "1 cannot allocate claim c (request gpu: 0/0 devices usable), "
        "1 cannot allocate claim c (request gpu: 0/1 devices usable: 1 in use), "
        "1 node(s) had untolerated taint(s)."
    )


def test_in_flight_allocations_are_in_use_for_the_next_decision() -> None:
    state = _state(
        *_cluster(("n1", 1)),
        ("claim", claim("a")),
        ("claim", claim("b")),
        ("pod", pod("pa", claims=["a"])),
        ("pod", pod("pb", claims=["b"])),
    )
    first = decide_pod(_pod(state, "pa"), state, settings())
    assert isinstance(first, Placement)
    (write,) = first.claims
    assert write.allocation is not None
    state.ledger.reserve(write.uid, write.allocation)
    second = decide_pod(_pod(state, "pb"), state, settings())
    assert isinstance(second, Unschedulable)
    assert "1 in use" in second.message
    state.ledger.rollback(write.uid)
    assert isinstance(decide_pod(_pod(state, "pb"), state, settings()), Placement)


def test_shared_allocated_claim_is_only_reserved_on_its_node() -> None:
    shared = claim("shared")
    _allocated(shared, "n2", "gpu-0", reserved=1)
    state = _state(
        *_cluster(("n1", 1), ("n2", 1)), ("claim", shared), ("pod", pod("p", claims=["shared"]))
    )
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert isinstance(decision, Placement) and decision.node == "n2"
    (write,) = decision.claims
    assert write.allocation is None


def _skipping_claim(name: str) -> dict[str, Any]:
    """A claim allocated on a node-independent device whose result skips node operations."""
    raw = claim(name)
    raw["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "gpu",
                        "driver": "gpu.example.com",
                        "pool": "fabric",
                        "device": "gpu-0",
                        "skipNodeOperations": ["*"],
                    }
                ]
            }
        }
    }
    return raw


def _declaring(name: str, *features: str) -> dict[str, Any]:
    raw = node(name)
    raw["status"]["declaredFeatures"] = list(features)
    return raw


@pytest.mark.parametrize(("release", "chosen"), [("1.36", "n1"), ("1.37", "n2")])
def test_an_allocation_skipping_node_operations_needs_a_node_declaring_the_feature(
    release: str, chosen: str
) -> None:
    """1.37's Filter (DRAOptionalNodeOperations): such a claim is unavailable on a node whose
    status.declaredFeatures lacks the feature; 1.36 has no such field."""
    state = _state(
        ("class", device_class()),
        ("node", _declaring("n1", "SomethingElse")),
        ("node", _declaring("n2", "DRAOptionalNodeOperations")),
        ("claim", _skipping_claim("net")),
        ("pod", pod("p", claims=["net"])),
    )
    features = Features.for_kubernetes(release)
    decision = decide_pod(_pod(state, "p"), state, settings(features))
    assert isinstance(decision, Placement) and decision.node == chosen


def test_no_node_declaring_optional_node_operations_is_upstreams_unavailable_claim() -> None:
    state = _state(
        ("class", device_class()),
        ("node", node("n1")),
        ("node", node("n2")),
        ("claim", _skipping_claim("net")),
        ("pod", pod("p", claims=["net"])),
    )
    decision = decide_pod(_pod(state, "p"), state, settings(Features.for_kubernetes("1.37")))
    assert decision == Unschedulable(
        "0/2 nodes are available: 2 resourceclaim not available on the node."
    )


def test_shared_claim_with_allocation_in_flight_waits() -> None:
    state = _state(
        *_cluster(("n1", 1)), ("claim", claim("shared")), ("pod", pod("p", claims=["shared"]))
    )
    first = decide_pod(_pod(state, "p"), state, settings())
    assert isinstance(first, Placement) and first.claims[0].allocation is not None
    state.ledger.reserve(first.claims[0].uid, first.claims[0].allocation)
    state.pods.apply(
        "ADDED",
        {
            **pod("q", claims=["shared"]),
            "metadata": {"name": "q", "namespace": NS, "uid": "q", "resourceVersion": "9"},
        },
    )
    assert decide_pod(_pod(state, "q"), state, settings()) == Wait(
        f"resource claim {NS}/shared is in the process of being allocated"
    )


def test_full_reserved_for_refuses_another_consumer() -> None:
    shared = claim("shared")
    _allocated(shared, "n1", "gpu-0", reserved=256)
    state = _state(*_cluster(("n1", 1)), ("claim", shared), ("pod", pod("p", claims=["shared"])))
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert decision == Unschedulable(
        f"0/1 nodes are available: resourceclaim {NS}/shared in use by 256 consumers."
    )


def test_allocated_claim_with_untolerated_device_taint_is_not_reserved_for_new_pods() -> None:
    shared = claim("shared")
    _allocated(shared, "n1", "gpu-0", reserved=1)
    objects = _cluster(("n1", 0))
    objects.append(("slice", resource_slice("n1", 1, taints=[("broken", "NoExecute")])))
    state = _state(*objects, ("claim", shared), ("pod", pod("p", claims=["shared"])))
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert isinstance(decision, Unschedulable)
    assert "device gpu.example.com/n1/gpu-0 has untolerated taint broken=:NoExecute" in (
        decision.message
    )


@pytest.mark.parametrize(
    ("templates", "owned", "expected"),
    [
        pytest.param(
            {"gpu": None},
            True,
            Wait(f'pod "{NS}/p": ResourceClaim not created yet'),
            id="status-not-written-yet",
        ),
        pytest.param(
            {"gpu": "p-gpu-abcde"},
            None,
            Wait('resourceclaim "p-gpu-abcde" not found'),
            id="claim-not-in-cache-yet",
        ),
        pytest.param(
            {"gpu": "p-gpu-abcde"},
            False,
            Unschedulable(
                f"0/1 nodes are available: ResourceClaim {NS}/p-gpu-abcde was not created for "
                f"Pod {NS}/p (Pod is not owner)."
            ),
            id="not-owner",
        ),
    ],
)
def test_generated_claims(
    templates: dict[str, str | None], owned: bool | None, expected: object
) -> None:
    the_pod = pod("p", templates=templates)
    objects = _cluster(("n1", 1))
    if owned is not None:
        objects.append(("claim", claim("p-gpu-abcde", owner=the_pod if owned else pod("stranger"))))
    state = _state(*objects, ("pod", the_pod))
    assert decide_pod(_pod(state, "p"), state, settings()) == expected


def test_generated_claim_owned_by_the_pod_is_allocated() -> None:
    the_pod = pod("p", templates={"gpu": "p-gpu-abcde"})
    state = _state(
        *_cluster(("n1", 1)), ("claim", claim("p-gpu-abcde", owner=the_pod)), ("pod", the_pod)
    )
    assert isinstance(decide_pod(_pod(state, "p"), state, settings()), Placement)


def test_pod_with_node_name_gets_its_claims_allocated_there_without_binding() -> None:
    state = _state(
        *_cluster(("n1", 1), ("n2", 1)),
        ("claim", claim("c")),
        ("pod", pod("p", claims=["c"], node_name="n2", cpu="100")),
    )
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert isinstance(decision, Placement)
    assert decision.node == "n2" and not decision.bind  # no resource fit for a bound pod


def test_pod_with_node_name_and_nothing_to_do_is_left_alone() -> None:
    shared = claim("c")
    _allocated(shared, "n1", "gpu-0")
    raw_pod = pod("p", claims=["c"], node_name="n1")
    shared["status"]["reservedFor"] = [
        {"resource": "pods", "name": "p", "uid": raw_pod["metadata"]["uid"]}
    ]
    state = _state(*_cluster(("n1", 1)), ("claim", shared), ("pod", raw_pod))
    assert decide_pod(_pod(state, "p"), state, settings()) is None


def test_invalid_cel_in_a_class_fails_the_pod_with_the_compile_error() -> None:
    state = _state(
        ("class", device_class("broken", "device.driver ==")),
        ("node", node("n1")),
        ("slice", resource_slice("n1", 1)),
        ("claim", claim("c", class_name="broken")),
        ("pod", pod("p", claims=["c"])),
    )
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert isinstance(decision, Unschedulable)
    assert decision.message.startswith("0/1 nodes are available: ")
    assert "CEL compile error" in decision.message


def test_missing_class_fails_the_pod() -> None:
    state = _state(
        ("node", node("n1")),
        ("slice", resource_slice("n1", 1)),
        ("claim", claim("c", class_name="nope")),
        ("pod", pod("p", claims=["c"])),
    )
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert isinstance(decision, Unschedulable) and "nope" in decision.message


@pytest.mark.parametrize(
    ("annotations", "expected_node"),
    [
        pytest.param({names.ALLOCATE_ANNOTATION: names.ALLOCATE_IMMEDIATE}, "n1", id="any-node"),
        pytest.param(
            {names.ALLOCATE_ANNOTATION: names.ALLOCATE_IMMEDIATE, names.NODE_ANNOTATION: "n2"},
            "n2",
            id="named-node",
        ),
        pytest.param({}, None, id="not-asked"),
    ],
)
def test_immediate_claims(annotations: dict[str, str], expected_node: str | None) -> None:
    state = _state(*_cluster(("n1", 1), ("n2", 1)), ("claim", claim("c", annotations=annotations)))
    decision = decide_claim(_claim(state, "c"), state, settings())
    if expected_node is None:
        assert decision is None
        return
    assert isinstance(decision, Placement)
    assert decision.node == expected_node and decision.pod is None and not decision.bind
    assert decision.claims[0].allocation is not None
    rendered = render_allocation_result(decision.claims[0].allocation)
    assert rendered["devices"]["results"][0]["pool"] == expected_node


def test_without_device_taints_the_taint_check_is_off() -> None:
    shared = claim("shared")
    _allocated(shared, "n1", "gpu-0", reserved=1)
    objects = _cluster(("n1", 0))
    objects.append(("slice", resource_slice("n1", 1, taints=[("broken", "NoExecute")])))
    state = _state(*objects, ("claim", shared), ("pod", pod("p", claims=["shared"])))
    old = settings(Features.for_kubernetes("1.33"))
    assert isinstance(decide_pod(_pod(state, "p"), state, old), Placement)


@settings_hypothesis(max_examples=property_examples(25), deadline=None)
@given(
    devices=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=3),
    pods=st.integers(min_value=1, max_value=8),
    counts=st.lists(st.integers(min_value=1, max_value=2), min_size=8, max_size=8),
)
def test_serial_decisions_never_hand_out_a_device_twice(
    devices: list[int], pods: int, counts: list[int]
) -> None:
    """Decide pod after pod, reserving each placement: no device is ever placed twice, and a
    pod is refused only when the devices left on every node are too few for it."""
    objects = _cluster(*((f"n{i}", n) for i, n in enumerate(devices)))
    for i in range(pods):
        objects += [
            ("claim", claim(f"c{i}", count=counts[i])),
            ("pod", pod(f"p{i}", claims=[f"c{i}"])),
        ]
    state = _state(*objects)
    used: list[tuple[str, str]] = []
    free = {f"n{i}": n for i, n in enumerate(devices)}
    for i in range(pods):
        decision = decide_pod(_pod(state, f"p{i}"), state, settings())
        if isinstance(decision, Unschedulable):
            assert all(left < counts[i] for left in free.values())
            continue
        assert isinstance(decision, Placement)
        (write,) = decision.claims
        assert write.allocation is not None
        state.ledger.reserve(write.uid, write.allocation)
        picked = [(r.pool, r.device) for r in write.allocation.devices.results]
        used += picked
        free[decision.node] -= len(picked)
    assert len(used) == len(set(used))


def test_a_claim_named_twice_by_one_pod_is_allocated_once() -> None:
    raw_pod = pod("p", claims=["c"])
    raw_pod["spec"]["resourceClaims"].append({"name": "again", "resourceClaimName": "c"})
    state = _state(*_cluster(("n1", 2)), ("claim", claim("c")), ("pod", raw_pod))
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert isinstance(decision, Placement) and len(decision.claims) == 1


def test_a_claim_the_pod_names_that_does_not_exist_is_reported() -> None:
    """Found by tests/chaos/test_hostile_input.py: the pod waited without a word."""
    state = _state(*_cluster(("n1", 1)), ("pod", pod("p", claims=["gone"])))
    decision = decide_pod(_pod(state, "p"), state, settings())
    assert isinstance(decision, Unschedulable)
    assert 'resourceclaim "gone" not found' in decision.message
