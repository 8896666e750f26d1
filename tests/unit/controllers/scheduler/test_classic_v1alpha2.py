"""Classic DRA decisions for v1alpha2 claims (1.27–1.30; classic-dra.md §3.5–3.9, 1.30).

The stores parse v1alpha2 as the operator's caches do on such a server. Covers: a claim of a classic
ResourceClass goes through the context protocol (proposal, selection); the class's
`suitableNodes` excludes nodes (`excluded by resource class node filter`); a missing class, a
class with `structuredParameters` where no 1.30 slices are read (test_named.py covers them where
they are) and an unallocated `Immediate` claim fail PreFilter with 1.30's texts; an allocated
claim (the driver's `availableOnNodes`) binds the pod on its node; an allocation that is not
shareable and reserved by another pod is `resourceclaim in use`; PostFilter hands back a
WaitForFirstConsumer claim in the way, never an Immediate one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from dra_operator.cluster import CLAIM_INDEXERS, Store
from dra_operator.controllers.scheduler import (
    DEALLOCATION_DONE,
    WAITING_FOR_DRIVER,
    WAITING_TO_ALLOCATE,
    Placement,
    PublishContext,
    RequestDeallocation,
    State,
    Unschedulable,
    decide_pod,
    waiting_texts,
)
from dra_operator.model import (
    parse_device_class,
    parse_pod_scheduling_context,
    parse_resource_claim,
)

from .builders import NS, new_state, node, pod, settings

DRIVER = "classic.example.com"
CLASS = "gpu"


def _class(*, structured: bool = False, suitable: str | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"metadata": {"name": CLASS}, "driverName": DRIVER}
    if structured:
        raw["structuredParameters"] = True
    if suitable is not None:
        term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [suitable]}]}
        raw["suitableNodes"] = {"nodeSelectorTerms": [term]}
    return raw


def _claim(name: str, *, immediate: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceClassName": CLASS}
    if immediate:
        spec["allocationMode"] = "Immediate"
    return {"metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"}, "spec": spec}


def _allocated(raw: dict[str, Any], node_name: str, *reserved: str, shareable: bool) -> Any:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    raw["status"] = {
        "driverName": DRIVER,
        "allocation": {
            "availableOnNodes": {"nodeSelectorTerms": [term]},
            "resourceHandles": [{"driverName": DRIVER, "data": "{}"}],
            "shareable": shareable,
        },
        "reservedFor": [{"resource": "pods", "name": uid, "uid": uid} for uid in reserved],
    }
    return raw


def _state(resource_class: dict[str, Any] | None, *objects: tuple[str, dict[str, Any]]) -> State:
    state = new_state()
    state.claims = Store(
        "resourceclaims", lambda raw: parse_resource_claim(raw, "v1alpha2"), CLAIM_INDEXERS
    )
    state.classes = Store("deviceclasses", lambda raw: parse_device_class(raw, "v1alpha2"))
    state.contexts = Store("podschedulingcontexts", parse_pod_scheduling_context)
    for name in ("n1", "n2", "n3"):
        state.nodes.apply("ADDED", node(name, labels={"kubernetes.io/hostname": name}))
    if resource_class is not None:
        state.classes.apply("ADDED", resource_class)
    stores: dict[str, Any] = {"claim": state.claims, "pod": state.pods}
    for version, (kind, raw) in enumerate(objects, start=1):
        raw["metadata"].setdefault("resourceVersion", str(version))
        stores[kind].apply("ADDED", raw)
    return state


def _decide(state: State) -> Any:
    entry = next(iter(state.pods))
    return decide_pod(entry.obj, state, settings())


def test_a_classic_class_sends_its_claim_through_the_context() -> None:
    p = pod("p", claims=["c"])
    decision = _decide(_state(_class(), ("claim", _claim("c")), ("pod", p)))
    assert isinstance(decision, Unschedulable)
    assert decision.message == WAITING_FOR_DRIVER
    assert isinstance(decision.classic, PublishContext)
    assert decision.classic.selected_node == "n1"
    assert decision.classic.potential_nodes == ("n1", "n2", "n3")


@pytest.mark.parametrize(
    ("minor", "text"),
    [
        (27, 'running Reserve plugin "DynamicResources": ' + WAITING_TO_ALLOCATE),
        (28, f"0/1 nodes are available: 1 {WAITING_TO_ALLOCATE}."),
        (29, f"0/1 nodes are available: 1 {WAITING_TO_ALLOCATE}."),
        (30, WAITING_FOR_DRIVER),
    ],
)
def test_a_pod_waiting_for_its_driver_is_told_so_in_its_release_words(
    minor: int, text: str
) -> None:
    """1.27-1.29 stopped in Reserve (1.27 wrapping it as a plugin error), 1.30 in PreBind."""
    state = _state(_class(), ("claim", _claim("c")), ("pod", pod("p", claims=["c"])))
    entry = next(iter(state.pods))
    waiting = replace(settings(), waiting=waiting_texts(minor))
    decision = decide_pod(entry.obj, state, waiting)
    assert isinstance(decision, Unschedulable)
    assert (decision.message, isinstance(decision.classic, PublishContext)) == (text, True)


def test_the_resource_class_suitable_nodes_limit_the_proposal() -> None:
    p = pod("p", claims=["c"])
    decision = _decide(_state(_class(suitable="n2"), ("claim", _claim("c")), ("pod", p)))
    assert isinstance(decision.classic, PublishContext)
    assert decision.classic.potential_nodes == ("n2",)
    assert decision.classic.selected_node == "n2"
    p = pod("p", claims=["c"], node_selector={"kubernetes.io/hostname": "n1"})
    decision = _decide(_state(_class(suitable="n2"), ("claim", _claim("c")), ("pod", p)))
    assert isinstance(decision, Unschedulable)
    assert "excluded by resource class node filter" in decision.message


def test_prefilter_texts_of_1_30() -> None:
    cases = [
        (None, _claim("c"), "resource class gpu does not exist"),
        (_class(structured=True), _claim("c"), "structured parameters"),
        (_class(), _claim("c", immediate=True), "unallocated immediate resourceclaim"),
    ]
    for resource_class, raw, text in cases:
        decision = _decide(_state(resource_class, ("claim", raw), ("pod", pod("p", claims=["c"]))))
        assert isinstance(decision, Unschedulable), text
        assert text in decision.message
        assert decision.classic is None


def test_an_allocated_claim_binds_the_pod_on_its_node() -> None:
    raw = _allocated(_claim("c", immediate=True), "n3", shareable=True)
    decision = _decide(_state(_class(), ("claim", raw), ("pod", pod("p", claims=["c"]))))
    assert isinstance(decision, Placement)
    assert decision.node == "n3"
    assert [w.allocation for w in decision.claims] == [None]  # only reserved: the driver's


def test_an_allocation_not_shareable_has_one_consumer() -> None:
    raw = _allocated(_claim("c"), "n3", "other-pod", shareable=False)
    decision = _decide(_state(_class(), ("claim", raw), ("pod", pod("p", claims=["c"]))))
    assert isinstance(decision, Unschedulable)
    assert "resourceclaim in use" in decision.message
    raw = _allocated(_claim("c"), "n3", "other-pod", shareable=True)
    decision = _decide(_state(_class(), ("claim", raw), ("pod", pod("p", claims=["c"]))))
    assert isinstance(decision, Placement)


def test_only_a_wait_for_first_consumer_claim_is_handed_back() -> None:
    p = pod("p", claims=["c"], node_selector={"kubernetes.io/hostname": "n1"})
    raw = _allocated(_claim("c"), "n3", shareable=True)
    decision = _decide(_state(_class(), ("claim", raw), ("pod", p)))
    assert isinstance(decision, Unschedulable)
    assert decision.message.endswith(DEALLOCATION_DONE)
    assert isinstance(decision.classic, RequestDeallocation)
    raw = _allocated(_claim("c", immediate=True), "n3", shareable=True)
    decision = _decide(_state(_class(), ("claim", raw), ("pod", p)))
    assert isinstance(decision, Unschedulable)
    assert decision.classic is None
    assert DEALLOCATION_DONE not in decision.message
