"""Classic DRA decisions over real stores (classic-dra.md §3.5–3.9, 1.31 behaviour).

Covers: the first cycle proposes every passing node (sorted, at most 128) and selects one;
a node a driver declared unsuitable or a class's suitableNodes excludes is never selected;
with two claims, nothing is selected until both drivers answered; the context already saying
it all means waiting for the driver; a missing class and a context not owned by the pod fail
PreFilter; an allocated classic claim binds like any other; one that excludes every node and
is used by nobody else is handed back (PostFilter), one in use by another pod is not; a claim
whose deallocation was requested must be reallocated first.
"""

from __future__ import annotations

from typing import Any

from dra_operator.cluster import Store
from dra_operator.controllers.scheduler import (
    DEALLOCATION_DONE,
    PROVIDE_INFORMATION,
    UNSUITABLE,
    WAITING_FOR_DRIVER,
    Placement,
    PublishContext,
    RequestDeallocation,
    Scheduler,
    State,
    Unschedulable,
    WorkKey,
    decide_pod,
)
from dra_operator.model import parse_pod_scheduling_context

from .builders import (
    CLASS,
    NS,
    World,
    claim,
    device_class,
    new_state,
    node,
    pod,
    resource_slice,
    settings,
)

DRIVER = "classic.example.com"


def _classic(name: str, *, class_name: str = CLASS) -> dict[str, Any]:
    raw = claim(name, class_name=class_name)
    raw["spec"]["controller"] = DRIVER
    return raw


def _allocated_on(raw: dict[str, Any], node_name: str, *reserved: str) -> dict[str, Any]:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    raw["status"] = {
        "allocation": {"controller": DRIVER, "nodeSelector": {"nodeSelectorTerms": [term]}},
        "reservedFor": [{"resource": "pods", "name": uid, "uid": uid} for uid in reserved],
    }
    return raw


def _context(
    owner: dict[str, Any],
    *,
    selected: str = "",
    potential: tuple[str, ...] = (),
    unsuitable: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    ref = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }
    spec: dict[str, Any] = {"selectedNode": selected, "potentialNodes": list(potential)}
    entries = [{"name": k, "unsuitableNodes": v} for k, v in (unsuitable or {}).items()]
    return {
        "metadata": {
            "name": owner["metadata"]["name"],
            "namespace": NS,
            "uid": "ctx-1",
            "ownerReferences": [ref],
        },
        "spec": spec,
        "status": {"resourceClaims": entries},
    }


def _state(
    *objects: tuple[str, dict[str, Any]], nodes: tuple[str, ...] = ("n1", "n2", "n3")
) -> State:
    state = new_state()
    state.contexts = Store("podschedulingcontexts", parse_pod_scheduling_context)
    stores: dict[str, Any] = {
        "slice": state.slices,
        "class": state.classes,
        "claim": state.claims,
        "pod": state.pods,
        "context": state.contexts,
    }
    for name in nodes:
        state.nodes.apply("ADDED", node(name, labels={"kubernetes.io/hostname": name}))
    state.classes.apply("ADDED", device_class())
    for version, (kind, raw) in enumerate(objects, start=1):
        raw["metadata"].setdefault("resourceVersion", str(version))
        change = stores[kind].apply("ADDED", raw)
        if kind == "claim" and change is not None:
            state.ledger.observe(change)
    return state


def _decide(state: State, name: str) -> Any:
    entry = next(e for e in state.pods if e.key.name == name)
    return decide_pod(entry.obj, state, settings())


def test_first_cycle_proposes_every_passing_node_and_selects_the_first() -> None:
    p = pod("p", claims=["c"])
    decision = _decide(_state(("claim", _classic("c")), ("pod", p)), "p")
    assert isinstance(decision, Unschedulable)
    assert decision.message == WAITING_FOR_DRIVER
    assert decision.classic == PublishContext(
        pod=decision.classic.pod,
        pod_uid=p["metadata"]["uid"],
        selected_node="n1",
        potential_nodes=("n1", "n2", "n3"),
    )


def test_potential_nodes_are_at_most_128_sorted() -> None:
    nodes = tuple(f"n{i:03}" for i in range(200))
    state = _state(("claim", _classic("c")), ("pod", pod("p", claims=["c"])), nodes=nodes)
    decision = _decide(state, "p")
    assert isinstance(decision.classic, PublishContext)
    assert decision.classic.potential_nodes == nodes[:128]


