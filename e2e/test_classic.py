"""Classic DRA (KEP-3063) on 1.27–1.30 (v1alpha2) and 1.31 (v1alpha3 + DRAControlPlaneController):
the operator's scheduler and claims controller with a classic driver, under deploy/'s RBAC
(docs/classic.md).

The driver is `ClassicDriver` (`dra-operator classic-driver`), run by the test as the admin, as
a vendor's controller would run beside the operator. On 1.31 its claims name it in
`spec.controller` (kept only with DRAControlPlaneController, which `controlplane up --version
1.31` switches on); on 1.27–1.30 they name a ResourceClass whose `driverName` is the driver.
Covers, on both: a template claim, WaitForFirstConsumer: the context proposes both nodes, the driver
declares one unsuitable, the pod binds on the other with its claim allocated by the driver and
reserved, the context is deleted; deleting the pod hands the claim back (deallocationRequested),
the driver deallocates and removes its finalizer, the generated claim (named as the release
names it) is deleted; the pod waited with the release's text. A standalone
claim shared by two pods: both on its node, both reserved; deallocated through the driver once
both are gone. A pod that cannot fit because of an allocated claim: PostFilter requests
deallocation, the driver deallocates, the pod is scheduled on the node it can use; the context
of a deleted pod is deleted with it. Two claims of two drivers: the pod binds on the node both
allocated on, one driver having declared the other node unsuitable. On 1.27–1.30 only (1.31 has
no allocation modes): an `Immediate` claim keeps its pod waiting (`unallocated immediate
resourceclaim`) until the driver allocates it without a pod; the pod then goes to the claim's
node, and the claim stays allocated after the pod is gone, until deleted; on 1.30 only, a claim
of 1.30 named resources, allocated as kube-scheduler does (finalizer `dra.k8s.io/delete-
protection`), is deallocated by the claims controller once its pod is gone; and pods with
template claims of 1.30 named resources are scheduled by the operator: instances chosen by the
class's filter and the claim parameters' selector, never one twice, written in 1.30's shape; the
pod left without an instance waits as unsuitable until another pod goes, and then takes its
instance.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from tests.support.operator import wait_for

from dra_operator import names
from dra_operator.controllers.scheduler import waiting_texts
from dra_operator.driver import ClassicDriver, ClassicDriverSettings, finalizer_of
from dra_operator.errors import APINotFoundError
from dra_operator.kube import PODS
from dra_operator.model import ClaimNaming
from e2e._scene import Scene, allocation, reserved_for

pytestmark = [pytest.mark.controlplane, pytest.mark.classic]

CLASSIC_DRIVER = "classic.e2e.example.com"
OTHER_DRIVER = "other.e2e.example.com"
NAMED_FINALIZER = "dra.k8s.io/delete-protection"  # 1.30 kube-scheduler's, on named resources
DRIVER_STOP = 10.0  # seconds a cancelled driver may take to stop
Start = Callable[..., ClassicDriver]


@pytest.fixture
async def classic(scene: Scene) -> AsyncIterator[Start]:
    """Start classic drivers for the test's namespace; the scene is cleaned up while they
    still run (their finalizers go only through them), then they stop."""
    if not scene.served.classic:
        pytest.skip(f"no classic DRA on {scene.served.git_version} (1.27-1.31 only)")
    tasks: list[asyncio.Task[None]] = []
    classes: list[str] = []

    def start(
        *, nodes: tuple[str, ...], reserve: bool = True, name: str = CLASSIC_DRIVER
    ) -> ClassicDriver:
        settings = ClassicDriverSettings(
            driver=name,
            nodes=frozenset(nodes),
            namespace=scene.namespace,
            reserve=reserve,
            version=scene.claims.version,
        )
        driver = ClassicDriver(scene.api, settings)
        tasks.append(asyncio.get_running_loop().create_task(driver.run()))
        return driver

    if _v1alpha2(scene):  # a ResourceClass per driver, named for the test's namespace
        for driver in (CLASSIC_DRIVER, OTHER_DRIVER):
            body = {"metadata": {"name": _class_name(scene, driver)}, "driverName": driver}
            await scene.api.create(scene.served.resource("deviceclasses"), body)
            classes.append(body["metadata"]["name"])
    yield start
    try:
        await scene.clean_up()
    except BaseException:
        left = await scene.api.list(scene.claims, namespace=scene.namespace)
        for claim in left.get("items") or ():
            print("left behind:", claim["metadata"], claim.get("status"))
        raise
    finally:
        for task in tasks:
            task.cancel()
        if tasks:  # none when the test skipped before starting one
            done, running = await asyncio.wait(tasks, timeout=DRIVER_STOP)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    raise AssertionError("a classic driver failed") from task.exception()
            assert not running, "a classic driver did not stop when cancelled"
        for name in classes:
            with contextlib.suppress(APINotFoundError):
                await scene.api.delete(scene.served.resource("deviceclasses"), name)


def _v1alpha2(scene: Scene) -> bool:
    return scene.claims.version == "v1alpha2"


def _named_resources(scene: Scene) -> bool:
    """1.30's structured parameters: v1alpha2 with ResourceSlices (1.27-1.29 have none)."""
    return _v1alpha2(scene) and scene.served.serves("resourceslices")


