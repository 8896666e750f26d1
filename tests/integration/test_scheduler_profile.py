"""The live scheduler's default profile against a real kube-apiserver, as the operator identity.

The operator runs in-process under deploy/base's ClusterRole, scoped to the test's namespace, as
in test_scheduler.py. Each test makes its own nodes, labelled with the test's namespace, and its
pods select them by that label, so no other node of the shared control plane takes part
(PodTopologySpread honours the pods' node selector when it counts domains). Pods never run: a
pod is done when it is bound.

Covers: two replicas with required pod anti-affinity on the hostname land on two nodes, though
both prefer the same node; maxSkew 1 DoNotSchedule over three nodes gives 1-1-1, though every
pod prefers one node; a WaitForFirstConsumer PVC with one local PV on node C puts the pod on C
and the PVC is bound by the operator's writes (no PV controller runs here); a gated pod is not
placed and its claim not allocated while a pod created after it is, then placed once the gate
is removed; a FailedScheduling event in kube-scheduler's words.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from tests.support.controlplane import NodeFactory
from tests.support.dra_objects import (
    claim_spec,
    claim_template,
    device_class,
    driver_of,
    gpus,
    resource_slice,
    scheduler_pod,
    unique_name,
)
from tests.support.operator import InProcessOperator, failed_scheduling, wait_for

from dra_operator import names
from dra_operator.errors import APINotFoundError
from dra_operator.kube import (
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    STORAGE_CLASSES,
    Client,
    dra,
)

pytestmark = pytest.mark.controlplane

HOSTNAME = "kubernetes.io/hostname"
GROUP = "test.dra-operator.io/group"
CLAIMS = dra("resourceclaims")
TEMPLATES = dra("resourceclaimtemplates")
CLASSES = dra("deviceclasses")
SLICES = dra("resourceslices")


@pytest.fixture
async def operator(run_operator: Any) -> AsyncIterator[InProcessOperator]:
    yield await run_operator(controllers=frozenset({"claims", "scheduler"}))


@pytest.fixture
async def storage(admin_api: Client) -> AsyncIterator[list[tuple[Any, str]]]:
    """Cluster-scoped storage objects to delete after the test: (resource, name)."""
    created: list[tuple[Any, str]] = []
    yield created
    for resource, name in reversed(created):
        with contextlib.suppress(APINotFoundError):
            await admin_api.delete(resource, name)


async def _nodes(make_node: NodeFactory, namespace: str, count: int) -> list[str]:
    """`count` nodes named `<namespace>-a`, `-b`, ... in the test's group."""
    made = []
    for letter in "abcdefgh"[:count]:
        node = await make_node(f"{namespace}-{letter}", labels={GROUP: namespace})
        made.append(node["metadata"]["name"])
    return made


