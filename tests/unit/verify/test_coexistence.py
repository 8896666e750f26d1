"""One allocator per device pool: the configuration check of `verify` (docs/coexistence.md).

Covers: unsafe only while kube-scheduler holds its Lease, no routing policy is bound and pods
with claims name dra-operator; not read (None) means no verdict; the sentence names the cure.
With routing bound, a pod another scheduler places that asks for an extended resource a
DeviceClass serves (explicit or implicit name) is named, with the fix; without routing (kube-
scheduler the only allocator) it is not.
"""

from __future__ import annotations

import dataclasses

import pytest
from tests.unit.verify.builders import pod

from dra_operator.model import Pod, parse_device_class, parse_pod
from dra_operator.verify import ClusterState, Code, Schedulers, check

LEASE = "kube-system/kube-scheduler"


def ours(name: str) -> Pod:
    plain = pod(name, templates={"gpu": "gpu"})
    return dataclasses.replace(
        plain, spec=dataclasses.replace(plain.spec, scheduler_name="dra-operator")
    )


@pytest.mark.parametrize(
    ("schedulers", "pods", "unsafe"),
    [
        pytest.param(Schedulers(kube_scheduler=LEASE), [ours("a")], True, id="unsafe"),
        pytest.param(
            Schedulers(kube_scheduler=LEASE, routing=True), [ours("a")], False, id="routed"
        ),
        pytest.param(Schedulers(), [ours("a")], False, id="no-kube-scheduler"),
        pytest.param(None, [ours("a")], False, id="not-read"),
        pytest.param(
            Schedulers(kube_scheduler=LEASE),
            [pod("b", templates={"gpu": "gpu"})],
            False,
            id="only-kube-scheduler-places-claims",
        ),
    ],
)
def test_two_allocators_without_routing_are_named(
    schedulers: Schedulers | None, pods: list[Pod], unsafe: bool
) -> None:
    violations = check(ClusterState(pods=tuple(pods), schedulers=schedulers))
    found = [v for v in violations if v.code == Code.UNSAFE_CONFIGURATION]
    assert bool(found) is unsafe
    if unsafe:
        (violation,) = found
        assert (violation.kind, violation.name) == ("Lease", LEASE)
        assert "route-claims" in violation.message


def _asking(name: str, resource: str, scheduler: str = "default-scheduler") -> Pod:
    raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": name},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "resources": {"requests": {resource: "1"}}}],
        },
    }
    return parse_pod(raw)


GPU_CLASS = parse_device_class(
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"extendedResourceName": "example.com/gpu"},
    }
)


@pytest.mark.parametrize(
    ("schedulers", "pods", "unrouted"),
    [
        pytest.param(
            Schedulers(routing=True),
            [_asking("early", "example.com/gpu")],
            ["ns/early"],
            id="explicit-on-kube-scheduler",
        ),
        pytest.param(
            Schedulers(routing=True),
            [_asking("early", "deviceclass.resource.kubernetes.io/gpu")],
            ["ns/early"],
            id="implicit-on-kube-scheduler",
        ),
        pytest.param(
            Schedulers(routing=True),
            [_asking("routed", "example.com/gpu", scheduler="dra-operator")],
            [],
            id="routed",
        ),
        pytest.param(
            Schedulers(routing=True), [_asking("plain", "example.com/nic")], [], id="not-mapped"
        ),
        pytest.param(
            Schedulers(kube_scheduler=LEASE),
            [_asking("early", "example.com/gpu")],
            [],
            id="no-routing-kube-scheduler-alone-allocates",
        ),
    ],
)
def test_pods_that_escaped_routing_are_named(
    schedulers: Schedulers, pods: list[Pod], unrouted: list[str]
) -> None:
    state = ClusterState(pods=tuple(pods), schedulers=schedulers, classes=(GPU_CLASS,))
    found = [v for v in check(state) if v.code == Code.UNSAFE_CONFIGURATION and v.kind == "Pod"]

    assert [v.name for v in found] == unrouted
    for violation in found:
        assert "recreate the pod" in violation.message
