"""Hooks and AllocationPolicies in the live operator, against a real kube-apiserver.

The operator runs as the RBAC-limited identity (deploy/'s ClusterRole), in-process for the
placement tests and as a `dra-operator run --hook ...` subprocess for the failure test (its
log and its /metrics are read as a user would). Each test uses its own drivers, classes and
policies (policies select claims by the test's own classes), so the cluster-scoped objects of
other tests never govern its claims. `dra-operator verify` is clean after each scenario.

Covers: a hook (examples/hooks/most_memory.py) changes which device is chosen; failing hooks are
contained (counted in dra_operator_hook_failures_total, logged; under `ignore` the pod is still
scheduled, under `refuse` it is not and the event gives the reason); BinPack and Spread place the
same workload differently (4 + 0 against 2 + 2 on two nodes of 4 devices); a policy naming a hook
the operator did not load is marked Invalid with a message and governs nothing, while the claims
it would have governed are allocated, and valid policies report the claims they govern; a status
is written only when it changes (no stored status repeats the one before it); a `before_evict`
hook (examples/hooks/hold_evictions.py) holds a device-taint eviction until it lets go;
`explain` tries a claim with its governing policy's strategy and budget and names the policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import subprocess
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from tests.integration.test_explain import Scene as ExplainScene
from tests.integration.test_operator_eviction import DRIVER as EVICTION_DRIVER
from tests.integration.test_operator_eviction import Scene
from tests.support.controlplane import NodeFactory, Spawned
from tests.support.dra_objects import (
    claim_spec,
    device_class,
    driver_of,
    resource_claim,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.kubelet_standin import KubeletStandIn
from tests.support.operator import (
    InProcessOperator,
    failed_scheduling,
    operator_args,
    verify_clean,
    wait_for,
)

from dra_operator import controlplane
from dra_operator.errors import APINotFoundError
from dra_operator.kube import ALLOCATION_POLICIES, PODS, Client, dra

pytestmark = pytest.mark.controlplane

REPO = Path(__file__).parents[2]
EXAMPLES = REPO / "examples" / "hooks"
CRD = REPO / "crds" / "dra-operator.dev_allocationpolicies.yaml"
CLAIMS = dra("resourceclaims")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")
DEADLINE = 60.0


@pytest.fixture(scope="module")
def crd_installed(control_plane: controlplane.ControlPlaneState) -> None:
    """The AllocationPolicy CRD, installed before any operator of this module starts (the
    operator discovers it at start-up)."""
    kubectl = controlplane.find_binaries().require("kubectl")
    base = [str(kubectl), "--kubeconfig", str(control_plane.admin_kubeconfig)]
    for args in (
        ["apply", "--server-side", "-f", str(CRD)],
        ["wait", "--for=condition=Established", "--timeout=60s", f"crd/{_crd_name()}"],
    ):
        done = subprocess.run(
            [*base, *args], capture_output=True, text=True, check=False, timeout=120
        )
        assert done.returncode == 0, done.stderr


def _crd_name() -> str:
    name: str = yaml.safe_load(CRD.read_text())["metadata"]["name"]
    return name


@pytest.fixture
async def policies(
    admin_api: Client, crd_installed: None
) -> AsyncIterator[Callable[..., Awaitable[dict[str, Any]]]]:
    """Creates AllocationPolicies (cluster-scoped) and deletes them after the test."""
    created: list[str] = []

    async def create(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        body = {
            "apiVersion": "dra-operator.dev/v1alpha1",
            "kind": "AllocationPolicy",
            "metadata": {"name": name},
            "spec": spec,
        }
        answer = await admin_api.create(ALLOCATION_POLICIES, body)
        created.append(name)
        return answer

    yield create
    for name in created:
        await admin_api.delete(ALLOCATION_POLICIES, name)


@pytest.fixture
def hooks_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/hooks on sys.path, as PYTHONPATH puts it for `dra-operator run --hook`."""
    monkeypatch.syspath_prepend(str(EXAMPLES))


def _with_memory(memories: list[str]) -> list[dict[str, Any]]:
    """Devices gpu-0 .. with these `memory` capacities, in order (what most_memory scores)."""
    return [
        {"name": f"gpu-{i}", "capacity": {"memory": {"value": memory}}}
        for i, memory in enumerate(memories)
    ]


async def _workload(
    api: Client, namespace: str, class_name: str, names: list[str], **labels: str
) -> None:
    """One claim and one pod per name, pods created one after the other."""
    for name in names:
        claim = resource_claim(name, claim_spec(class_name), labels=labels)
        await api.create(CLAIMS, claim, namespace=namespace)
    for name in names:
        await api.create(PODS, scheduler_pod(name, claim=name), namespace=namespace)