def test_unsuitable_node_is_never_selected() -> None:
    p = pod("p", claims=["c"])
    ctx = _context(p, selected="n1", potential=("n1", "n2", "n3"), unsuitable={"c": ["n1"]})
    decision = _decide(_state(("claim", _classic("c")), ("pod", p), ("context", ctx)), "p")
    assert isinstance(decision.classic, PublishContext)
    assert decision.classic.selected_node == "n2"
    assert decision.classic.potential_nodes == ("n1", "n2", "n3")  # still all listed


def test_every_node_unsuitable_is_explained() -> None:
    p = pod("p", claims=["c"])
    ctx = _context(p, potential=("n1", "n2"), unsuitable={"c": ["n1", "n2"]})
    state = _state(("claim", _classic("c")), ("pod", p), ("context", ctx), nodes=("n1", "n2"))
    decision = _decide(state, "p")
    assert decision == Unschedulable(f"0/2 nodes are available: 2 {UNSUITABLE}.")


def test_class_suitable_nodes_exclude_nodes() -> None:
    restricted = device_class("restricted")
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n3"]}]}
    restricted["spec"]["suitableNodes"] = {"nodeSelectorTerms": [term]}
    c = _classic("c", class_name="restricted")
    decision = _decide(
        _state(("class", restricted), ("claim", c), ("pod", pod("p", claims=["c"]))), "p"
    )
    assert isinstance(decision.classic, PublishContext)
    assert decision.classic.selected_node == "n3"
    assert decision.classic.potential_nodes == ("n3",)


def test_two_claims_select_a_node_only_once_both_drivers_answered() -> None:
    p = pod("p", claims=["a", "b"])
    objects = [("claim", _classic("a")), ("claim", _classic("b")), ("pod", p)]
    first = _decide(_state(*objects), "p")
    assert isinstance(first.classic, PublishContext)
    assert first.classic.selected_node == ""
    assert first.classic.potential_nodes == ("n1", "n2", "n3")

    half = _context(p, potential=("n1", "n2", "n3"), unsuitable={"a": []})
    waiting = _decide(_state(*objects, ("context", half)), "p")
    assert waiting == Unschedulable(f"0/1 nodes are available: 1 {PROVIDE_INFORMATION}.")

    both = _context(p, potential=("n1", "n2", "n3"), unsuitable={"a": ["n1"], "b": ["n2"]})
    chosen = _decide(_state(*objects, ("context", both)), "p")
    assert isinstance(chosen.classic, PublishContext)
    assert chosen.classic.selected_node == "n3"


def test_nothing_new_to_publish_waits_for_the_driver() -> None:
    p = pod("p", claims=["c"])
    ctx = _context(p, selected="n1", potential=("n1", "n2", "n3"), unsuitable={"c": []})
    decision = _decide(_state(("claim", _classic("c")), ("pod", p), ("context", ctx)), "p")
    assert decision == Unschedulable(f"0/1 nodes are available: 1 {PROVIDE_INFORMATION}.")


def test_missing_class_and_foreign_context_fail_prefilter() -> None:
    p = pod("p", claims=["c"])
    missing = _decide(_state(("claim", _classic("c", class_name="nope")), ("pod", p)), "p")
    assert missing == Unschedulable(
        "0/3 nodes are available: request gpu: device class nope does not exist."
    )
    stranger = pod("p", claims=["c"])
    ctx = _context(stranger)
    q = pod("p", claims=["c"])
    foreign = _decide(_state(("claim", _classic("c")), ("pod", q), ("context", ctx)), "p")
    assert isinstance(foreign, Unschedulable)
    assert "PodSchedulingContext object with UID ctx-1 is not owned by Pod" in foreign.message


def test_allocated_classic_claim_binds_on_its_node() -> None:
    p = pod("p", claims=["c"])
    c = _allocated_on(_classic("c"), "n2", p["metadata"]["uid"])
    decision = _decide(_state(("claim", c), ("pod", p)), "p")
    assert isinstance(decision, Placement)
    assert decision.node == "n2" and decision.claims == ()