def _class_name(scene: Scene, driver: str) -> str:
    return f"{scene.namespace}-{driver.split('.')[0]}"


def _spec(scene: Scene, driver: str = CLASSIC_DRIVER, *, immediate: bool = False) -> dict[str, Any]:
    if _v1alpha2(scene):
        spec = {"resourceClassName": _class_name(scene, driver)}
        return {**spec, "allocationMode": "Immediate"} if immediate else spec
    request = {"name": "gpu", "deviceClassName": scene.driver.name}
    return {"controller": driver, "devices": {"requests": [request]}}


async def _template(scene: Scene) -> None:
    body = {"metadata": {"name": "classic"}, "spec": {"spec": _spec(scene)}}
    await scene.api.create(scene.templates, body, namespace=scene.namespace)


async def _claim(
    scene: Scene, name: str, driver: str = CLASSIC_DRIVER, *, immediate: bool = False
) -> None:
    body = {"metadata": {"name": name}, "spec": _spec(scene, driver, immediate=immediate)}
    await scene.api.create(scene.claims, body, namespace=scene.namespace)


def _allocated_by(claim: dict[str, Any]) -> str | None:
    """The driver that allocated: 1.31's `allocation.controller`, 1.30's `status.driverName`."""
    found = allocation(claim)
    if found is None:
        return None
    return str(found.get("controller") or (claim.get("status") or {}).get("driverName") or "")


async def _pod(
    scene: Scene,
    name: str,
    *,
    claim: str | None = None,
    node: str | None = None,
    scheduler: str = names.DEFAULT_SCHEDULER_NAME,
    more: tuple[str, ...] = (),
    template: str = "classic",
) -> dict[str, Any]:
    source = {"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": template}
    sources = [("gpu", source), *((c, {"resourceClaimName": c}) for c in more)]
    if _v1alpha2(scene):  # 1.26-1.30: the claim's source is nested
        claims = [{"name": name, "source": where} for name, where in sources]
    else:
        claims = [{"name": name, **where} for name, where in sources]
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "terminationGracePeriodSeconds": 1,
        "containers": [
            {
                "name": "pause",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"claims": [{"name": "gpu"}]},
            }
        ],
        "resourceClaims": claims,
    }
    if node is not None:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    return await scene.api.create(PODS, body, namespace=scene.namespace)


async def _context(scene: Scene, pod: str) -> dict[str, Any] | None:
    resource = scene.served.resource("podschedulingcontexts")
    try:
        return await scene.api.get(resource, pod, namespace=scene.namespace)
    except APINotFoundError:
        return None


def _nodes_of(claim: dict[str, Any]) -> list[str]:
    found = allocation(claim) or {}
    selector = found.get("nodeSelector") or found.get("availableOnNodes") or {}
    terms = selector.get("nodeSelectorTerms") or []
    return [v for t in terms for f in t.get("matchFields") or () for v in f.get("values") or ()]


async def _deallocated(scene: Scene, name: str) -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        claim = await scene.get_claim(name)
        if claim is None or allocation(claim) is not None:
            return None
        if (claim.get("status") or {}).get("deallocationRequested"):
            return None
        if finalizer_of(CLASSIC_DRIVER) in (claim["metadata"].get("finalizers") or ()):
            return None
        return claim

    return await wait_for(done, what=f"claim {name} deallocated by its driver")


