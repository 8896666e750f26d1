"""The routing parameters and the report of pods that escaped routing (issue 27).

Covers: the names published for the policies are every explicit `extendedResourceName`, sorted
and once each, space-separated (the implicit names are matched by prefix and not listed); a pod
counts as unrouted when another scheduler places it and it asks (requests or limits, init
containers too) for a name a class serves, explicit or implicit, but not when it is ours,
finished, asks for nothing mapped, or is bound to a node that advertises the name (a device
plugin serves it there); the scheduler builder wrapped with the parameters still builds one
plugin named `scheduler` that forwards to both.
"""

from __future__ import annotations

from typing import Any

import pytest

from dra_operator import model
from dra_operator.app._registry import BUILDERS
from dra_operator.app._routing import mapped_names, names_text
from dra_operator.app._settings import SCHEDULER
from dra_operator.model import ExtendedResourceClasses
from dra_operator.verify import unrouted_names

OURS = frozenset({"dra-operator"})


def device_class(name: str, extended: str | None = None) -> model.DeviceClass:
    spec: dict[str, Any] = {}
    if extended is not None:
        spec["extendedResourceName"] = extended
    raw = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec,
    }
    return model.parse_device_class(raw)


def pod(
    *,
    scheduler: str = "default-scheduler",
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    init: bool = False,
    node: str = "",
    phase: str = "Pending",
) -> model.Pod:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    container = {"name": "c", "image": "x", "resources": resources}
    spec: dict[str, Any] = {"schedulerName": scheduler, "containers": [{"name": "main"}]}
    spec["initContainers" if init else "containers"] = [container]
    if node:
        spec["nodeName"] = node
    raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
        "spec": spec,
        "status": {"phase": phase},
    }
    return model.parse_pod(raw)


CLASSES = ExtendedResourceClasses.of(
    [device_class("gpu", "example.com/gpu"), device_class("fpga"), device_class("nic")]
)


def test_the_published_names_are_the_explicit_ones_sorted_and_once() -> None:
    classes = [
        device_class("b", "example.com/gpu"),
        device_class("a", "example.com/fpga"),
        device_class("c", "example.com/gpu"),
        device_class("d"),
    ]
    found = mapped_names(classes)

    assert found == ["example.com/fpga", "example.com/gpu"]
    assert names_text(found) == "example.com/fpga example.com/gpu"
    assert names_text([]) == ""


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [
        pytest.param(pod(requests={"example.com/gpu": "1"}), ["example.com/gpu"], id="explicit"),
        pytest.param(
            pod(limits={"deviceclass.resource.kubernetes.io/fpga": "2"}),
            ["deviceclass.resource.kubernetes.io/fpga"],
            id="implicit-in-limits",
        ),
        pytest.param(
            pod(requests={"example.com/gpu": "1"}, init=True), ["example.com/gpu"], id="init"
        ),
        pytest.param(
            pod(requests={"example.com/gpu": "1"}, node="n1"),
            ["example.com/gpu"],
            id="bound-node-without-the-name",
        ),
        pytest.param(
            pod(scheduler="dra-operator", requests={"example.com/gpu": "1"}), [], id="ours"
        ),
        pytest.param(pod(requests={"example.com/gpu": "1"}, phase="Succeeded"), [], id="finished"),
        pytest.param(pod(requests={"example.com/other": "1", "cpu": "1"}), [], id="not-mapped"),
        pytest.param(
            pod(requests={"deviceclass.resource.kubernetes.io/none": "1"}), [], id="no-such-class"
        ),
        pytest.param(pod(requests={"example.com/gpu": "0"}), [], id="zero"),
    ],
)
def test_which_pods_escaped_routing(the_pod: model.Pod, expected: list[str]) -> None:
    assert unrouted_names(the_pod, CLASSES, OURS) == expected


def test_a_name_the_node_advertises_is_a_device_plugins() -> None:
    bound = pod(requests={"example.com/gpu": "1"}, node="n1")
    node = model.parse_node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"example.com/gpu": "4"}},
        }
    )

    assert unrouted_names(bound, CLASSES, OURS, node.allocatable) == []


def test_the_scheduler_builder_runs_the_routing_parameters_too() -> None:
    builder = BUILDERS[SCHEDULER]

    assert builder.__qualname__.startswith("with_routing_params")
