"""The scheduler oracle answers as kube-scheduler v1.37.2 does, on cases worked out by hand.

Each scenario is small enough to compute its verdicts and scores from upstream's rules (the
reasons are upstream's texts, e.g. pkg/scheduler/framework/plugins/tainttoleration), so these
tests prove the oracle (and its protocol) before any differential test leans on it. They also
pin the generator: its scenarios are accepted by the oracle as they are.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.oracle import OracleError
from tests.support.preemption_scenarios import preemption_scenario
from tests.support.scheduler_oracle import SchedulerOracle, running_scheduler_oracle
from tests.support.scheduler_scenarios import scenario

Manifest = dict[str, Any]
UNRESOLVABLE = "UnschedulableAndUnresolvable"
ZONE = "topology.kubernetes.io/zone"


@pytest.fixture(scope="module")
def oracle() -> Iterator[SchedulerOracle]:
    yield from running_scheduler_oracle()


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    labels: dict[str, str] | None = None,
    taints: list[Manifest] | None = None,
) -> Manifest:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name} | (labels or {}),
        },
        "spec": {"taints": taints or []},
        "status": {"capacity": allocatable, "allocatable": allocatable},
    }


def pod(
    name: str,
    *,
    node_name: str = "",
    cpu: str | None = None,
    memory: str | None = None,
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> Manifest:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: Manifest = {"name": "main", "image": "registry.example/app:v1"}
    if requests:
        container["resources"] = {"requests": requests}
    body: Manifest = {"containers": [container]} | spec
    if node_name:
        body["nodeName"] = node_name
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "labels": labels or {},
        },
        "spec": body,
    }


def run(oracle: SchedulerOracle, nodes: list[Manifest], incoming: Manifest, **rest: Any) -> Any:
    return oracle.schedule({"nodes": nodes, "pod": incoming} | rest)


def feasible(answer: Any) -> set[str]:
    return {name for name, status in answer["filter"].items() if status["code"] == "Success"}


def test_the_default_profile_without_dynamic_resources_and_preemption(
    oracle: SchedulerOracle,
) -> None:
    """The filter and score points of v1.37.2's default profile, in its order and weights.
    NodeDeclaredFeatures is appended by its gate (GA in 1.37); VolumeBinding scores (weight 1,
    the default for a multi-point plugin given none) because StorageCapacityScoring is on by
    default in 1.37."""
    profile = oracle.profile()
    assert profile["kubernetes"] == "v1.37.2"
    filters = [p["name"] for p in profile["plugins"]["filter"]]
    assert filters == [
        "NodeName",
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeDeclaredFeatures",
    ]
    weights = {p["name"]: p["weight"] for p in profile["plugins"]["score"]}
    assert weights == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert profile["plugins"]["postFilter"] == []


def test_an_untolerated_taint_rejects_the_node(oracle: SchedulerOracle) -> None:
    taint = {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}
    answer = run(oracle, [node("a"), node("b", taints=[taint])], pod("p"))
    assert answer["filter"]["b"] == {
        "code": UNRESOLVABLE,
        "reasons": ["node(s) had untolerated taint(s)"],
        "plugin": "TaintToleration",
    }
    assert answer["filter"]["a"] == {"code": "Success", "reasons": [], "plugin": ""}
    tolerated = pod("p", tolerations=[taint | {"operator": "Equal"}])
    assert feasible(run(oracle, [node("a"), node("b", taints=[taint])], tolerated)) == {"a", "b"}


def test_requests_beyond_allocatable_cannot_be_helped(oracle: SchedulerOracle) -> None:
    """More than the node has at all: preemption could not help, so unresolvable."""
    answer = run(oracle, [node("a", cpu="2", memory="1Gi")], pod("p", cpu="3", memory="2Gi"))
    assert answer["filter"]["a"] == {
        "code": UNRESOLVABLE,
        "reasons": ["Insufficient cpu", "Insufficient memory"],
        "plugin": "NodeResourcesFit",
    }
    assert answer["scores"] == {} and answer["total"] == {}


def test_requests_beyond_what_is_left_are_insufficient(oracle: SchedulerOracle) -> None:
    """Room taken by another pod: Unschedulable (preemption might free it)."""
    answer = run(
        oracle,
        [node("a", cpu="2")],
        pod("p", cpu="1500m"),
        pods=[pod("q", node_name="a", cpu="1")],
    )
    assert answer["filter"]["a"] == {
        "code": "Unschedulable",
        "reasons": ["Insufficient cpu"],
        "plugin": "NodeResourcesFit",
    }


def test_least_allocated_scores_and_weighted_total(oracle: SchedulerOracle) -> None:
    """4 cpu / 8Gi nodes, b already runs 2 cpu / 4Gi; the pod asks 1 cpu / 2Gi.
    LeastAllocated: a (4000-1000)/4000 = 75 on both resources, b (4000-3000)/4000 = 25.
    BalancedAllocation scores the change in balance the pod brings (1.37: 50 + (50 + after -
    before) / 2, each balance 100 - 100 * std of the fractions): both nodes are balanced before
    and after, so 50 + 50 / 2 = 75. TaintToleration:
    no PreferNoSchedule taint anywhere, reversed normalization gives 100. ImageLocality: the
    image is on no node, 0. VolumeBinding (storage capacity scoring on): no volumes, 0. The
    rest skip their PreScore (no preferences, spread or affinity)."""
    nodes = [node("a"), node("b")]
    answer = run(
        oracle,
        nodes,
        pod("p", cpu="1", memory="2Gi"),
        pods=[pod("q", node_name="b", cpu="2", memory="4Gi")],
    )
    assert answer["scores"] == {
        "NodeResourcesFit": {"a": 75, "b": 25},
        "NodeResourcesBalancedAllocation": {"a": 75, "b": 75},
        "TaintToleration": {"a": 100, "b": 100},
        "ImageLocality": {"a": 0, "b": 0},
        "VolumeBinding": {"a": 0, "b": 0},
    }
    assert answer["total"] == {"a": 75 + 75 + 3 * 100, "b": 25 + 75 + 3 * 100}


def test_a_profile_with_most_allocated_scores_the_other_way(oracle: SchedulerOracle) -> None:
    config = {
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {"scoringStrategy": {"type": "MostAllocated"}},
            }
        ]
    }
    answer = run(
        oracle,
        [node("a"), node("b")],
        pod("p", cpu="1", memory="2Gi"),
        pods=[pod("q", node_name="b", cpu="2", memory="4Gi")],
        config=config,
    )
    assert answer["scores"]["NodeResourcesFit"] == {"a": 25, "b": 75}


def test_an_unsupported_config_is_a_protocol_error(oracle: SchedulerOracle) -> None:
    with pytest.raises(OracleError, match="NoSuchPlugin"):
        run(
            oracle,
            [node("a")],
            pod("p"),
            config={"plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}}},
        )


def test_required_anti_affinity_on_hostname(oracle: SchedulerOracle) -> None:
    term = {
        "labelSelector": {"matchLabels": {"app": "web"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    incoming = pod(
        "p",
        labels={"app": "web"},
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
    )
    answer = run(
        oracle,
        [node("a"), node("b")],
        incoming,
        pods=[pod("web-0", node_name="a", labels={"app": "web"})],
    )
    assert answer["filter"]["a"] == {
        "code": "Unschedulable",
        "reasons": ["node(s) didn't match pod anti-affinity rules"],
        "plugin": "InterPodAffinity",
    }
    assert feasible(answer) == {"b"}


def test_topology_spread_max_skew_one(oracle: SchedulerOracle) -> None:
    """One web pod on a and b each, none on c: only c keeps the skew within 1."""
    constraint = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    answer = run(
        oracle,
        [node("a"), node("b"), node("c")],
        pod("p", labels={"app": "web"}, topologySpreadConstraints=[constraint]),
        pods=[
            pod("web-0", node_name="a", labels={"app": "web"}),
            pod("web-1", node_name="b", labels={"app": "web"}),
        ],
    )
    assert feasible(answer) == {"c"}
    assert answer["filter"]["a"] == {
        "code": "Unschedulable",
        "reasons": ["node(s) didn't match pod topology spread constraints"],
        "plugin": "PodTopologySpread",
    }


def storage_class(name: str, mode: str) -> Manifest:
    return {
        "metadata": {"name": name},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": mode,
    }


def claim(name: str, storage_class_name: str) -> Manifest:
    return {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": storage_class_name,
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    }


def with_claim(incoming: Manifest, name: str) -> Manifest:
    incoming["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": name}}]
    return incoming


def test_an_unbound_immediate_claim_stops_the_pod_in_prefilter(oracle: SchedulerOracle) -> None:
    answer = run(
        oracle,
        [node("a")],
        with_claim(pod("p"), "data"),
        persistentVolumeClaims=[claim("data", "now")],
        storageClasses=[storage_class("now", "Immediate")],
    )
    assert answer["prefilter"] == {
        "code": UNRESOLVABLE,
        "reasons": ["pod has unbound immediate PersistentVolumeClaims"],
        "plugin": "VolumeBinding",
    }
    assert answer["filter"] == {}


def test_a_wait_for_first_consumer_claim_goes_where_its_local_volume_is(
    oracle: SchedulerOracle,
) -> None:
    volume = {
        "metadata": {"name": "local-c", "uid": "uid-local-c"},
        "spec": {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "persistentVolumeReclaimPolicy": "Delete",
            "volumeMode": "Filesystem",
            "local": {"path": "/mnt/disk"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["c"]}
                            ]
                        }
                    ]
                }
            },
        },
        "status": {"phase": "Available"},
    }
    answer = run(
        oracle,
        [node("a"), node("b"), node("c")],
        with_claim(pod("p"), "data"),
        persistentVolumes=[volume],
        persistentVolumeClaims=[claim("data", "local")],
        storageClasses=[storage_class("local", "WaitForFirstConsumer")],
    )
    assert feasible(answer) == {"c"}
    assert answer["filter"]["a"] == {
        "code": UNRESOLVABLE,
        "reasons": ["node(s) didn't find available persistent volumes to bind"],
        "plugin": "VolumeBinding",
    }


def test_a_preferred_zone_scores_through_node_affinity(oracle: SchedulerOracle) -> None:
    """One preferred term of weight 5 matched by a only: raw 5 and 0, normalized to 100 and 0."""
    preference = {
        "weight": 5,
        "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]},
    }
    incoming = pod(
        "p",
        affinity={
            "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [preference]}
        },
    )
    answer = run(oracle, [node("a", labels={ZONE: "z1"}), node("b", labels={ZONE: "z2"})], incoming)
    assert answer["scores"]["NodeAffinity"] == {"a": 100, "b": 0}


def test_unknown_fields_are_rejected(oracle: SchedulerOracle) -> None:
    with pytest.raises(OracleError, match="unknown field"):
        oracle.schedule({"nodes": [], "pod": pod("p"), "nodez": []})


def test_generated_scenarios_are_accepted_as_they_are(oracle: SchedulerOracle) -> None:
    """Strict decoding: a generated object with a misspelled field would be a protocol error.
    Over 200 seeds the generator reaches every verdict the differential test compares."""
    codes: set[str] = set()
    plugins: set[str] = set()
    for seed in range(200):
        answer = oracle.schedule(scenario(seed))
        codes.add(answer["prefilter"]["code"])
        for status in answer["filter"].values():
            codes.add(status["code"])
            plugins.add(status["plugin"])
        plugins.add(answer["prefilter"]["plugin"])
    assert {"Success", "Unschedulable", UNRESOLVABLE} <= codes
    assert {
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
    } <= plugins


# -- preempt ---------------------------------------------------------------------------------


def started(manifest: Manifest, minute: int, priority: int) -> Manifest:
    manifest["spec"]["priority"] = priority
    manifest["status"] = {"phase": "Running", "startTime": f"2026-01-01T00:{minute:02d}:00Z"}
    return manifest


def two_low_one_mid() -> list[Manifest]:
    """On a 2-cpu node: low-a (1 cpu, started first), low-b (500m), mid (500m, priority 100)."""
    return [
        started(pod("low-a", node_name="a", cpu="1", labels={"app": "db"}), 1, 0),
        started(pod("low-b", node_name="a", cpu="500m"), 2, 0),
        started(pod("mid", node_name="a", cpu="500m"), 3, 100),
    ]


def preemptor(**spec: Any) -> Manifest:
    return pod("high", cpu="1", priority=1000, **spec)


def test_preemption_spares_the_most_important_victims_first(oracle: SchedulerOracle) -> None:
    """With every lower-priority pod gone the 1-cpu preemptor fits; given back in order mid
    (fits: 1.5 cpu), low-a (2.5: stays a victim), low-b (2: fits)."""
    answer = oracle.preempt(
        {"nodes": [node("a", cpu="2")], "pods": two_low_one_mid(), "pod": preemptor()}
    )
    assert answer["potentialNodes"] == ["a"]
    assert answer["victims"]["a"] == {
        "pods": ["default/low-a"],
        "numPDBViolations": 0,
        "status": {"code": "Success", "reasons": [], "plugin": ""},
    }
    assert answer["candidates"] == [{"node": "a", "pods": ["default/low-a"], "numPDBViolations": 0}]
    assert answer["chosen"] == "a"
    assert answer["status"]["reasons"] == [
        "preemption: found a potential placement for pod on node a, preempting 1 victims"
    ]


def test_a_victim_that_would_break_a_budget_is_spared_first(oracle: SchedulerOracle) -> None:
    """low-a is covered by a budget that allows no disruption: given back first, it fits
    (2 cpu); then mid and low-b must both go, most important first."""
    budget = {
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 0},
    }
    answer = oracle.preempt(
        {
            "nodes": [node("a", cpu="2")],
            "pods": two_low_one_mid(),
            "pod": preemptor(),
            "podDisruptionBudgets": [budget],
        }
    )
    assert answer["victims"]["a"]["pods"] == ["default/mid", "default/low-b"]
    assert answer["victims"]["a"]["numPDBViolations"] == 0


def test_preemption_policy_never_preempts_nobody(oracle: SchedulerOracle) -> None:
    answer = oracle.preempt(
        {
            "nodes": [node("a", cpu="2")],
            "pods": two_low_one_mid(),
            "pod": preemptor(preemptionPolicy="Never"),
        }
    )
    assert answer["eligible"] == "not eligible due to preemptionPolicy=Never."
    assert answer["candidates"] == [] and answer["chosen"] == ""
    assert answer["status"] == {
        "code": "Unschedulable",
        "reasons": ["preemption: not eligible due to preemptionPolicy=Never."],
        "plugin": "",
    }


def test_generated_preemption_scenarios_are_accepted_as_they_are(
    oracle: SchedulerOracle,
) -> None:
    """Strict decoding of the preemption generator's objects; over 100 seeds it reaches every
    outcome the differential test compares."""
    outcomes: set[str] = set()
    for seed in range(100):
        answer = oracle.preempt(preemption_scenario(seed))
        outcomes.add("chosen" if answer["chosen"] else answer["eligible"] or "none")
    assert outcomes >= {"chosen", "none", "not eligible due to preemptionPolicy=Never."}
