"""The real-server tests' builders make objects the model reads back as their arguments said.

A wrong field name here would only show as a confusing failure (or a silently ignored field)
in a test against the API server; parsing each object with the operator's own model catches
it without one. The default class selector is evaluated by the operator's CEL on devices of
two drivers: it must admit its own driver's devices only, or tests would share devices.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from tests.support.dra_objects import (
    claim_spec,
    claim_template,
    consumer_pod,
    device_class,
    driver_of,
    gpus,
    resource_claim,
    resource_slice,
    scheduler_pod,
    selects_driver,
    unique_name,
)

from dra_operator.cel import compile_selector, device_view
from dra_operator.model import (
    AllocationMode,
    parse_device_class,
    parse_pod,
    parse_resource_claim,
    parse_resource_claim_template,
    parse_resource_slice,
)


@pytest.mark.parametrize(
    ("driver", "admitted"),
    [
        pytest.param(driver_of("gpu-1a2b3c"), True, id="its-driver"),
        pytest.param("gpu-other.example.com", False, id="another-driver"),
    ],
)
def test_the_default_class_admits_only_its_own_drivers_devices(driver: str, admitted: bool) -> None:
    parsed = parse_device_class(device_class("gpu-1a2b3c"))
    (selector,) = parsed.selectors
    assert selector.cel is not None
    pool = parse_resource_slice(resource_slice("node-a", driver, gpus(1)))
    assert compile_selector(selector.cel).matches(device_view(driver, pool.devices[0])) is admitted


def test_a_class_keeps_the_expression_it_is_given() -> None:
    parsed = parse_device_class(device_class("c", selects_driver("x.example.com")))
    assert [s.cel for s in parsed.selectors] == ["device.driver == 'x.example.com'"]


@pytest.mark.parametrize(
    ("kwargs", "name", "pool"),
    [
        pytest.param({}, "node-a-d.example.com", "node-a", id="named-after-node-and-driver"),
        pytest.param({"name": "s", "pool": "p"}, "s", "p", id="given-name-and-pool"),
    ],
)
def test_a_slice_is_one_complete_pool_on_its_node(
    kwargs: dict[str, str], name: str, pool: str
) -> None:
    parsed = parse_resource_slice(resource_slice("node-a", "d.example.com", gpus(3), **kwargs))
    assert parsed.metadata.name == name
    assert (parsed.driver, parsed.node_name) == ("d.example.com", "node-a")
    assert (parsed.pool.name, parsed.pool.generation, parsed.pool.resource_slice_count) == (
        pool,
        1,
        1,
    )
    assert [d.name for d in parsed.devices] == ["gpu-0", "gpu-1", "gpu-2"]


@pytest.mark.parametrize(
    ("exactly", "count", "selectors"),
    [
        pytest.param({}, 1, [], id="one-device"),
        pytest.param(
            {"count": 2, "selectors": [{"cel": {"expression": "true"}}]}, 2, ["true"], id="extra"
        ),
    ],
)
def test_a_claim_requests_gpu_from_its_class(
    exactly: dict[str, Any], count: int, selectors: list[str]
) -> None:
    body = resource_claim("c", claim_spec("k", **exactly), namespace="ns", labels={"a": "b"})
    parsed = parse_resource_claim(body)
    assert (parsed.metadata.name, parsed.metadata.namespace) == ("c", "ns")
    assert dict(parsed.metadata.labels) == {"a": "b"}
    (request,) = parsed.spec.requests
    assert request.name == "gpu" and request.exactly is not None
    assert request.exactly.device_class_name == "k"
    assert request.exactly.allocation_mode is AllocationMode.EXACT_COUNT
    assert request.exactly.count == count
    assert [s.cel for s in request.exactly.selectors] == selectors


def test_a_template_carries_the_metadata_for_its_claims() -> None:
    copied = {"labels": {"team": "ml"}}
    body = claim_template("t", claim_spec("k"), claim_metadata=copied, namespace="ns")
    parsed = parse_resource_claim_template(body)
    assert (parsed.metadata.name, parsed.metadata.namespace) == ("t", "ns")
    assert dict(parsed.template_metadata.labels) == {"team": "ml"}
    assert [r.name for r in parsed.spec.requests] == ["gpu"]


@pytest.mark.parametrize(
    ("kwargs", "claim", "template", "node_selector"),
    [
        pytest.param({"claim": "c"}, "c", None, {}, id="claim"),
        pytest.param(
            {"template": "t", "hostname": "node-a"},
            None,
            "t",
            {"kubernetes.io/hostname": "node-a"},
            id="template-pinned",
        ),
    ],
)
def test_a_scheduler_pod_names_its_claim_and_the_operator(
    kwargs: dict[str, str], claim: str | None, template: str | None, node_selector: dict[str, str]
) -> None:
    parsed = parse_pod(scheduler_pod("p", **kwargs))
    assert parsed.spec.scheduler_name == "dra-operator"
    (entry,) = parsed.spec.resource_claims
    assert (entry.name, entry.resource_claim_name, entry.resource_claim_template_name) == (
        "gpu",
        claim,
        template,
    )
    assert dict(parsed.spec.node_selector) == node_selector
    assert parsed.spec.node_name == ""


@pytest.mark.parametrize(
    ("kwargs", "node", "scheduler"),
    [
        pytest.param({"claim": "c", "node": "node-a"}, "node-a", "", id="bound-by-hand"),
        pytest.param({"claim": "c", "scheduler": "s"}, "", "s", id="left-to-a-scheduler"),
    ],
)
def test_a_consumer_pod_uses_its_claim_in_its_container(
    kwargs: dict[str, str], node: str, scheduler: str
) -> None:
    parsed = parse_pod(consumer_pod("p", finalizers=["f"], **kwargs))
    assert parsed.metadata.finalizers == ("f",)
    assert (parsed.spec.node_name, parsed.spec.scheduler_name) == (node, scheduler)
    ((entry,), (container,)) = parsed.spec.resource_claims, parsed.spec.containers
    assert (entry.name, entry.resource_claim_name) == ("gpu", "c")
    assert [c.name for c in container.claims] == ["gpu"]


def test_names_are_unique_and_drivers_follow_the_class() -> None:
    first, second = unique_name("gpu"), unique_name("gpu")
    assert first != second
    assert re.fullmatch(r"gpu-[0-9a-f]{6}", first)
    assert driver_of(first) == f"{first}.example.com"