async def _bound(api: Client, namespace: str, names: list[str]) -> dict[str, str] | None:
    """Pod name → node once every pod in `names` is bound, else None."""
    found: dict[str, str] = {}
    for name in names:
        node = (await api.get(PODS, name, namespace=namespace))["spec"].get("nodeName")
        if not node:
            return None
        found[name] = node
    return found


async def _device_of(api: Client, namespace: str, claim: str) -> str:
    raw = await api.get(CLAIMS, claim, namespace=namespace)
    (result,) = raw["status"]["allocation"]["devices"]["results"]
    device: str = result["device"]
    return device


def _sample(metrics: str, name: str, **labels: str) -> float:
    """The value of one series in a Prometheus text exposition (0 when absent)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in metrics.splitlines():
        series, _, value = line.rpartition(" ")
        if series.startswith(f"{name}{{"):
            found = ",".join(sorted(series[len(name) + 1 : -1].split(",")))
            if found == wanted:
                return float(value)
    return 0.0


# -- a hook changes the chosen device -----------------------------------------------------


async def test_a_hook_changes_which_device_is_chosen(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    run_operator: Callable[..., Awaitable[InProcessOperator]],
    hooks_importable: None,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    # FirstFit (upstream's order) takes gpu-0, then gpu-1; most memory first is the reverse.
    await cluster(
        SLICES, resource_slice(node, driver_of(gpu), _with_memory(["4Gi", "8Gi", "16Gi"]))
    )
    handle = await run_operator(
        controllers=frozenset({"scheduler"}), hooks=("most_memory:MostMemory",)
    )

    await _workload(admin_api, namespace, gpu, ["first"])
    await wait_for(lambda: _bound(admin_api, namespace, ["first"]), timeout=DEADLINE)
    await _workload(admin_api, namespace, gpu, ["second"])
    await wait_for(lambda: _bound(admin_api, namespace, ["second"]), timeout=DEADLINE)

    assert await _device_of(admin_api, namespace, "first") == "gpu-2"
    assert await _device_of(admin_api, namespace, "second") == "gpu-1"
    assert handle.operator is not None
    metrics = handle.operator.metrics.render().decode()
    calls = _sample(
        metrics,
        "dra_operator_hook_calls_total",
        hook="most_memory:MostMemory",
        point="score_device",
    )
    assert calls >= 3  # every candidate device of the first decision was scored
    await verify_clean(control_plane, namespace)


# -- failing hooks are contained ----------------------------------------------------------


async def _scrape(port: int) -> str:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/metrics") as resp,
    ):
        assert resp.status == 200
        return await resp.text()


async def test_failing_hooks_are_contained_per_failure_mode(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    policies: Callable[..., Awaitable[dict[str, Any]]],
    spawn: Callable[..., Spawned],
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    lenient, strict = unique_name("lenient"), unique_name("strict")
    for name in (lenient, strict):
        await cluster(CLASSES, device_class(name))
        await cluster(SLICES, resource_slice(node, driver_of(name), _with_memory(["8Gi", "8Gi"])))
    # failing:Broken raises everywhere (ignore); failing:Slow outlives its 10 ms (refuse).
    await policies(lenient, {"deviceClassNames": [lenient], "hooks": ["failing:Broken"]})
    await policies(strict, {"deviceClassNames": [strict], "hooks": ["failing:Slow"]})
    args = operator_args(str(control_plane.operator_kubeconfig), namespace, "hooks")
    operator = spawn(
        "dra-operator",
        *args,
        "--controllers=scheduler",
        "--metrics-bind-address=127.0.0.1:0",
        "--hook=failing:Broken",
        "--hook=failing:Slow",
        env={"PYTHONPATH": str(EXAMPLES)},
    )
    serving = await wait_for(
        lambda: operator.events("probes.serving"), timeout=DEADLINE, what="the probes"
    )
    port = int(serving[0]["metrics_port"])

    await _workload(admin_api, namespace, lenient, ["ignored"])
    await _workload(admin_api, namespace, strict, ["refused"])

    bound = await wait_for(lambda: _bound(admin_api, namespace, ["ignored"]), timeout=DEADLINE)
    refusals = await wait_for(
        lambda: failed_scheduling(admin_api, namespace, "refused"), timeout=DEADLINE
    )
    metrics = await _scrape(port)
    failures = "dra_operator_hook_failures_total"
    raised = _sample(
        metrics, failures, hook="failing:Broken", point="before_allocate", reason="error"
    )
    vetoes = _sample(
        metrics, failures, hook="failing:Broken", point="filter_device", reason="error"
    )
    timeouts = _sample(
        metrics, failures, hook="failing:Slow", point="before_allocate", reason="timeout"
    )
    logged = {(e["hook"], e["point"], e["reason"]) for e in operator.events("hook.failed")}
    refused = await admin_api.get(PODS, "refused", namespace=namespace)
    claim = await admin_api.get(CLAIMS, "refused", namespace=namespace)

    assert bound == {"ignored": node}
    assert refusals[0] == "Allocation refused by hook failing:Slow: the hook failed (timeout)."
    assert not refused["spec"].get("nodeName")
    assert not (claim.get("status") or {}).get("allocation")
    assert raised >= 1 and vetoes >= 2 and timeouts >= 1
    assert {
        ("failing:Broken", "before_allocate", "error"),
        ("failing:Broken", "filter_device", "error"),
        ("failing:Slow", "before_allocate", "timeout"),
    } <= logged
    assert operator.proc.poll() is None  # still serving
    await verify_clean(control_plane, namespace)


# -- BinPack against Spread ---------------------------------------------------------------


async def test_binpack_and_spread_place_the_same_workload_differently(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    policies: Callable[..., Awaitable[dict[str, Any]]],
    run_operator: Callable[..., Awaitable[InProcessOperator]],
    control_plane: controlplane.ControlPlaneState,
) -> None:
    nodes = sorted([(await make_node())["metadata"]["name"] for _ in range(2)])
    packed, spread = unique_name("packed"), unique_name("spread")
    for name in (packed, spread):
        await cluster(CLASSES, device_class(name))
        for node in nodes:
            await cluster(SLICES, resource_slice(node, driver_of(name), _with_memory(["8Gi"] * 4)))
    await policies(packed, {"deviceClassNames": [packed], "strategy": "BinPack"})
    await policies(spread, {"deviceClassNames": [spread], "strategy": "Spread"})
    await run_operator(controllers=frozenset({"scheduler"}))

    packed_pods = [f"packed-{i}" for i in range(4)]
    spread_pods = [f"spread-{i}" for i in range(4)]
    await _workload(admin_api, namespace, packed, packed_pods)
    await _workload(admin_api, namespace, spread, spread_pods)
    binpack = await wait_for(lambda: _bound(admin_api, namespace, packed_pods), timeout=DEADLINE)
    spreading = await wait_for(lambda: _bound(admin_api, namespace, spread_pods), timeout=DEADLINE)

    assert sorted(Counter(binpack.values()).values()) == [4]
    assert sorted(Counter(spreading.values()).values()) == [2, 2]
    await verify_clean(control_plane, namespace)


# -- an Invalid policy, and the claims policies govern ------------------------------------


async def _status(api: Client, name: str) -> dict[str, Any]:
    status: dict[str, Any] = (await api.get(ALLOCATION_POLICIES, name)).get("status") or {}
    return status


def _condition(status: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in status.get("conditions") or () if c["type"] == kind), {})


async def _statuses(api: Client, name: str, since: str, into: list[dict[str, Any]]) -> None:
    """Append the policy's status at every change the watch shows (until cancelled)."""
    events = api.watch(
        ALLOCATION_POLICIES, field_selector=f"metadata.name={name}", resource_version=since
    )
    async with contextlib.aclosing(events):
        async for event in events:
            if event["type"] == "MODIFIED":
                into.append(event["object"].get("status") or {})