async def test_template_claim_goes_through_the_driver_and_back(
    scene: Scene, classic: Start
) -> None:
    second = scene.driver.nodes[1]
    driver = classic(nodes=(second,))  # the first node is unsuitable for it
    await _template(scene)
    await _pod(scene, "p")

    node, claim = await scene.placed("p")
    assert node == second
    assert _allocated_by(claim) == CLASSIC_DRIVER
    assert _nodes_of(claim) == [second]
    assert finalizer_of(CLASSIC_DRIVER) in claim["metadata"]["finalizers"]
    allocate, _ = waiting_texts(scene.served.minor)  # in the release's words
    assert allocate in await scene.events("p", "FailedScheduling")
    await wait_for(lambda: _gone(scene, "p"), what="the pod's PodSchedulingContext deleted")
    assert driver.allocations == 1
    await scene.verify_clean()

    name = claim["metadata"]["name"]
    assert re.fullmatch(_GENERATED_NAMES[scene.served.claim_naming], name), name
    await scene.delete_pod("p")

    async def claim_gone() -> bool:
        return await scene.get_claim(name) is None

    await wait_for(claim_gone, what=f"generated claim {name} deallocated and deleted")
    assert driver.deallocations == 1
    # The driver's allocation is its own business, not another scheduler's (docs/coexistence.md).
    assert await scene.events(name, "AllocatedByAnotherScheduler") == []


# The claim of pod `p`'s entry `gpu` per release: 1.27 names it, 1.28 and 1.29+ let the API
# server add five characters to a prefix (with a dash from 1.29).
_GENERATED_NAMES = {
    ClaimNaming.DETERMINISTIC: "p-gpu",
    ClaimNaming.GENERATED: "p-gpu[a-z0-9]{5}",
    ClaimNaming.GENERATED_WITH_DASH: "p-gpu-[a-z0-9]{5}",
}


async def _gone(scene: Scene, pod: str) -> bool:
    return await _context(scene, pod) is None


async def test_shared_claim_is_deallocated_when_its_last_pod_goes(
    scene: Scene, classic: Start
) -> None:
    classic(nodes=tuple(scene.driver.nodes))
    await _claim(scene, "shared")
    await _pod(scene, "a", claim="shared")
    node_a, _ = await scene.placed("a")
    await _pod(scene, "b", claim="shared")
    node_b, claim = await scene.placed("b")
    assert node_a == node_b
    assert len(reserved_for(claim)) == 2
    await scene.verify_clean()

    await scene.delete_pod("a")
    await scene.delete_pod("b")
    claim = await _deallocated(scene, "shared")
    assert not reserved_for(claim)


async def test_allocated_claim_in_the_way_is_handed_back(scene: Scene, classic: Start) -> None:
    first, second = scene.driver.nodes[:2]
    driver = classic(nodes=(first, second), reserve=False)
    await _claim(scene, "moved")
    # Another scheduler's pod gets the claim allocated on the first node, then goes away
    # without ever being reserved: the claim stays allocated, used by nobody.
    other = await _pod(scene, "elsewhere", claim="moved", scheduler="someone-else")
    resource = scene.served.resource("podschedulingcontexts")
    owner = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "elsewhere",
        "uid": other["metadata"]["uid"],
        "controller": True,
    }
    context = {
        "metadata": {"name": "elsewhere", "ownerReferences": [owner]},
        "spec": {"selectedNode": first},
    }
    await scene.api.create(resource, context, namespace=scene.namespace)

    async def allocated_on_first() -> bool:
        claim = await scene.get_claim("moved")
        return claim is not None and _nodes_of(claim) == [first]

    await wait_for(allocated_on_first, what="claim allocated for the other scheduler's pod")
    await scene.delete_pod("elsewhere")  # its context goes with it (no garbage collector here)
    await wait_for(lambda: _gone(scene, "elsewhere"), what="the deleted pod's context deleted")

    await _pod(scene, "p", claim="moved", node=second)
    node, claim = await scene.placed("p")
    assert node == second
    assert _nodes_of(claim) == [second]
    assert driver.deallocations == 1
    messages = await scene.events("p", "FailedScheduling")
    assert any("deallocation of ResourceClaim completed" in m for m in messages), messages
    await scene.verify_clean()


async def test_two_drivers_are_both_heard_before_a_node_is_selected(
    scene: Scene, classic: Start
) -> None:
    first, second = scene.driver.nodes[:2]
    picky = classic(nodes=(second,))
    other = OTHER_DRIVER
    classic(nodes=(first, second), name=other)
    await _claim(scene, "mine")
    await _claim(scene, "theirs", driver=other)
    await _pod(scene, "p", claim="mine", more=("theirs",))

    node, claim = await scene.placed("p")
    assert node == second
    assert _nodes_of(claim) == [second]
    theirs = await scene.get_claim("theirs")
    assert theirs is not None and _nodes_of(theirs) == [second]
    assert _allocated_by(theirs) == other
    assert picky.allocations == 1
    await scene.verify_clean()


