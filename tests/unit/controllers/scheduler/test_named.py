"""1.30's named resources in scheduling decisions (classic-dra.md §6; v1alpha2 stores as the
operator's caches keep them on a 1.30 server).

Covers: a pod's structured claim is placed on the first node (by name) with a free instance
that passes the class filter and the claim parameters' selector, written in 1.30's shape
(driver name, `structuredData`, hostname `availableOnNodes`, vendor parameters) and counted by
the ledger as device `(driver, node, instance)`; instances of allocated claims and of
in-flight decisions are never handed out again (also over random clusters and pod sequences);
PreFilter texts for missing parameters; the FitError when no instance is left and the CEL
error text; the write bodies (1.30's finalizer, `status.driverName`) and Unreserve's view of
that finalizer.
"""

from __future__ import annotations

import random
from typing import Any

from dra_operator.cluster import CLAIM_INDEXERS, Store
from dra_operator.controllers.scheduler import (
    NamedInventory,
    Placement,
    State,
    Unschedulable,
    decide_pod,
)
from dra_operator.controllers.scheduler._writes import (
    finalizer_body,
    has_finalizer,
    status_body,
    unreserve_body,
)
from dra_operator.model import (
    DeviceID,
    parse_device_class,
    parse_resource_claim,
    v1alpha2,
)

from .builders import NS, new_state, node, pod, settings

DRIVER = "gpu.example.com"
CLASS = "gpu"
NODES = ("n1", "n2", "n3")
GROUP_VERSION = "resource.k8s.io/v1alpha2"
BIG = 'attributes.quantity["memory"].compareTo(quantity("20Gi")) > 0'


def _class(*, parameters: bool = True) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "apiVersion": GROUP_VERSION,
        "kind": "ResourceClass",
        "metadata": {"name": CLASS},
        "driverName": DRIVER,
        "structuredParameters": True,
    }
    if parameters:
        raw["parametersRef"] = {
            "apiGroup": "resource.k8s.io",
            "kind": "ResourceClassParameters",
            "name": "healthy",
            "namespace": NS,
        }
    return raw


def _class_parameters() -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ResourceClassParameters",
        "metadata": {"name": "healthy", "namespace": NS},
        "vendorParameters": [{"driverName": DRIVER, "parameters": {"mode": "exclusive"}}],
        "filters": [{"driverName": DRIVER, "namedResources": {"selector": _HEALTHY}}],
    }


_HEALTHY = 'attributes.bool["healthy"]'


def _claim_parameters(name: str = "big", selector: str = BIG) -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ResourceClaimParameters",
        "metadata": {"name": name, "namespace": NS},
        "driverRequests": [
            {"driverName": DRIVER, "requests": [{"namedResources": {"selector": selector}}]}
        ],
    }


def _claim(name: str, parameters: str | None = "big") -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceClassName": CLASS}
    if parameters is not None:
        spec["parametersRef"] = {
            "apiGroup": "resource.k8s.io",
            "kind": "ResourceClaimParameters",
            "name": parameters,
        }
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "resourceVersion": "1"},
        "spec": spec,
    }


def _instance(name: str, memory: str, healthy: bool = True) -> dict[str, Any]:
    return {
        "name": name,
        "attributes": [
            {"name": "memory", "quantity": memory},
            {"name": "healthy", "bool": healthy},
        ],
    }


def _slice(node_name: str, *instances: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}"},
        "nodeName": node_name,
        "driverName": DRIVER,
        "namedResources": {"instances": list(instances)},
    }


def _state(*slices: dict[str, Any], class_parameters: bool = True) -> State:
    state = new_state()
    state.claims = Store(
        "resourceclaims", lambda raw: parse_resource_claim(raw, "v1alpha2"), CLAIM_INDEXERS
    )
    state.classes = Store("deviceclasses", lambda raw: parse_device_class(raw, "v1alpha2"))
    state.named = NamedInventory(
        slices=Store("resourceslices", v1alpha2.parse_resource_slice),
        class_parameters=Store("resourceclassparameters", v1alpha2.parse_resource_class_parameters),
        claim_parameters=Store("resourceclaimparameters", v1alpha2.parse_resource_claim_parameters),
    )
    for name in NODES:
        state.nodes.apply("ADDED", node(name, labels={"kubernetes.io/hostname": name}))
    state.classes.apply("ADDED", _class(parameters=class_parameters))
    if class_parameters:
        state.named.class_parameters.apply("ADDED", _class_parameters())
    state.named.claim_parameters.apply("ADDED", _claim_parameters())
    for raw in slices:
        state.named.slices.apply("ADDED", raw)
    return state


