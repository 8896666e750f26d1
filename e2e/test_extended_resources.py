"""Extended resources backed by DRA (KEP-5004), on whichever cluster the suite targets.

A DeviceClass of the session's driver maps `<driver>/gpu` (`spec.extendedResourceName`); a pod
for the operator's scheduler asks for two of it in its container resources, without any
ResourceClaim. Covers: the pod is bound with its special claim (named in
`status.extendedResourceClaimStatus`, generated from `<pod>-extended-resources-`, controlled by
the pod) allocated from its node's pool and reserved for it; deleting the pod deletes the claim
(whoever runs the claims controller, or the garbage collector); a pod asking for more than any
node has is explained, by its FailedScheduling event and by `dra-operator explain pod`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.support.dra_objects import device_class, selects_driver
from tests.support.operator import wait_for

from dra_operator import names
from dra_operator.errors import APINotFoundError
from dra_operator.kube import PODS
from e2e._driver import DEVICES_PER_NODE
from e2e._scene import Scene, allocation, devices, reserved_for

pytestmark = pytest.mark.controlplane


@pytest.fixture
async def resource(scene: Scene) -> AsyncIterator[str]:
    """The extended resource name a class of the session's driver serves."""
    if not scene.served.extended_resources_in_effect:
        pytest.skip(f"no extended resources backed by DRA before 1.36 ({scene.served.git_version})")
    classes = scene.served.resource("deviceclasses")
    name = f"{scene.driver.name}/gpu"
    body = device_class(f"ext-{scene.driver.name}", selects_driver(scene.driver.name))
    body["spec"]["extendedResourceName"] = name
    await scene.api.create(classes, body)
    yield name
    with contextlib.suppress(APINotFoundError):
        await scene.api.delete(classes, body["metadata"]["name"])


async def _pod(scene: Scene, name: str, resource: str, count: int) -> dict[str, Any]:
    container = {
        "name": "pause",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {resource: str(count)}, "limits": {resource: str(count)}},
    }
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": names.DEFAULT_SCHEDULER_NAME,
            "terminationGracePeriodSeconds": 1,
            "containers": [container],
        },
    }
    return await scene.api.create(PODS, body, namespace=scene.namespace)


async def test_the_pod_is_bound_with_its_special_claim_which_goes_with_it(
    scene: Scene, resource: str
) -> None:
    pod = await _pod(scene, "p", resource, DEVICES_PER_NODE)

    async def placed() -> tuple[str, dict[str, Any]] | None:
        found = await scene.get_pod("p")
        status = ((found or {}).get("status") or {}).get("extendedResourceClaimStatus")
        node = found and found["spec"].get("nodeName")
        if not node or not status:
            return None
        claim = await scene.get_claim(status["resourceClaimName"])
        if claim is None or not allocation(claim):
            return None
        return node, claim

    node, claim = await wait_for(placed, what="pod p bound with its extended resource claim")
    meta = claim["metadata"]
    assert meta["generateName"] == "p-extended-resources-"
    assert meta["annotations"][names.EXTENDED_RESOURCE_CLAIM_ANNOTATION] == "true"
    owner = meta["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "Pod",
        pod["metadata"]["uid"],
        True,
    )
    assert [r["name"] for r in claim["spec"]["devices"]["requests"]] == ["container-0-request-0"]
    assert {(d, p) for d, p, _ in devices(claim)} == {(scene.driver.name, node)}
    assert len(devices(claim)) == DEVICES_PER_NODE
    assert reserved_for(claim) == [pod["metadata"]["uid"]]
    await scene.verify_clean()

    await scene.delete_pod("p")

    async def claim_gone() -> bool:
        return await scene.get_claim(meta["name"]) is None

    await wait_for(claim_gone, what=f"claim {meta['name']} deleted with its pod")


async def test_a_pod_asking_for_more_than_a_node_has_is_explained(
    scene: Scene, resource: str
) -> None:
    await _pod(scene, "big", resource, DEVICES_PER_NODE + 1)
    messages = await wait_for(
        lambda: scene.events("big", "FailedScheduling"), what="FailedScheduling for big"
    )
    assert f"cannot allocate extended resource {resource}" in messages[0], messages
    code, out = await scene.cli("explain", "pod", "big", f"--namespace={scene.namespace}")
    assert code == 3, out
    assert f"extended resource {resource}: {DEVICES_PER_NODE + 1} from DeviceClass" in out, out
    assert f"({DEVICES_PER_NODE + 1} needed)" in out, out