async def test_an_invalid_policy_is_marked_and_stops_nothing(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    policies: Callable[..., Awaitable[dict[str, Any]]],
    run_operator: Callable[..., Awaitable[InProcessOperator]],
    control_plane: controlplane.ControlPlaneState,
    record_property: Callable[[str, object], None],
) -> None:
    node = (await make_node())["metadata"]["name"]
    good, bad = unique_name("good"), unique_name("bad")
    for name in (good, bad):
        await cluster(CLASSES, device_class(name))
        await cluster(SLICES, resource_slice(node, driver_of(name), _with_memory(["8Gi"] * 3)))
    created = await policies(good, {"deviceClassNames": [good], "strategy": "Spread"})
    # The schema accepts any hook name; only the operator knows it never loaded this one.
    invalid = await policies(
        bad, {"deviceClassNames": [bad], "strategy": "BinPack", "hooks": ["absent:Hook"]}
    )
    writes: list[dict[str, Any]] = []  # every status of `good` the server stored, in order
    watching = asyncio.create_task(
        _statuses(admin_api, good, created["metadata"]["resourceVersion"], writes)
    )
    await run_operator(controllers=frozenset({"scheduler"}))

    good_pods, bad_pods = [f"good-{i}" for i in range(3)], [f"bad-{i}" for i in range(2)]
    await _workload(admin_api, namespace, good, good_pods)
    await _workload(admin_api, namespace, bad, bad_pods)
    await wait_for(lambda: _bound(admin_api, namespace, good_pods + bad_pods), timeout=DEADLINE)

    async def settled(name: str, governed: int) -> dict[str, Any] | None:
        status = await _status(admin_api, name)
        return status if status.get("governedClaims") == governed else None

    good_status = await wait_for(lambda: settled(good, 3), timeout=DEADLINE)
    bad_status = await wait_for(lambda: settled(bad, 0), timeout=DEADLINE)
    await wait_for(lambda: writes and writes[-1] == good_status, timeout=DEADLINE)
    watching.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await watching
    record_property("good_policy_status_writes", len(writes))

    # Written only when it changed: no write stored the status the previous one had.
    assert all(before != after for before, after in itertools.pairwise(writes))

    assert _condition(good_status, "Accepted")["status"] == "True"
    assert _condition(good_status, "Invalid")["status"] == "False"
    assert _condition(bad_status, "Accepted")["status"] == "False"
    assert _condition(bad_status, "Invalid") | {"lastTransitionTime": ""} == {
        "type": "Invalid",
        "status": "True",
        "reason": "Invalid",
        "message": "unknown hooks: absent:Hook (not loaded by the operator)",
        "observedGeneration": invalid["metadata"]["generation"],
        "lastTransitionTime": "",
    }
    assert bad_status["observedGeneration"] == invalid["metadata"]["generation"]

    # Fixed: the next generation is Accepted and governs the claims of its class.
    fixed = await admin_api.patch(ALLOCATION_POLICIES, bad, {"spec": {"hooks": []}})
    generation = fixed["metadata"]["generation"]

    async def accepted() -> dict[str, Any] | None:
        status = await _status(admin_api, bad)
        if status.get("observedGeneration") != generation:
            return None
        return status if _condition(status, "Accepted").get("status") == "True" else None

    status = await wait_for(accepted, timeout=DEADLINE)
    assert status["governedClaims"] == 2
    await verify_clean(control_plane, namespace)