def _add_claim(state: State, raw: dict[str, Any]) -> None:
    change = state.claims.apply("ADDED", raw)
    assert change is not None
    state.ledger.observe(change)


def _decide(state: State, name: str, *claims: str) -> Any:
    entry = state.pods.apply("ADDED", pod(name, claims=claims))
    assert entry is not None and entry.new is not None
    return decide_pod(entry.new.obj, state, settings())


def _picked(decision: Placement) -> list[tuple[str, str]]:
    found = []
    for write in decision.claims:
        assert write.named is not None
        for handle in write.named.allocation.resource_handles:
            data = handle.structured_data
            assert data is not None
            found += [
                (data.node_name, r.named_resources.name) for r in data.results if r.named_resources
            ]
    return found


TWO_NODES = (
    _slice("n1", _instance("gpu-0", "16Gi"), _instance("gpu-1", "48Gi", healthy=False)),
    _slice(
        "n2", _instance("gpu-0", "16Gi"), _instance("gpu-1", "32Gi"), _instance("gpu-2", "32Gi")
    ),
)


def test_a_structured_claim_goes_to_the_first_node_with_a_fitting_instance() -> None:
    state = _state(*TWO_NODES)
    _add_claim(state, _claim("c"))
    decision = _decide(state, "p", "c")
    assert isinstance(decision, Placement)
    assert decision.node == "n2"  # n1's big instance is unhealthy: the class filter drops it
    [write] = decision.claims
    assert write.named is not None and write.named.driver_name == DRIVER
    written = write.named.allocation
    assert written.shareable is False  # the claim parameters do not say shareable
    [handle] = written.resource_handles
    assert handle.driver_name == DRIVER
    assert handle.structured_data is not None
    assert handle.structured_data.vendor_class_parameters == '{"mode":"exclusive"}'
    assert _picked(decision) == [("n2", "gpu-1")]
    assert write.allocation is not None
    [device] = write.allocation.devices.results
    assert DeviceID(device.driver, device.pool, device.device) == DeviceID(DRIVER, "n2", "gpu-1")
    body = status_body(_claim("c"), "1", write.allocation, decision.consumer, write.named)
    assert body["status"]["driverName"] == DRIVER
    selector = body["status"]["allocation"]["availableOnNodes"]
    term = selector["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert term == {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}
    assert body["status"]["reservedFor"][0]["name"] == "p"


def test_instances_of_allocated_and_in_flight_claims_are_not_handed_out_again() -> None:
    state = _state(*TWO_NODES)
    _add_claim(state, _claim("c1"))
    first = _decide(state, "p1", "c1")
    assert isinstance(first, Placement)
    assert first.claims[0].allocation is not None
    state.ledger.reserve(first.claims[0].uid, first.claims[0].allocation)  # in flight
    _add_claim(state, _claim("c2"))
    second = _decide(state, "p2", "c2")
    assert isinstance(second, Placement)
    assert _picked(first) == [("n2", "gpu-1")]
    assert _picked(second) == [("n2", "gpu-2")]
    # c2 written and seen through the watch, c1's decision rolled back: c2's instance stays
    # taken, c1's is free again.
    written = _claim("c2")
    written["metadata"]["resourceVersion"] = "2"
    written["status"] = status_body(
        written, "2", second.claims[0].allocation, second.consumer, second.claims[0].named
    )["status"]
    change = state.claims.apply("MODIFIED", written)
    assert change is not None
    state.ledger.observe(change)
    state.ledger.rollback(first.claims[0].uid)
    _add_claim(state, _claim("c3"))
    third = _decide(state, "p3", "c3")
    assert isinstance(third, Placement)
    assert _picked(third) == [("n2", "gpu-1")]


def test_no_free_instance_is_a_fit_error_with_1_30_s_reason() -> None:
    state = _state(_slice("n1", _instance("gpu-0", "16Gi")))
    _add_claim(state, _claim("c"))
    decision = _decide(state, "p", "c")
    assert isinstance(decision, Unschedulable)
    assert decision.message == (
        "0/3 nodes are available: 3 resourceclaim cannot be allocated for the node (unsuitable)."
    )


def test_a_cel_error_names_the_node_and_driver() -> None:
    state = _state(_slice("n1", _instance("gpu-0", "16Gi")))
    assert state.named is not None
    state.named.claim_parameters.apply(
        "ADDED", _claim_parameters("odd", 'attributes.int["none"] > 1')
    )
    _add_claim(state, _claim("c", parameters="odd"))
    decision = _decide(state, "p", "c")
    assert isinstance(decision, Unschedulable)
    assert (
        'checking structured parameters failed: checking node "n1" and resources of driver '
        f'"{DRIVER}": evaluate request CEL expression:'
    ) in decision.message


def test_missing_parameters_fail_prefilter_with_1_30_s_texts() -> None:
    state = _state(*TWO_NODES)
    _add_claim(state, _claim("c", parameters="absent"))
    decision = _decide(state, "p", "c")
    assert isinstance(decision, Unschedulable)
    assert decision.message == "0/3 nodes are available: claim parameters default/absent not found."
    state = _state(*TWO_NODES)
    assert state.named is not None
    state.named.class_parameters.apply("DELETED", _class_parameters())
    _add_claim(state, _claim("c"))
    decision = _decide(state, "p", "c")
    assert isinstance(decision, Unschedulable)
    assert (
        decision.message == "0/3 nodes are available: class parameters default/healthy not found."
    )


def test_without_claim_parameters_one_instance_of_the_class_driver_is_taken() -> None:
    state = _state(*TWO_NODES, class_parameters=False)
    _add_claim(state, _claim("c", parameters=None))
    decision = _decide(state, "p", "c")
    assert isinstance(decision, Placement)
    assert _picked(decision) == [("n1", "gpu-0")]
    assert decision.claims[0].named is not None
    assert decision.claims[0].named.allocation.shareable is True


def test_1_30_claims_get_1_30_s_finalizer() -> None:
    raw = _claim("c")
    assert not has_finalizer(raw)
    body = finalizer_body(raw, "1")
    assert body["metadata"]["finalizers"] == [v1alpha2.FINALIZER]
    assert has_finalizer(body)
    consumer = {"resource": "pods", "name": "p", "uid": "u"}
    body["status"] = {"reservedFor": [consumer], "allocation": {"shareable": True}}
    _, deallocated = unreserve_body(body, "2", "u")
    assert deallocated  # ours (1.30's finalizer) and the last consumer gone


def test_no_instance_is_allocated_twice_over_random_clusters() -> None:
    """Pods one after another, each reserved in the ledger as the scheduler does: every
    instance handed out at most once, and a pod is refused only when no node has a fitting
    instance left."""
    for seed in range(30):
        rng = random.Random(seed)
        slices = []
        for name in NODES:
            instances = [
                _instance(f"gpu-{i}", f"{rng.choice((16, 32, 48))}Gi", rng.random() > 0.2)
                for i in range(rng.randint(0, 4))
            ]
            slices.append(_slice(name, *instances))
        state = _state(*slices)
        given = set()
        for i in range(rng.randint(1, 10)):
            claims = [f"c{i}-{j}" for j in range(rng.randint(1, 2))]
            for name in claims:
                _add_claim(state, _claim(name))
            decision = _decide(state, f"p{i}", *claims)
            free = _fitting(slices) - given
            if isinstance(decision, Placement):
                picked = _picked(decision)
                assert len(set(picked)) == len(picked)
                assert not set(picked) & given, seed
                given |= set(picked)
                for write in decision.claims:
                    assert write.allocation is not None
                    state.ledger.reserve(write.uid, write.allocation)
            else:
                assert isinstance(decision, Unschedulable)
                per_node = {n for n, _ in free}
                assert all(sum(1 for f in free if f[0] == n) < len(claims) for n in per_node), seed


def _fitting(slices: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """The instances a `big` claim of the healthy class can take."""
    found = set()
    for raw in slices:
        for instance in raw["namedResources"]["instances"]:
            attributes = {a["name"]: a for a in instance["attributes"]}
            memory = int(attributes["memory"]["quantity"].removesuffix("Gi"))
            if attributes["healthy"]["bool"] and memory > 20:
                found.add((raw["nodeName"], instance["name"]))
    return found