def test_allocated_claim_in_the_way_and_unused_is_handed_back() -> None:
    p = pod("p", claims=["c"], node_selector={"kubernetes.io/hostname": "n1"})
    ctx = _context(p, selected="n2")
    c = _allocated_on(_classic("c"), "n2")
    decision = _decide(_state(("claim", c), ("pod", p), ("context", ctx)), "p")
    assert isinstance(decision, Unschedulable)
    assert decision.message.endswith(DEALLOCATION_DONE)
    assert isinstance(decision.classic, RequestDeallocation)
    assert decision.classic.claim.name == "c"
    assert decision.classic.clear_selected_node


def test_allocated_claim_in_use_by_another_pod_stays() -> None:
    p = pod("p", claims=["c"], node_selector={"kubernetes.io/hostname": "n1"})
    c = _allocated_on(_classic("c"), "n2", "someone-else")
    decision = _decide(_state(("claim", c), ("pod", p)), "p")
    assert isinstance(decision, Unschedulable) and decision.classic is None


def test_claim_being_deallocated_must_be_reallocated() -> None:
    c = _allocated_on(_classic("c"), "n2")
    c["status"]["deallocationRequested"] = True
    decision = _decide(_state(("claim", c), ("pod", pod("p", claims=["c"]))), "p")
    assert decision == Unschedulable("0/3 nodes are available: resourceclaim must be reallocated.")


def test_bound_pod_selects_its_node_for_the_driver() -> None:
    """kube-controller-manager's rule for pods bound by hand (classic-dra.md §5.6)."""
    p = pod("p", claims=["c"], node_name="n2")
    decision = _decide(_state(("claim", _classic("c")), ("pod", p)), "p")
    assert isinstance(decision, Unschedulable)
    assert isinstance(decision.classic, PublishContext)
    assert decision.classic.selected_node == "n2"
    assert decision.classic.potential_nodes == ("n2",)


def test_structured_claim_of_the_same_pod_narrows_the_selected_node_then_follows() -> None:
    """Classic first: the node selected is one where the structured claim fits too; once the
    driver allocated there, the structured claim is allocated on that node."""
    p = pod("p", claims=["classic", "structured"])
    objects = [("slice", resource_slice("n3", 1)), ("claim", claim("structured")), ("pod", p)]
    first = _decide(_state(("claim", _classic("classic")), *objects), "p")
    assert isinstance(first.classic, PublishContext)
    assert first.classic.selected_node == "n3"
    assert first.classic.potential_nodes == ("n3",)  # where both fit

    done = _allocated_on(_classic("classic"), "n3", p["metadata"]["uid"])
    placed = _decide(_state(("claim", done), *objects), "p")
    assert isinstance(placed, Placement) and placed.node == "n3"
    assert [w.key.name for w in placed.claims if w.allocation is not None] == ["structured"]


async def test_only_a_drivers_answer_queues_the_pod() -> None:
    """Upstream's queueing hint: the scheduler's own writes (creation, spec) queue nothing."""
    p = pod("p", claims=["c"])
    state = _state(("claim", _classic("c")), ("pod", p))
    scheduler = Scheduler(state, settings(), World())
    assert state.contexts is not None
    raw = _context(p, selected="n1", potential=("n1", "n2"))
    raw["metadata"]["resourceVersion"] = "10"
    scheduler.context_changed(state.contexts.apply("ADDED", raw))  # type: ignore[arg-type]
    spec_only = {**raw, "metadata": {**raw["metadata"], "resourceVersion": "11"}}
    spec_only["spec"] = {"selectedNode": "n2", "potentialNodes": ["n1", "n2"]}
    scheduler.context_changed(state.contexts.apply("MODIFIED", spec_only))  # type: ignore[arg-type]
    assert len(scheduler.controller.queue) == 0
    answered = {**spec_only, "metadata": {**raw["metadata"], "resourceVersion": "12"}}
    answered["status"] = {"resourceClaims": [{"name": "c", "unsuitableNodes": ["n1"]}]}
    scheduler.context_changed(state.contexts.apply("MODIFIED", answered))  # type: ignore[arg-type]
    assert len(scheduler.controller.queue) == 1
    assert await scheduler.controller.queue.get() == WorkKey("pod", NS, "p")
