"""tests/support/make.py: the builders make objects the operator's parsers accept, as asked,
and every `obj()` is a copy of its own."""

from __future__ import annotations

from tests.support.make import MakeClaim, MakeNode, MakePod

from dra_operator.model import parse_node, parse_pod, parse_resource_claim


def test_a_pod_as_built_is_a_pod() -> None:
    raw = MakePod().name("web-0").namespace("ml").scheduler("dra-operator").node("n1")
    raw = raw.claim("gpu", template="gpu").claim("shared", claim="shared").version("5").obj()
    pod = parse_pod(raw)
    assert (pod.metadata.namespace, pod.metadata.name) == ("ml", "web-0")
    assert (pod.spec.scheduler_name, pod.spec.node_name) == ("dra-operator", "n1")
    assert [c.name for c in pod.spec.resource_claims] == ["gpu", "shared"]
    assert pod.metadata.resource_version == "5"


def test_a_claim_as_built_is_a_claim() -> None:
    made = MakeClaim().name("c1").allocated("d.example.com", "pool", "gpu-0")
    claim = parse_resource_claim(made.allocated("d.example.com", "pool", "gpu-1").obj())
    assert claim.metadata.name == "c1"
    assert [r.name for r in claim.spec.requests] == ["r"]
    assert claim.status.allocation is not None
    assert [r.device for r in claim.status.allocation.devices.results] == ["gpu-0", "gpu-1"]


def test_each_obj_is_a_copy() -> None:
    made = MakeNode().name("n1")
    first = made.obj()
    first["metadata"]["name"] = "changed"
    assert parse_node(made.obj()).metadata.name == "n1"