async def test_immediate_claim_is_allocated_by_its_driver_before_the_pod(
    scene: Scene, classic: Start
) -> None:
    if not _v1alpha2(scene):
        pytest.skip("1.31 has no allocationMode: every classic claim waits for its first consumer")
    first, second = scene.driver.nodes[:2]
    await _claim(scene, "now", immediate=True)
    await _pod(scene, "p", claim="now")

    async def waiting() -> list[str] | None:
        messages = await scene.events("p", "FailedScheduling")
        return (
            messages if any("unallocated immediate resourceclaim" in m for m in messages) else None
        )

    await wait_for(waiting, what="the pod waiting for its Immediate claim")
    assert await _context(scene, "p") is None  # nothing proposed for an Immediate claim
    driver = classic(nodes=(second, first))  # allocates on the first of its nodes by name
    node, claim = await scene.placed("p")
    assert node == first
    assert _nodes_of(claim) == [first]
    assert _allocated_by(claim) == CLASSIC_DRIVER
    await scene.verify_clean()

    await scene.delete_pod("p")

    async def unreserved() -> dict[str, Any] | None:
        found = await scene.get_claim("now")
        return found if found is not None and not reserved_for(found) else None

    claim = await wait_for(unreserved, what="the Immediate claim's reservation pruned")
    assert allocation(claim) is not None  # Immediate: stays allocated without consumers
    assert not (claim.get("status") or {}).get("deallocationRequested")
    await scene.api.delete(scene.claims, "now", namespace=scene.namespace)

    async def gone() -> bool:
        return await scene.get_claim("now") is None

    await wait_for(gone, what="the deleted Immediate claim deallocated by its driver")
    assert driver.deallocations == 1


async def test_named_resources_claim_of_kube_scheduler_is_deallocated_when_its_pod_goes(
    scene: Scene,
) -> None:
    """1.30: a claim another scheduler allocated with named resources (its finalizer
    `dra.k8s.io/delete-protection`) is deallocated by the claims controller, as 1.30's
    kube-controller-manager, once its pod is gone."""
    if not _named_resources(scene):
        pytest.skip(f"no named resources on {scene.served.git_version} (1.30 only)")
    classes = scene.served.resource("deviceclasses")
    name = f"{scene.namespace}-named"
    driver = "named.e2e.example.com"
    body = {"metadata": {"name": name}, "driverName": driver, "structuredParameters": True}
    await scene.api.create(classes, body)
    try:
        await _named_claim_goes_back(scene, name, driver)
    finally:
        with contextlib.suppress(APINotFoundError):
            await scene.api.delete(classes, name)


