"""Pods with claims, placed by the operator's scheduler, on whichever cluster the suite targets.

Covers: pods with a claim template bound to a node with their claims allocated there and
reserved for them; one claim shared by two pods; deleting a pod releases its claim
(unreserved, deallocated) and deletes the generated claim; more pods than devices: the extra
pod gets a FailedScheduling event naming devices in use, `dra-operator explain pod` names the
same, and the pod is bound once a device is freed. Each test ends with `dra-operator verify`
clean on its namespace.
"""

from __future__ import annotations

import pytest
from tests.support.operator import wait_for

from e2e._scene import Scene, allocation, claim_name_of, devices, reserved_for

pytestmark = pytest.mark.controlplane

HOLD = "e2e.dra-operator.dev/hold"  # a finalizer of the test's own


async def test_template_pods_are_bound_with_allocated_reserved_claims(scene: Scene) -> None:
    await scene.template()
    pods = {name: await scene.pod(name) for name in ("a", "b")}
    used = []
    for name, pod in pods.items():
        node, claim = await scene.placed(name)
        assert node in scene.driver.nodes
        ((driver, pool, device),) = devices(claim)
        assert (driver, pool) == (scene.driver.name, node)  # the pool of the pod's node
        assert reserved_for(claim) == [pod["metadata"]["uid"]]
        owner = claim["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["uid"], owner["controller"]) == (
            "Pod",
            pod["metadata"]["uid"],
            True,
        )
        used.append((pool, device))
    assert len(set(used)) == 2
    await scene.verify_clean()


async def test_a_shared_claim_is_reserved_for_both_pods(scene: Scene) -> None:
    await scene.claim("shared")
    pods = [await scene.pod(name, claim="shared") for name in ("a", "b")]
    placed = [await scene.placed(name) for name in ("a", "b")]
    (node_a, _), (node_b, claim) = placed
    assert node_a == node_b
    assert sorted(reserved_for(claim)) == sorted(p["metadata"]["uid"] for p in pods)
    assert len(devices(claim)) == 1
    await scene.verify_clean()


async def test_deleting_a_pod_releases_and_deletes_its_generated_claim(scene: Scene) -> None:
    await scene.template()
    await scene.pod("a")
    _, claim = await scene.placed("a")
    name = claim["metadata"]["name"]
    await scene.hold(name, HOLD)  # so the claim can be read after its deletion
    try:
        await scene.delete_pod("a")

        async def released() -> dict[str, object] | None:
            found = await scene.get_claim(name)
            meta = (found or {}).get("metadata") or {}
            done = meta.get("deletionTimestamp") and meta.get("finalizers") == [HOLD]
            return found if found and done and not reserved_for(found) else None

        found = await wait_for(released, what=f"claim {name} unreserved and being deleted")
        assert allocation(found) is None
    finally:
        await scene.release(name, HOLD)
    await wait_for(lambda: _gone(scene, name), what=f"claim {name} deleted once the hold is lifted")
    await scene.verify_clean()


async def _gone(scene: Scene, claim: str) -> bool:
    return await scene.get_claim(claim) is None


async def test_more_pods_than_devices_wait_and_are_explained(scene: Scene) -> None:
    await scene.template()
    total = scene.driver.device_count
    names = [f"p{i}" for i in range(total)]
    for name in names:
        await scene.pod(name)
    for name in names:
        await scene.placed(name)
    extra = await scene.pod("extra")

    messages = await wait_for(
        lambda: scene.events("extra", "FailedScheduling"), what="FailedScheduling for extra"
    )
    # The operator's wording follows kube-scheduler's: "0/N nodes are available: ...".
    assert messages[0].startswith("0/"), messages
    assert "in use" in messages[0], messages
    pod = await scene.get_pod("extra")
    assert pod is not None and not pod["spec"].get("nodeName")

    code, out = await scene.cli("explain", "pod", "extra", f"--namespace={scene.namespace}")
    assert code == 3, out  # 3: explained, not allocated
    claim = claim_name_of(pod)
    assert claim is not None and f"not allocated: {scene.namespace}/{claim}" in out, out
    assert "blocked at free" in out and "in use" in out, out

    await scene.delete_pod(names[0])
    _, freed = await scene.placed("extra")
    assert reserved_for(freed) == [extra["metadata"]["uid"]]
    await scene.verify_clean()
