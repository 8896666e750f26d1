"""Seeded random cpu/memory-only clusters where a pod may have to preempt, as core/v1 and
policy/v1 JSON dicts, for the scheduler oracle's `preempt` request.

Each scenario is what kube-scheduler's informers would hold, as the API server stores it (the
pods' resolved `spec.priority` and `preemptionPolicy`): 1 to 6 nodes with cpu, memory and pod
room, and up to 12 pods on them that request cpu and memory only, with priorities, start times
(whole minutes, as the API keeps whole seconds, often alike, some not started yet), labels that
PodDisruptionBudgets select, and now and then a pod already being deleted by an earlier
preemption. Some nodes are cordoned or tainted, so that Filter's verdict on them is
UnschedulableAndUnresolvable and preemption does not try them. The pod to place has a priority,
sometimes `preemptionPolicy: Never` or a nominated node, and requests enough that it often fits
nowhere. Budgets: 0 to 3 per scenario, some overlapping, some with an empty or absent selector,
some with pods already in `disruptedPods`. The profile's DefaultPreemption args sometimes ask
for 1 or 2 candidates, so that the dry run stops before it has tried every node; `offset` is
where the dry run starts.

Not generated: devices (upstream's preemption does not count them), nominated pods of other
pods, PodGroups, and any Filter besides NodeResourcesFit, NodeUnschedulable and
TaintToleration that could reject a node.
"""

from __future__ import annotations

import datetime
from typing import Any

from tests.support.scheduler_scenarios import Draw, namespaces

Manifest = dict[str, Any]

APPS = ("web", "db", "cache")
PRIORITIES = (-10, 0, 0, 50, 100, 100, 1000)
STARTED = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
MAX_PODS = 12
"""Upstream sorts a node's possible victims with Go's sort.Slice, which is stable (insertion
sort) up to 12 elements only; beyond, victims of equal priority and start time may be
ordered, and so spared, differently (docs/scheduler.md, "Preemption")."""
DISRUPTION_TARGET = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "PreemptionByScheduler",
    "message": "default-scheduler: preempting to accommodate a higher priority pod",
}


def _time(seconds: int) -> str:
    return (STARTED + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Draw(Draw):
    def node(self, index: int) -> Manifest:
        name = f"node-{index}"
        allocatable = {
            "cpu": self.rng.choice(("1", "2", "2", "4")),
            "memory": self.rng.choice(("2Gi", "4Gi", "8Gi")),
            "pods": self.rng.choice(("110", "110", "110", "3")),
        }
        spec: Manifest = {}
        if self.chance(0.08):
            spec["unschedulable"] = True
        elif self.chance(0.08):
            spec["taints"] = [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "uid": self.uid("node"),
                "labels": {"kubernetes.io/hostname": name},
            },
            "spec": spec,
            "status": {
                "capacity": dict(allocatable),
                "allocatable": allocatable,
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }

    def requests(self, incoming: bool) -> dict[str, str]:
        cpus = ("500m", "1", "1500m", "2") if incoming else ("100m", "250m", "500m", "1")
        memories = ("512Mi", "1Gi", "2Gi", "4Gi") if incoming else ("128Mi", "512Mi", "1Gi")
        requests = {}
        if self.chance(0.9):
            requests["cpu"] = self.rng.choice(cpus)
        if self.chance(0.8):
            requests["memory"] = self.rng.choice(memories)
        return requests

    def pod(self, name: str, *, node: str | None) -> Manifest:
        incoming = node is None
        app = self.rng.choice(APPS)
        requests = self.requests(incoming)
        container: Manifest = {"name": "main", "image": "registry.example/app:v1"}
        container["resources"] = {"requests": requests} if requests else {}
        spec: Manifest = {
            "containers": [container],
            "priority": self.rng.choice((0, 100, 1000, 1000, 2000) if incoming else PRIORITIES),
            "preemptionPolicy": "PreemptLowerPriority",
            "schedulerName": "default-scheduler",
        }
        if self.chance(0.15):
            spec["preemptionPolicy"] = "Never"
        metadata: Manifest = {
            "name": name,
            "namespace": self.rng.choice(("default", "default", "team-a")),
            "uid": self.uid("pod"),
            "labels": {"app": app},
            "creationTimestamp": _time(0),
        }
        if self.chance(0.1):
            del metadata["labels"]  # no budget can cover it
        status: Manifest = {"phase": "Pending"}
        if node is not None:
            spec["nodeName"] = node
            status = {"phase": "Running"}
            if self.chance(0.85):  # else bound but not started yet
                status["startTime"] = _time(self.rng.randrange(0, 600, 60))
            if self.chance(0.06):
                metadata["deletionTimestamp"] = _time(7200)
                metadata["deletionGracePeriodSeconds"] = 30
                status["conditions"] = [DISRUPTION_TARGET]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": spec,
            "status": status,
        }

    def budget(self, index: int, pods: list[Manifest]) -> Manifest:
        namespace = self.rng.choice(("default", "default", "team-a"))
        spec: Manifest = {"minAvailable": 1}
        if self.chance(0.85):
            spec["selector"] = {"matchLabels": {"app": self.rng.choice(APPS)}}
        elif self.chance(0.5):
            spec["selector"] = {}
        status: Manifest = {
            "disruptionsAllowed": self.rng.choice((0, 0, 1, 2)),
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        }
        covered = [p for p in pods if p["metadata"]["namespace"] == namespace]
        if covered and self.chance(0.2):
            status["disruptedPods"] = {self.rng.choice(covered)["metadata"]["name"]: _time(7000)}
        return {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": f"pdb-{index}", "namespace": namespace, "uid": self.uid("pdb")},
            "spec": spec,
            "status": status,
        }

    def config(self) -> Manifest | None:
        if not self.chance(0.3):
            return None
        args = {
            "minCandidateNodesPercentage": self.rng.choice((0, 10)),
            "minCandidateNodesAbsolute": self.rng.choice((1, 2)),
        }
        return {
            "schedulerName": "default-scheduler",
            "pluginConfig": [{"name": "DefaultPreemption", "args": args}],
        }


def preemption_scenario(seed: int) -> Manifest:
    """One cluster, its budgets and one pod to place, for the oracle's `preempt` request."""
    draw = _Draw(seed)
    nodes = [draw.node(i) for i in range(draw.rng.choice((1, 2, 3, 3, 4, 4, 5, 6)))]
    pods = [
        draw.pod(f"pod-{i}", node=draw.rng.choice(nodes)["metadata"]["name"])
        for i in range(draw.rng.randint(0, MAX_PODS))
    ]
    incoming = draw.pod("incoming", node=None)
    if draw.chance(0.15):
        incoming["status"]["nominatedNodeName"] = draw.rng.choice(nodes)["metadata"]["name"]
    scn: Manifest = {
        "nodes": nodes,
        "pods": pods,
        "namespaces": namespaces(),
        "persistentVolumes": [],
        "persistentVolumeClaims": [],
        "storageClasses": [],
        "csiNodes": [],
        "csiDrivers": [],
        "pod": incoming,
        "podDisruptionBudgets": [draw.budget(i, pods) for i in range(draw.rng.randint(0, 3))],
        "offset": draw.rng.randrange(2**16),
    }
    config = draw.config()
    if config is not None:
        scn["config"] = config
    return scn