def _pod(
    name: str,
    namespace: str,
    *,
    labels: dict[str, str] | None = None,
    prefer: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A pause pod for our scheduler on the test's nodes; `prefer` names a node it prefers
    (preferred node affinity, weight 100), so that only a rule keeps it off that node."""
    affinity: dict[str, Any] = {}
    if prefer is not None:
        term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [prefer]}]}
        affinity["nodeAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": term}]
        }
    if "affinity" in spec:
        affinity.update(spec.pop("affinity"))
    body: dict[str, Any] = {
        "schedulerName": names.DEFAULT_SCHEDULER_NAME,
        "nodeSelector": {GROUP: namespace},
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
        **spec,
    }
    if affinity:
        body["affinity"] = affinity
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": body,
    }


async def _node_of(api: Client, namespace: str, pod: str) -> str | None:
    answer = await api.get(PODS, pod, namespace=namespace)
    found: str | None = answer["spec"].get("nodeName")
    return found


async def test_required_anti_affinity_puts_two_replicas_on_two_nodes(
    admin_api: Client, namespace: str, make_node: NodeFactory, operator: InProcessOperator
) -> None:
    first, *_ = await _nodes(make_node, namespace, 3)
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "trainer"}}, "topologyKey": HOSTNAME}
            ]
        }
    }
    for name in ("r0", "r1"):
        body = _pod(name, namespace, labels={"app": "trainer"}, prefer=first, affinity=anti)
        await admin_api.create(PODS, body, namespace=namespace)
    placed = [await wait_for(lambda n=n: _node_of(admin_api, namespace, n)) for n in ("r0", "r1")]
    assert first in placed  # the preference holds for one of them
    assert len(set(placed)) == 2


async def test_topology_spread_max_skew_one_over_three_nodes_gives_one_each(
    admin_api: Client, namespace: str, make_node: NodeFactory, operator: InProcessOperator
) -> None:
    nodes = await _nodes(make_node, namespace, 3)
    spread = {
        "maxSkew": 1,
        "topologyKey": HOSTNAME,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "spread"}},
    }
    for i in range(3):
        body = _pod(
            f"s{i}",
            namespace,
            labels={"app": "spread"},
            prefer=nodes[0],
            topologySpreadConstraints=[spread],
        )
        await admin_api.create(PODS, body, namespace=namespace)
    placed = [await wait_for(lambda i=i: _node_of(admin_api, namespace, f"s{i}")) for i in range(3)]
    assert sorted(placed) == sorted(nodes)


async def test_a_wffc_claim_with_one_local_pv_on_node_c_puts_the_pod_there_and_binds_it(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    storage: list[tuple[Any, str]],
    operator: InProcessOperator,
) -> None:
    _, _, node_c = await _nodes(make_node, namespace, 3)
    sc = f"local-{namespace}"
    await admin_api.create(
        STORAGE_CLASSES,
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": sc},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    )
    storage.append((STORAGE_CLASSES, sc))
    pv = f"pv-{namespace}"
    selector = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node_c]}]}
    await admin_api.create(
        PERSISTENT_VOLUMES,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv},
            "spec": {
                "capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": sc,
                "local": {"path": "/mnt/disks/data"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [selector]}},
            },
        },
    )
    storage.append((PERSISTENT_VOLUMES, pv))
    # No PV controller runs here to move a new PV to Available: do it as it would.
    await admin_api.patch(
        PERSISTENT_VOLUMES, pv, {"status": {"phase": "Available"}}, subresource="status"
    )
    claim = await admin_api.create(
        PERSISTENT_VOLUME_CLAIMS,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"},
            "spec": {
                "storageClassName": sc,
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
        namespace=namespace,
    )
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    await admin_api.create(PODS, _pod("trainer", namespace, volumes=volumes), namespace=namespace)
    assert await wait_for(lambda: _node_of(admin_api, namespace, "trainer")) == node_c
    written = await admin_api.get(PERSISTENT_VOLUMES, pv)
    assert written["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]
    bound = await admin_api.get(PERSISTENT_VOLUME_CLAIMS, "data", namespace=namespace)
    assert bound["spec"]["volumeName"] == pv
    assert bound["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"


async def test_a_gated_pod_waits_with_its_claim_unallocated_until_the_gate_goes(
    admin_api: Client,
    namespace: str,
    make_node: NodeFactory,
    cluster: Callable[..., Any],
    operator: InProcessOperator,
) -> None:
    (node,) = await _nodes(make_node, namespace, 1)
    gpu = unique_name("gpu")
    await cluster(CLASSES, device_class(gpu))
    await cluster(SLICES, resource_slice(node, driver_of(gpu), gpus(2)))
    await admin_api.create(TEMPLATES, claim_template("tmpl", claim_spec(gpu)), namespace=namespace)
    gated = scheduler_pod("gated", template="tmpl", hostname=node)
    gated["spec"]["schedulingGates"] = [{"name": "example.com/queue"}]
    await admin_api.create(PODS, gated, namespace=namespace)
    # A pod created after it is placed: the gated one was seen, and passed over.
    later = scheduler_pod("later", template="tmpl", hostname=node)
    await admin_api.create(PODS, later, namespace=namespace)
    assert await wait_for(lambda: _node_of(admin_api, namespace, "later")) == node
    assert await _node_of(admin_api, namespace, "gated") is None
    claims = (await admin_api.list(CLAIMS, namespace=namespace))["items"]
    owned = [c for c in claims if c["metadata"]["name"].startswith("gated-")]
    assert all("allocation" not in (c.get("status") or {}) for c in owned)
    await admin_api.patch(PODS, "gated", {"spec": {"schedulingGates": None}}, namespace=namespace)
    assert await wait_for(lambda: _node_of(admin_api, namespace, "gated")) == node


async def test_failed_scheduling_is_worded_as_kube_scheduler_words_it(
    admin_api: Client, namespace: str, make_node: NodeFactory, operator: InProcessOperator
) -> None:
    nodes = await _nodes(make_node, namespace, 2)
    taint = {"key": "example.com/maintenance", "value": "yes", "effect": "NoSchedule"}
    for name in nodes:
        await admin_api.patch(NODES, name, {"spec": {"taints": [taint]}})
    await admin_api.create(PODS, _pod("p", namespace), namespace=namespace)
    (message, *_) = await wait_for(lambda: failed_scheduling(admin_api, namespace, "p"))
    total = len((await admin_api.list(NODES))["items"])
    others = total - len(nodes)
    expected = [f"{len(nodes)} node(s) had untolerated taint(s)"]
    if others:
        expected.append(f"{others} node(s) didn't match Pod's node affinity/selector")
    # PostFilter (DefaultPreemption) appends its part, as kube-scheduler's FitError does.
    preemption = f"preemption: 0/{total} nodes are available: {total} Preemption is not helpful"
    assert message == (
        f"0/{total} nodes are available: {', '.join(sorted(expected))}. "
        f"{preemption} for scheduling."
    )
