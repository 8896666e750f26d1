"""What the kubelets and the driver do with the operator's decisions, on the local real nodes.

The half of DRA the other scenarios cannot see: the kubelet reads our allocation and
reservation, the simulated driver prepares the devices and the container gets them. Covers:
containers print the devices they got and these are their claim's allocation; the pods of a
shared claim see the same device; deleting a pod unprepares its claim on the node before the
claim is deallocated; a NoExecute device taint evicts a running pod and the kubelet stops it
(unpreparing its claim); a pod bound by hand to a claim that cannot be allocated (so nobody
reserves it for the pod) is refused by the kubelet — and every other scenario checks, in
`verify_clean`, that no pod of ours was ever refused that way. (A pod bound by hand to a claim
that *can* be allocated is not refused: the operator allocates and reserves it, see
docs/scheduler.md.)

These need the suite's own nodes (kubelet + containerd + the simulated driver), so against a
given cluster (KUBECONFIG) they are skipped: that mode has no driver that prepares devices.
"""

from __future__ import annotations

import pytest
from tests.support.operator import wait_for

from e2e._scene import Scene, allocation, devices, reserved_for

pytestmark = pytest.mark.controlplane

HOLD = "e2e.dra-operator.dev/hold"
REFUSAL_TIMEOUT = 180.0


@pytest.fixture
def on_nodes(scene: Scene) -> Scene:
    if not scene.real_nodes:
        pytest.skip("needs the local control plane's real nodes and the simulated driver")
    return scene


def _pool_devices(claim: dict[str, object]) -> list[tuple[str, str]]:
    return [(pool, device) for _, pool, device in devices(claim)]


async def test_containers_see_the_devices_of_their_claims(on_nodes: Scene) -> None:
    scene = on_nodes
    await scene.template()
    for name in ("a", "b"):
        await scene.pod(name)
    seen = []
    for name in ("a", "b"):
        node, claim = await scene.placed(name)
        await scene.running(name)
        assert await scene.seen_devices(name) == _pool_devices(claim)
        assert scene.prepared_on_node(node, claim)
        seen += _pool_devices(claim)
    assert len(set(seen)) == 2
    await scene.verify_clean()


async def test_the_pods_of_a_shared_claim_see_the_same_device(on_nodes: Scene) -> None:
    scene = on_nodes
    await scene.claim("shared")
    for name in ("a", "b"):
        await scene.pod(name, claim="shared")
    _, claim = await scene.placed("a")
    await scene.placed("b")
    for name in ("a", "b"):
        await scene.running(name)
    (device,) = _pool_devices(claim)
    assert await scene.seen_devices("a") == await scene.seen_devices("b") == [device]
    await scene.verify_clean()


async def test_a_deleted_pod_is_unprepared_before_its_claim_is_deallocated(
    on_nodes: Scene,
) -> None:
    scene = on_nodes
    await scene.template()
    await scene.pod("a")
    node, claim = await scene.placed("a")
    await scene.running("a")
    assert scene.prepared_on_node(node, claim)
    name = claim["metadata"]["name"]
    await scene.hold(name, HOLD)  # readable after deallocation
    try:
        await scene.delete_pod("a")

        async def deallocated() -> bool:
            current = await scene.get_claim(name)
            # Read after the claim: a spec still there now was there when it was deallocated.
            prepared = scene.prepared_on_node(node, claim)
            if current is not None and allocation(current) is not None:
                return False
            assert not prepared, f"claim {name} deallocated while still prepared on {node}"
            return True

        await wait_for(deallocated, what=f"claim {name} deallocated")
    finally:
        await scene.release(name, HOLD)
    await scene.verify_clean()


async def test_a_no_execute_taint_stops_a_running_pod(on_nodes: Scene) -> None:
    scene = on_nodes
    await scene.template()
    await scene.pod("victim")
    node, claim = await scene.placed("victim")
    await scene.running("victim")
    ((_, pool, device),) = devices(claim)
    rule = await scene.taint(pool, device)

    async def stopped() -> bool:
        # Graceful deletion: the pod object goes only once the kubelet stopped it.
        return await scene.get_pod("victim") is None

    await wait_for(stopped, what="pod victim stopped by its kubelet and gone")
    assert not scene.prepared_on_node(node, claim)
    await scene.untaint(rule)
    await scene.verify_clean()


async def test_the_kubelet_refuses_a_claim_not_reserved_for_the_pod(on_nodes: Scene) -> None:
    scene = on_nodes
    await scene.claim("orphan", device_class="e2e-no-such-class")
    node = next(iter(scene.real_nodes))
    # Bound by hand to a claim nothing can satisfy: it stays unallocated and unreserved.
    await scene.pod("intruder", claim="orphan", node=node)
    # The kubelet may first be told "forbidden" (the Node authorizer has not yet linked the
    # new pod to the claim) and retries the pod about a minute later.
    refusals = await wait_for(
        scene.refusals, timeout=REFUSAL_TIMEOUT, what="the kubelet refusing pod intruder its claim"
    )
    assert "pod intruder" in refusals[0], refusals
    pod = await scene.get_pod("intruder")
    assert pod is not None and (pod.get("status") or {}).get("phase") == "Pending"
    orphan = await scene.get_claim("orphan")
    assert orphan is not None and not reserved_for(orphan) and allocation(orphan) is None
    # `dra-operator verify` names the very state the kubelet refuses.
    code, out = await scene.cli("verify", f"--namespace={scene.namespace}")
    assert code != 0 and "pod-claim-unallocated" in out, out
