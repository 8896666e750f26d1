"""One allocator per device pool: the configuration check of `verify` (docs/coexistence.md).

Covers: unsafe only while kube-scheduler holds its Lease, no routing policy is bound and pods
with claims name dra-operator; not read (None) means no verdict; the sentence names the cure.
"""

from __future__ import annotations

import dataclasses

import pytest
from tests.unit.verify.builders import pod

from dra_operator.model import Pod
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
