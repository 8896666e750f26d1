"""kube-scheduler's plugin families on pods with claims, placed by the operator (issue #28).

Run on the local control plane (its real nodes on 1.36+, fake Ready nodes before) and, with
DRA_OPERATOR_E2E_OPERATOR=deployed, beside kube-scheduler and kube-controller-manager with the
shipped routing, where the pods name the default scheduler's routing target. Covers:
InterPodAffinity: two replicas with a device claim each and required pod anti-affinity on the
hostname run on two nodes, and a third replica stays pending with the upstream reason;
PodTopologySpread: a pair with maxSkew 1 (DoNotSchedule) on the hostname lands 1-1;
SchedulingGates: a gated pod with a claim is not placed and its claim not allocated while a
pod created after it is, then placed (and run) once the gate is removed.
"""

from __future__ import annotations

import pytest
from tests.support.operator import wait_for

from dra_operator.kube import PODS, JSONObject, PatchType
from e2e._scene import Scene, allocation, claim_name_of

pytestmark = pytest.mark.controlplane

HOSTNAME = "kubernetes.io/hostname"
GATE = "e2e.dra-operator.dev/queue"
# kube-scheduler v1.37.2, pkg/scheduler/framework/plugins/interpodaffinity
# (ErrReasonAntiAffinityRulesNotMatch).
ANTI_AFFINITY_REASON = "didn't match pod anti-affinity rules"


def _replicas(app: str) -> dict[str, str]:
    return {"app": app}


def _anti_affinity(app: str) -> JSONObject:
    term = {"labelSelector": {"matchLabels": _replicas(app)}, "topologyKey": HOSTNAME}
    return {
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    }


def _spread(app: str) -> JSONObject:
    constraint = {
        "maxSkew": 1,
        "topologyKey": HOSTNAME,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": _replicas(app)},
    }
    return {"topologySpreadConstraints": [constraint]}


async def _placed_and_running(scene: Scene, name: str) -> str:
    """The node of pod `name` once bound with its claim reserved (and running, on real nodes)."""
    node, _ = await scene.placed(name)
    if scene.real_nodes:
        await scene.running(name)
    return node


def _two_nodes(scene: Scene) -> None:
    if len(scene.driver.nodes) < 2:
        pytest.skip("needs two nodes with the driver's devices")


async def test_required_anti_affinity_runs_replicas_on_different_nodes(scene: Scene) -> None:
    _two_nodes(scene)
    await scene.template()
    app = "anti"
    for name in ("replica-0", "replica-1"):
        await scene.pod(name, labels=_replicas(app), spec=_anti_affinity(app))
    nodes = {await _placed_and_running(scene, name) for name in ("replica-0", "replica-1")}
    assert len(nodes) == 2
    if len(scene.driver.nodes) == 2:  # every node holds a replica: a third has nowhere to go
        await scene.pod("replica-2", labels=_replicas(app), spec=_anti_affinity(app))

        async def refused() -> list[str] | None:
            found = await scene.events("replica-2", "FailedScheduling")
            return [m for m in found if ANTI_AFFINITY_REASON in m] or None

        await wait_for(refused, what="FailedScheduling of replica-2 naming anti-affinity")
        pod = await scene.get_pod("replica-2")
        assert pod is not None and not pod["spec"].get("nodeName")
    await scene.verify_clean()


async def test_a_spread_pair_lands_one_per_node(scene: Scene) -> None:
    _two_nodes(scene)
    await scene.template()
    app = "spread"
    for name in ("spread-0", "spread-1"):
        await scene.pod(name, labels=_replicas(app), spec=_spread(app))
    nodes = [await _placed_and_running(scene, name) for name in ("spread-0", "spread-1")]
    assert len(set(nodes)) == 2, nodes
    await scene.verify_clean()


async def test_a_gated_pod_waits_then_runs_once_the_gate_is_removed(scene: Scene) -> None:
    await scene.template()
    await scene.pod("gated", spec={"schedulingGates": [{"name": GATE}]})
    # A pod created after it is placed: the scheduler has seen the gated one and passed it over.
    await scene.pod("witness")
    await _placed_and_running(scene, "witness")
    gated = await scene.get_pod("gated")
    assert gated is not None and not gated["spec"].get("nodeName")
    claim_name = claim_name_of(gated, deterministic=scene.deterministic_names)
    claim = await scene.get_claim(claim_name) if claim_name else None
    assert claim is None or allocation(claim) is None
    ungate = [{"op": "remove", "path": "/spec/schedulingGates"}]
    await scene.api.patch(
        PODS, "gated", ungate, namespace=scene.namespace, patch_type=PatchType.JSON
    )
    await _placed_and_running(scene, "gated")
    await scene.verify_clean()
