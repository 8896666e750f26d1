"""ResourcePoolStatusRequests answered live: the operator's poolstatus controller on a real
API server serving resource.k8s.io/v1alpha3 with DRAResourcePoolStatus on (the local control
plane switches every DRA gate on).

Covers: a request is answered with the pool's devices, allocations (a claim's allocation
written through the API) and taints; `kubectl get resourcepoolstatusrequests` prints the
answer; a request for a pool that does not exist is answered with no pools; an answered request
is not answered again when the pool changes (the API server keeps it immutable).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from tests.support.dra_objects import claim_spec, resource_claim, resource_slice
from tests.support.operator import wait_for

from dra_operator import controlplane
from dra_operator.kube import Client, dra

pytestmark = pytest.mark.controlplane

SLICES = dra("resourceslices")
CLAIMS = dra("resourceclaims")
REQUESTS = dra("resourcepoolstatusrequests", "v1alpha3")
DRIVER = "poolstatus.example.com"


def _request(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourcePoolStatusRequest",
        "metadata": {"name": name},
        "spec": {"driver": DRIVER, **spec},
    }


async def _answered(api: Client, name: str) -> dict[str, Any]:
    async def status() -> dict[str, Any] | None:
        got = await api.get(REQUESTS, name)
        answer: dict[str, Any] | None = got.get("status")
        return answer

    answer: dict[str, Any] = await wait_for(status, timeout=30, what=f"request {name} answered")
    return answer


@pytest.fixture
async def requests(admin_api: Client) -> Any:
    created: list[str] = []

    async def create(name: str, **spec: Any) -> None:
        await admin_api.create(REQUESTS, _request(name, **spec))
        created.append(name)

    yield create
    for name in created:
        await admin_api.delete(REQUESTS, name)


async def test_a_request_is_answered_once_with_the_pool(
    control_plane: controlplane.ControlPlaneState,
    admin_api: Client,
    namespace: str,
    cluster: Callable[..., Any],
    requests: Callable[..., Any],
    run_operator: Any,
) -> None:
    if "v1alpha3" not in await admin_api.served_versions("resource.k8s.io"):
        pytest.skip("resource.k8s.io/v1alpha3 not served")
    pool = f"pool-{namespace}"
    devices: list[dict[str, Any]] = [{"name": f"dev-{i}"} for i in range(4)]
    devices[3]["taints"] = [{"key": "example.com/broken", "effect": "NoSchedule"}]
    await cluster(SLICES, resource_slice("node-a", DRIVER, devices, name=pool, pool=pool))
    claim = await admin_api.create(
        CLAIMS, resource_claim("held", claim_spec("any-class"), namespace=namespace)
    )
    result = {"request": "gpu", "driver": DRIVER, "pool": pool, "device": "dev-0"}
    claim["status"] = {"allocation": {"devices": {"results": [result]}}}
    await admin_api.update(CLAIMS, claim, subresource="status")

    await run_operator(controllers=frozenset({"poolstatus"}))
    await requests(f"all-{namespace}", poolName=pool)
    await requests(f"none-{namespace}", poolName=f"missing-{namespace}")

    answer = await _answered(admin_api, f"all-{namespace}")
    (entry,) = answer["pools"]
    assert answer["poolCount"] == 1
    assert entry == {
        "driver": DRIVER,
        "poolName": pool,
        "generation": 1,
        "nodeName": "node-a",
        "resourceSliceCount": 1,
        "totalDevices": 4,
        "allocatedDevices": 1,
        "availableDevices": 2,
        "unavailableDevices": 1,
    }
    (condition,) = answer["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Complete",
        "True",
        "CalculationComplete",
    )
    assert condition["message"] == "Calculated status for 1 pools"

    missing = await _answered(admin_api, f"none-{namespace}")
    assert missing["poolCount"] == 0
    assert "pools" not in missing

    kubectl = controlplane.find_binaries().require("kubectl")
    printed = subprocess.run(
        [
            str(kubectl),
            "--kubeconfig",
            str(control_plane.admin_kubeconfig),
            "get",
            "resourcepoolstatusrequests",
            f"all-{namespace}",
            "--no-headers",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    # NAME DRIVER TOTAL AVAILABLE ALLOCATED UNAVAILABLE ERRORS POOLS STATUS COMPLETED
    assert printed[:9] == [f"all-{namespace}", DRIVER, "4", "2", "1", "1", "0", "1", "Complete"]

    await admin_api.delete(SLICES, pool)  # the answer stays as it was
    await cluster(SLICES, resource_slice("node-a", DRIVER, devices[:1], name=pool, pool=pool))
    again = await admin_api.get(REQUESTS, f"all-{namespace}")
    assert again["status"]["pools"][0]["totalDevices"] == 4