# -- before_evict holds a device-taint eviction -------------------------------------------


async def test_a_before_evict_hook_holds_an_eviction_until_it_lets_go(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    run_operator: Callable[..., Awaitable[InProcessOperator]],
    hooks_importable: None,
    kubelet_standin: KubeletStandIn,
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    scene = Scene(admin_api, namespace, node, str(control_plane.admin_kubeconfig))
    await scene.publish()
    handle = await run_operator(
        controllers=frozenset({"claims", "eviction"}), hooks=("hold_evictions:HoldLabelled",)
    )
    assert handle.operator is not None
    hook = handle.operator.hooks.hooks[0].target
    try:
        await scene.consumer("a", "dev-0", [])
        hold = {"metadata": {"labels": {"dra.example.com/hold": "true"}}}
        await admin_api.patch(PODS, "a", hold, namespace=namespace)
        await scene.taint(device="dev-0")

        held = await wait_for(lambda: list(hook.held), timeout=DEADLINE, what="a hold")
        # The hook answered "later": nothing can have evicted the pod since.
        still = await admin_api.get(PODS, "a", namespace=namespace)
        assert "deletionTimestamp" not in still["metadata"]
        assert held[0] == (
            f"{namespace}/a",
            (f"taint 0 of device {EVICTION_DRIVER}/{scene.pool}/dev-0",),
        )

        # Removing the label is a pod change: asked again at once, the hook lets it go.
        release = {"metadata": {"labels": {"dra.example.com/hold": None}}}
        await admin_api.patch(PODS, "a", release, namespace=namespace)
        await wait_for(lambda: scene.terminating("a"), timeout=DEADLINE, what="pod a evicted")
        assert [e["message"] for e in await scene.events("a")] == ["Marking for deletion"]
    finally:
        await scene.release("a")
        with contextlib.suppress(APINotFoundError):
            await admin_api.delete(SLICES, scene.pool)


async def test_explain_uses_and_names_the_governing_policy(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    policies: Callable[..., Awaitable[dict[str, Any]]],
    control_plane: controlplane.ControlPlaneState,
) -> None:
    node = (await make_node())["metadata"]["name"]
    scene = ExplainScene(admin_api, namespace, node)
    await scene.setup([{"name": "gpu-0"}, {"name": "gpu-1"}])
    try:
        name = unique_name("explained")
        await policies(
            name,
            {
                "deviceClassNames": [scene.device_class],
                "strategy": "Spread",
                "searchBudget": {"steps": 1},
            },
        )
        await scene.claim("wants", [scene.request("gpu", count=2)])
        code, body, verdict = await scene.explain(control_plane.admin_kubeconfig, "claim", "wants")
        assert code == 3
        assert (body["policy"], body["strategy"]) == (name, "Spread")
        assert verdict is not None and "search budget exhausted" in verdict["summary"]
    finally:
        await scene.teardown()
