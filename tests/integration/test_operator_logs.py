"""`dra-operator run`'s log tells the story: one event per decision, read from the process.

A pod with a claim template on a node with one device: the claims controller logs
`claim.created`, the scheduler `allocation.placed` (pod, node, claims → devices, strategy,
milliseconds). A second pod finds no free device: `allocation.unschedulable` with the
FailedScheduling text. The first pod deleted, its claim is `claim.deallocated` and
`claim.deleted`, and the second is placed. A NoExecute taint on the device evicts it:
`eviction.scheduled`, then `pod.evicted`. Run at `--log-level debug`, the scheduler also logs
one `allocation.node` verdict per node tried. Lines are JSON (stderr is not a terminal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.integration.test_operator_claims import TEMPLATES
from tests.integration.test_scheduler import CLASSES, SLICES
from tests.support.controlplane import NodeFactory, Spawned
from tests.support.dra_objects import (
    claim_spec,
    device_class,
    driver_of,
    gpus,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import wait_for

from dra_operator import controlplane
from dra_operator.cli._cluster_options import Target
from dra_operator.cli._taint import change_taint
from dra_operator.kube import PODS, Client

pytestmark = pytest.mark.controlplane


async def test_the_log_tells_the_story(
    admin_api: Client,
    namespace: str,
    operator_process: Callable[..., Spawned],
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    control_plane: controlplane.ControlPlaneState,
) -> None:
    gpu = unique_name("gpu")
    node = (await make_node())["metadata"]["name"]
    await cluster(CLASSES, device_class(gpu))
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(1), pool=node))
    body = {"metadata": {"name": "tmpl"}, "spec": {"spec": claim_spec(gpu)}}
    await admin_api.create(TEMPLATES, body, namespace=namespace)
    operator = operator_process("storyteller", "--log-level=debug")

    def logged(name: str, **keys: Any) -> Callable[[], dict[str, Any] | None]:
        def probe() -> dict[str, Any] | None:
            return next(
                (e for e in operator.events(name) if keys.items() <= e.items()),
                None,
            )

        return probe

    first, second = f"{namespace}/first", f"{namespace}/second"
    await admin_api.create(
        PODS, scheduler_pod("first", template="tmpl", hostname=node), namespace=namespace
    )
    created = await wait_for(logged("claim.created", pod=first), what="claim.created")
    claim = created["claim"]
    placed = await wait_for(logged("allocation.placed", pod=first), what="allocation.placed")
    assert placed["node"] == node and placed["level"] == "info"
    assert placed["claims"] == {claim: [f"{driver_of(gpu)}/{node}/gpu-0"]}
    assert placed["strategy"] == "FirstFit" and placed["ms"] >= 0
    verdict = await wait_for(logged("allocation.node", pod=first, node=node), what="a verdict")
    assert verdict["level"] == "debug" and "fits" in verdict

    await admin_api.create(
        PODS, scheduler_pod("second", template="tmpl", hostname=node), namespace=namespace
    )
    stuck = await wait_for(
        logged("allocation.unschedulable", pod=second), what="allocation.unschedulable"
    )
    assert stuck["reason"].startswith("0/1 nodes are available"), stuck
    assert "1 in use" in stuck["reason"], stuck

    await admin_api.delete(PODS, "first", namespace=namespace, grace_period_seconds=0)
    await wait_for(logged("claim.deallocated", claim=claim), what="claim.deallocated")
    await wait_for(logged("claim.deleted", claim=claim), what="claim.deleted")
    await wait_for(logged("allocation.placed", pod=second), what="the second pod placed")

    taint = {
        "target": Target(control_plane.admin_kubeconfig),
        "driver": driver_of(gpu),
        "pool": node,
        "device": "gpu-0",
        "key": "example.com/broken",
        "value": "true",
        "effect": "NoExecute",
        "via": "slice",
        "name": None,
    }
    await change_taint(taint, add=True)
    scheduled = await wait_for(logged("eviction.scheduled", pod=second), what="eviction")
    assert scheduled["reasons"] == [f"taint 0 of device {driver_of(gpu)}/{node}/gpu-0"]
    await wait_for(logged("pod.evicted", pod=second), what="pod.evicted")