async def _named_claim_goes_back(scene: Scene, class_name: str, driver: str) -> None:
    node = scene.driver.nodes[0]
    body = {"metadata": {"name": "named"}, "spec": {"resourceClassName": class_name}}
    await scene.api.create(scene.claims, body, namespace=scene.namespace)
    pod = await _pod(scene, "p", claim="named", scheduler="someone-else")
    claim = await scene.get_claim("named")
    assert claim is not None
    claim["metadata"]["finalizers"] = [NAMED_FINALIZER]
    claim = await scene.api.update(scene.claims, claim, namespace=scene.namespace)
    handle = {
        "driverName": driver,
        "structuredData": {"nodeName": node, "results": [{"namedResources": {"name": "i-0"}}]},
    }
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    claim["status"] = {
        "driverName": driver,
        "allocation": {
            "resourceHandles": [handle],
            "availableOnNodes": {"nodeSelectorTerms": [term]},
            "shareable": True,
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": pod["metadata"]["uid"]}],
    }
    await scene.api.update(scene.claims, claim, namespace=scene.namespace, subresource="status")
    await scene.delete_pod("p")

    async def released() -> dict[str, Any] | None:
        found = await scene.get_claim("named")
        if found is None or allocation(found) is not None or reserved_for(found):
            return None
        return None if NAMED_FINALIZER in (found["metadata"].get("finalizers") or ()) else found

    await wait_for(released, what="the named-resources claim deallocated, its finalizer gone")


NAMED_DRIVER = "named.e2e.example.com"
UNSUITABLE = "resourceclaim cannot be allocated for the node (unsuitable)"


def _named_objects(scene: Scene, class_name: str) -> list[tuple[str, dict[str, Any]]]:
    """A structured class whose parameters keep healthy instances, claim parameters asking
    for more than 20Gi, and a slice per node: gpu-0 16Gi, gpu-1 32Gi, gpu-2 48Gi unhealthy
    (so only gpu-1 fits on each node)."""
    ns = scene.namespace
    params_ref = {"apiGroup": "resource.k8s.io", "kind": "ResourceClassParameters"}
    objects: list[tuple[str, dict[str, Any]]] = [
        (
            "resourceclassparameters",
            {
                "metadata": {"name": "healthy", "namespace": ns},
                "vendorParameters": [{"driverName": NAMED_DRIVER, "parameters": {"mode": "x"}}],
                "filters": [
                    {
                        "driverName": NAMED_DRIVER,
                        "namedResources": {"selector": 'attributes.bool["healthy"]'},
                    }
                ],
            },
        ),
        (
            "resourceclaimparameters",
            {
                "metadata": {"name": "big", "namespace": ns},
                "driverRequests": [
                    {
                        "driverName": NAMED_DRIVER,
                        "requests": [
                            {
                                "namedResources": {
                                    "selector": 'attributes.quantity["memory"]'
                                    '.compareTo(quantity("20Gi")) > 0'
                                }
                            }
                        ],
                    }
                ],
            },
        ),
        (
            "deviceclasses",
            {
                "metadata": {"name": class_name},
                "driverName": NAMED_DRIVER,
                "structuredParameters": True,
                "parametersRef": {**params_ref, "name": "healthy", "namespace": ns},
            },
        ),
    ]
    for node in scene.driver.nodes[:2]:
        instances = [
            {
                "name": f"gpu-{i}",
                "attributes": [
                    {"name": "memory", "quantity": f"{16 * (i + 1)}Gi"},
                    {"name": "healthy", "bool": i < 2},
                ],
            }
            for i in range(3)
        ]
        body = {
            "metadata": {"name": f"{ns}-{node}"},
            "nodeName": node,
            "driverName": NAMED_DRIVER,
            "namedResources": {"instances": instances},
        }
        objects.append(("resourceslices", body))
    return objects


def _named_pick(claim: dict[str, Any]) -> tuple[str, list[str]]:
    """(structuredData.nodeName, the instances) of a 1.30 named-resources allocation."""
    [handle] = (allocation(claim) or {})["resourceHandles"]
    assert handle["driverName"] == NAMED_DRIVER
    data = handle["structuredData"]
    assert data["vendorClassParameters"] == {"mode": "x"}
    return data["nodeName"], [r["namedResources"]["name"] for r in data["results"]]


async def test_the_operator_allocates_1_30_named_resources_for_pods(scene: Scene) -> None:
    """1.30: pods whose template claims name a `structuredParameters` ResourceClass are
    scheduled by the operator, as 1.30's kube-scheduler does (classic-dra.md §6)."""
    if not _named_resources(scene):
        pytest.skip(f"no named resources on {scene.served.git_version} (1.30 only)")
    class_name = f"{scene.namespace}-named"
    created = []
    try:
        for plural, body in _named_objects(scene, class_name):
            resource = scene.served.resource(plural)
            namespace = scene.namespace if resource.namespaced else None
            await scene.api.create(resource, body, namespace=namespace)
            created.append((resource, body["metadata"]["name"], namespace))
        spec = {
            "resourceClassName": class_name,
            "parametersRef": {
                "apiGroup": "resource.k8s.io",
                "kind": "ResourceClaimParameters",
                "name": "big",
            },
        }
        template = {"metadata": {"name": "named"}, "spec": {"spec": spec}}
        await scene.api.create(scene.templates, template, namespace=scene.namespace)
        await _named_pods(scene)
    finally:
        await scene.clean_up()
        for resource, name, namespace in reversed(created):
            with contextlib.suppress(APINotFoundError):
                await scene.api.delete(resource, name, namespace=namespace)


async def _named_pods(scene: Scene) -> None:
    for name in ("p0", "p1"):
        await _pod(scene, name, template="named")
    placed = {name: await scene.placed(name) for name in ("p0", "p1")}
    assert {node for node, _ in placed.values()} == set(scene.driver.nodes[:2])
    for node, claim in placed.values():
        assert claim["status"]["driverName"] == NAMED_DRIVER
        assert _named_pick(claim) == (node, ["gpu-1"])  # gpu-0 too small, gpu-2 unhealthy
        assert NAMED_FINALIZER in claim["metadata"]["finalizers"]
    await _pod(scene, "p2", template="named")

    async def refused() -> list[str] | None:
        messages = await scene.events("p2", "FailedScheduling")
        return messages if any(UNSUITABLE in m for m in messages) else None

    await wait_for(refused, what="p2 refused: no fitting instance left")
    await scene.verify_clean()
    freed_node, _ = placed["p0"]
    await scene.delete_pod("p0")
    node, claim = await scene.placed("p2")
    assert (node, _named_pick(claim)) == (freed_node, (freed_node, ["gpu-1"]))
    await scene.verify_clean()
