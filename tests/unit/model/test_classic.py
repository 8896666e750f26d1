"""Classic DRA fields of 1.31 (v1alpha3): parsed, and rendered back as the API server has them.

Covers: `spec.controller`, `allocation.controller`, `deallocationRequested` and the class's
`suitableNodes` survive a parse/render round trip; a structured claim is not classic; a
PodSchedulingContext's spec and per-claim `unsuitableNodes` (absent: the driver has not
answered; empty: it has, and every node suits).
"""

from __future__ import annotations

from dra_operator.model import (
    parse_device_class,
    parse_pod_scheduling_context,
    parse_resource_claim,
    render_device_class,
    render_resource_claim,
    render_scheduling_spec,
)

TERM = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
CLAIM = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "ns", "uid": "u"},
    "spec": {
        "controller": "classic.example.com",
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "deviceClassName": "cls",
                    "allocationMode": "ExactCount",
                    "count": 1,
                }
            ]
        },
    },
    "status": {
        "allocation": {
            "devices": {},
            "nodeSelector": {"nodeSelectorTerms": [TERM]},
            "controller": "classic.example.com",
        },
        "deallocationRequested": True,
    },
}


def test_classic_claim_round_trips() -> None:
    claim = parse_resource_claim(CLAIM, "v1alpha3")
    assert claim.is_classic and claim.controller == "classic.example.com"
    assert claim.status.deallocation_requested
    rendered = render_resource_claim(claim, "v1alpha3")
    assert rendered["spec"]["controller"] == "classic.example.com"
    assert rendered["status"]["allocation"]["controller"] == "classic.example.com"
    assert rendered["status"]["deallocationRequested"] is True


def test_structured_claim_is_not_classic() -> None:
    raw = {**CLAIM, "spec": {"devices": CLAIM["spec"]["devices"]}, "status": {}}  # type: ignore[index]
    claim = parse_resource_claim(raw, "v1alpha3")
    assert not claim.is_classic
    assert "controller" not in render_resource_claim(claim, "v1alpha3")["spec"]


def test_class_suitable_nodes_round_trip() -> None:
    raw = {"metadata": {"name": "cls"}, "spec": {"suitableNodes": {"nodeSelectorTerms": [TERM]}}}
    rendered = render_device_class(parse_device_class(raw, "v1alpha3"), "v1alpha3")
    assert rendered["spec"]["suitableNodes"] == {"nodeSelectorTerms": [TERM]}


def test_scheduling_context() -> None:
    raw = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "x"},
        "spec": {"selectedNode": "n1", "potentialNodes": ["n1", "n2"]},
        "status": {"resourceClaims": [{"name": "a", "unsuitableNodes": ["n2"]}, {"name": "b"}]},
    }
    context = parse_pod_scheduling_context(raw)
    assert context.selected_node == "n1" and context.potential_nodes == ("n1", "n2")
    assert context.unsuitable("a") == ("n2",)
    assert context.unsuitable("b") == ()
    assert context.unsuitable("c") is None
    assert render_scheduling_spec("", ("n1",)) == {"potentialNodes": ["n1"]}
