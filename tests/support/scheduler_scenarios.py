"""Seeded random clusters and a pod to place, as core/v1 and storage/v1 JSON dicts.

Each scenario is what kube-scheduler's informers would hold, as the API server stores it (with
the defaults the scheduler oracle does not apply: port protocols, volume and reclaim modes,
binding modes, the pod's resolved priority). Small on purpose (at most 6 nodes, 12 pods), so
that collisions are frequent. One `random.Random(seed)` draws everything: a seed names a
scenario as long as this module is unchanged. Not generated: `matchLabelKeys` /
`mismatchLabelKeys` (the API server folds them into the selectors at creation, which the oracle
would not redo), nominated pods, CSIStorageCapacity objects and pod-level resources.
"""

from __future__ import annotations

import random
from typing import Any

Manifest = dict[str, Any]

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CSI_DRIVER = "csi.example.com"
EXTENDED = "example.com/foo"
NAMESPACES = {"default": {}, "team-a": {"team": "a"}, "team-b": {"team": "b"}}
ZONES = {"zone-a": "region-1", "zone-b": "region-1", "zone-c": "region-2"}
APPS = ("web", "db", "cache")
IMAGES = {  # name -> size in bytes: around ImageLocality's 23 MB and 1000 MB thresholds
    "registry.example/web:v1": 10 * 1024 * 1024,
    "registry.example/db:v1": 300 * 1024 * 1024,
    "registry.example/cache:v1": 800 * 1024 * 1024,
    "registry.example/ml:v1": 2000 * 1024 * 1024,
}
TAINTS = (
    {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "effect": "NoExecute"},
    {"key": "dedicated", "value": "batch", "effect": "PreferNoSchedule"},
)
CREATED = "2026-01-01T00:00:00Z"
# The incoming pod's claims, by how often each kind is drawn.
KINDS = ("bound",) * 2 + ("local",) * 3 + ("provisioned",) * 2 + ("immediate", "shared", "missing")
STORAGE_CLASSES: dict[str, tuple[str, str]] = {  # name -> provisioner, volumeBindingMode
    "local": ("kubernetes.io/no-provisioner", "WaitForFirstConsumer"),
    "zonal-wffc": (CSI_DRIVER, "WaitForFirstConsumer"),
    "zonal-immediate": (CSI_DRIVER, "Immediate"),
}


class Draw:
    """A scenario generator's random source (seeded, so a seed replays its scenario) and the
    uids it hands out, unique within the scenario."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self._serial = 0

    def uid(self, kind: str) -> str:
        self._serial += 1
        return f"{kind}-{self.seed}-{self._serial}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


class _Draw(Draw):
    """One scenario's generator state: the random source and the objects made so far."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.nodes: list[Manifest] = []
        self.pods: list[Manifest] = []
        self.pvs: list[Manifest] = []
        self.pvcs: list[Manifest] = []

    # -- nodes ------------------------------------------------------------------------------

    def node(self, index: int) -> Manifest:
        name = f"node-{index}"
        labels = {HOSTNAME: name}
        if self.chance(0.9):  # a node without a zone: topology keys that are absent
            zone = self.rng.choice(sorted(ZONES))
            labels[ZONE] = zone
            labels[REGION] = ZONES[zone]
        if self.chance(0.4):
            labels["disk"] = self.rng.choice(("ssd", "hdd"))
        if self.chance(0.2):
            labels["gpu"] = "true"
        allocatable = {
            "cpu": self.rng.choice(("2", "4", "8", "3500m")),
            "memory": self.rng.choice(("4Gi", "8Gi", "16Gi")),
            "pods": self.rng.choice(("110", "110", "110", "4")),
            "ephemeral-storage": "100Gi",
        }
        if self.chance(0.3):
            allocatable[EXTENDED] = self.rng.choice(("1", "2"))
        spec: Manifest = {}
        if self.chance(0.25):
            spec["taints"] = self.rng.sample(TAINTS, self.rng.randint(1, 2))
        if self.chance(0.05):
            spec["unschedulable"] = True
        images = [
            {"names": [image], "sizeBytes": size}
            for image, size in sorted(IMAGES.items())
            if self.chance(0.35)
        ]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "uid": self.uid("node"), "labels": labels},
            "spec": spec,
            "status": {
                "capacity": dict(allocatable),
                "allocatable": allocatable,
                "conditions": [{"type": "Ready", "status": "True"}],
                "images": images,
            },
        }

    # -- pods -------------------------------------------------------------------------------

    def container(self, app: str, *, host_ports: bool) -> Manifest:
        requests: dict[str, str] = {}
        if self.chance(0.85):
            requests["cpu"] = self.rng.choice(("100m", "250m", "500m", "1", "1500m"))
        if self.chance(0.85):
            requests["memory"] = self.rng.choice(("128Mi", "512Mi", "1Gi", "2Gi"))
        if self.chance(0.05):
            requests[EXTENDED] = "1"
        image = f"registry.example/{app}:v1" if self.chance(0.8) else "registry.example/ml:v1"
        container: Manifest = {"name": "main", "image": image, "resources": {}}
        if requests:
            container["resources"] = {"requests": requests}
        if host_ports and self.chance(0.25):
            container["ports"] = [
                {
                    "containerPort": 80,
                    "hostPort": self.rng.choice((8080, 9090)),
                    "protocol": self.rng.choice(("TCP", "TCP", "UDP")),
                }
            ]
        return container

    def selector(self, app: str) -> Manifest:
        if self.chance(0.8):
            return {"matchLabels": {"app": app}}
        return {"matchExpressions": [{"key": "app", "operator": "In", "values": [app, "db"]}]}

    def affinity_term(self, app: str) -> Manifest:
        term: Manifest = {
            "labelSelector": self.selector(app),
            "topologyKey": self.rng.choice((HOSTNAME, HOSTNAME, ZONE)),
        }
        if self.chance(0.15):
            term["namespaceSelector"] = self.rng.choice(({}, {"matchLabels": {"team": "a"}}))
        elif self.chance(0.1):
            term["namespaces"] = ["team-a", "team-b"]
        return term

    def pod_affinity(self, app: str) -> Manifest | None:
        affinity: Manifest = {}
        if self.chance(0.25):
            anti: Manifest = {}
            if self.chance(0.6):
                anti["requiredDuringSchedulingIgnoredDuringExecution"] = [self.affinity_term(app)]
            else:
                anti["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": self.rng.randint(1, 100), "podAffinityTerm": self.affinity_term(app)}
                ]
            affinity["podAntiAffinity"] = anti
        if self.chance(0.15):
            other = self.rng.choice(APPS)
            pro: Manifest = {}
            if self.chance(0.4):
                pro["requiredDuringSchedulingIgnoredDuringExecution"] = [self.affinity_term(other)]
            else:
                pro["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {
                        "weight": self.rng.randint(1, 100),
                        "podAffinityTerm": self.affinity_term(other),
                    }
                ]
            affinity["podAffinity"] = pro
        return affinity or None

    def spread(self, app: str) -> list[Manifest]:
        constraints = []
        for _ in range(self.rng.choice((1, 1, 2))):
            constraint: Manifest = {
                "maxSkew": self.rng.choice((1, 1, 2)),
                "topologyKey": self.rng.choice((HOSTNAME, ZONE)),
                "whenUnsatisfiable": self.rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                "labelSelector": {"matchLabels": {"app": app}},
            }
            if constraint["whenUnsatisfiable"] == "DoNotSchedule" and self.chance(0.2):
                constraint["minDomains"] = self.rng.choice((2, 3, 4))
            if self.chance(0.15):
                constraint["nodeAffinityPolicy"] = self.rng.choice(("Honor", "Ignore"))
            if self.chance(0.15):
                constraint["nodeTaintsPolicy"] = self.rng.choice(("Honor", "Ignore"))
            if constraint["topologyKey"] not in {c["topologyKey"] for c in constraints}:
                constraints.append(constraint)
        return constraints

    def node_affinity(self) -> Manifest:
        affinity: Manifest = {}
        if self.chance(0.5):
            expression = self.rng.choice(
                (
                    {"key": ZONE, "operator": "In", "values": self.rng.sample(sorted(ZONES), 2)},
                    {"key": "disk", "operator": "In", "values": ["ssd"]},
                    {"key": "gpu", "operator": "DoesNotExist"},
                    {"key": REGION, "operator": "NotIn", "values": ["region-2"]},
                )
            )
            affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [{"matchExpressions": [expression]}]
            }
        if self.chance(0.6):
            affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {
                    "weight": self.rng.randint(1, 100),
                    "preference": {
                        "matchExpressions": [
                            self.rng.choice(
                                (
                                    {"key": "disk", "operator": "In", "values": ["ssd"]},
                                    {"key": ZONE, "operator": "In", "values": ["zone-a"]},
                                    {"key": "gpu", "operator": "Exists"},
                                )
                            )
                        ]
                    },
                }
                for _ in range(self.rng.randint(1, 2))
            ]
        return affinity

    def tolerations(self) -> list[Manifest]:
        out: list[Manifest] = []
        for taint in TAINTS:
            if self.chance(0.25):
                toleration: Manifest = {"key": taint["key"], "effect": taint["effect"]}
                if "value" in taint and self.chance(0.7):
                    toleration |= {"operator": "Equal", "value": taint["value"]}
                else:
                    toleration["operator"] = "Exists"
                out.append(toleration)
        if self.chance(0.03):
            out.append({"operator": "Exists"})
        return out

    def pod(self, name: str, *, node: str | None, incoming: bool) -> Manifest:
        app = self.rng.choice(APPS)
        namespace = self.rng.choice(("default", "default", "team-a", "team-b"))
        labels = {"app": app}
        if self.chance(0.3):
            labels["tier"] = self.rng.choice(("frontend", "backend"))
        spec: Manifest = {
            "containers": [self.container(app, host_ports=True)],
            "priority": self.rng.choice((0, 0, 100, 1000)),
            "schedulerName": "default-scheduler",
        }
        if self.chance(0.15):
            spec["initContainers"] = [self.container(app, host_ports=False) | {"name": "init"}]
        if self.chance(0.2 if incoming else 0.1):
            spec["tolerations"] = self.tolerations()
        affinity: Manifest = {}
        if incoming and self.chance(0.4):
            affinity["nodeAffinity"] = self.node_affinity()
        if incoming and self.chance(0.08):
            spec["nodeSelector"] = {"disk": self.rng.choice(("ssd", "hdd"))}
        pod_affinity = self.pod_affinity(app) if self.chance(0.6 if incoming else 0.3) else None
        if pod_affinity:
            affinity |= pod_affinity
        if affinity:
            spec["affinity"] = affinity
        if self.chance(0.3 if incoming else 0.15):
            spec["topologySpreadConstraints"] = self.spread(app)
        status: Manifest = {"phase": "Pending"}
        if node is not None:
            spec["nodeName"] = node
            status = {"phase": "Running"}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": self.uid("pod"),
                "labels": labels,
                "creationTimestamp": CREATED,
            },
            "spec": spec,
            "status": status,
        }

    # -- volumes ----------------------------------------------------------------------------

    def pv(self, name: str, storage_class: str, size: str, node: Manifest | None) -> Manifest:
        spec: Manifest = {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "persistentVolumeReclaimPolicy": "Delete",
            "volumeMode": "Filesystem",
        }
        labels: dict[str, str] = {}
        if storage_class == "local":
            assert node is not None
            spec["local"] = {"path": f"/mnt/{name}"}
            term = {"key": HOSTNAME, "operator": "In", "values": [node["metadata"]["name"]]}
        else:
            zone = self.rng.choice(sorted(ZONES))
            spec["csi"] = {"driver": CSI_DRIVER, "volumeHandle": name}
            term = {"key": ZONE, "operator": "In", "values": [zone]}
            if self.chance(0.5):
                labels[ZONE] = zone  # what VolumeZone reads
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}}
        metadata: Manifest = {"name": name, "uid": self.uid("pv")}
        if labels:
            metadata["labels"] = labels
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": metadata,
            "spec": spec,
            "status": {"phase": "Available"},
        }

    def pvc(
        self, name: str, namespace: str, storage_class: str, size: str, access: str
    ) -> Manifest:
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace, "uid": self.uid("pvc")},
            "spec": {
                "accessModes": [access],
                "resources": {"requests": {"storage": size}},
                "storageClassName": storage_class,
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        }

    def bind(self, pvc: Manifest, pv: Manifest) -> None:
        """Both sides of a completed binding, as the PV controller leaves them."""
        pvc["spec"]["volumeName"] = pv["metadata"]["name"]
        pvc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        pvc["status"] = {
            "phase": "Bound",
            "accessModes": pvc["spec"]["accessModes"],
            "capacity": pv["spec"]["capacity"],
        }
        pv["spec"]["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "namespace": pvc["metadata"]["namespace"],
            "name": pvc["metadata"]["name"],
            "uid": pvc["metadata"]["uid"],
        }
        pv["status"] = {"phase": "Bound"}

    def mount(self, pod: Manifest, pvc: Manifest) -> None:
        volumes = pod["spec"].setdefault("volumes", [])
        volumes.append(
            {
                "name": f"v{len(volumes)}",
                "persistentVolumeClaim": {"claimName": pvc["metadata"]["name"]},
            }
        )

    def volumes(self, incoming: Manifest) -> None:
        """Local PVs on some nodes, zonal CSI PVs, claims bound to them by existing pods, and
        the incoming pod's claims: bound, WaitForFirstConsumer (static or provisioned),
        Immediate and unbound, ReadWriteOncePod in use, or missing."""
        for i, node in enumerate(self.nodes):
            if self.chance(0.3):
                size = self.rng.choice(("1Gi", "5Gi", "10Gi"))
                self.pvs.append(self.pv(f"local-{i}", "local", size, node))
        for i in range(self.rng.randint(0, 3)):
            self.pvs.append(self.pv(f"zonal-{i}", "zonal-wffc", "10Gi", None))
        free = list(self.pvs)
        self.rng.shuffle(free)
        for pod in self.pods:  # existing pods hold some of the volumes (a local one on its node)
            usable = [pv for pv in free if _on_node(pv, pod["spec"]["nodeName"])]
            if usable and self.chance(0.25):
                pv = usable[0]
                free.remove(pv)
                access = "ReadWriteOncePod" if self.chance(0.3) else "ReadWriteOnce"
                pvc = self.pvc(
                    f"data-{pod['metadata']['name']}",
                    pod["metadata"]["namespace"],
                    pv["spec"]["storageClassName"],
                    "1Gi",
                    access,
                )
                self.bind(pvc, pv)
                self.pvcs.append(pvc)
                self.mount(pod, pvc)
        namespace = incoming["metadata"]["namespace"]
        for i in range(self.rng.choice((0, 0, 0, 1, 1, 2))):
            kind = self.rng.choice(KINDS)
            name = f"claim-{i}"
            if kind == "bound" and free:
                pv = free.pop()
                pvc = self.pvc(
                    name, namespace, pv["spec"]["storageClassName"], "1Gi", "ReadWriteOnce"
                )
                self.bind(pvc, pv)
            elif kind == "local":
                size = self.rng.choice(("1Gi", "5Gi", "20Gi"))
                pvc = self.pvc(name, namespace, "local", size, "ReadWriteOnce")
            elif kind == "provisioned":
                pvc = self.pvc(name, namespace, "zonal-wffc", "1Gi", "ReadWriteOnce")
            elif kind == "immediate":
                pvc = self.pvc(name, namespace, "zonal-immediate", "1Gi", "ReadWriteOnce")
            elif kind == "shared":
                held = [c for c in self.pvcs if c["metadata"]["namespace"] == namespace]
                if not held:
                    continue
                self.mount(incoming, self.rng.choice(held))
                continue
            else:
                self.mount(
                    incoming, self.pvc(f"missing-{i}", namespace, "local", "1Gi", "ReadWriteOnce")
                )
                continue
            self.pvcs.append(pvc)
            self.mount(incoming, pvc)

    def csi_nodes(self) -> list[Manifest]:
        out = []
        for node in self.nodes:
            name = node["metadata"]["name"]
            driver: Manifest = {"name": CSI_DRIVER, "nodeID": name, "topologyKeys": [ZONE]}
            if self.chance(0.5):
                driver["allocatable"] = {"count": self.rng.randint(0, 2)}
            out.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSINode",
                    "metadata": {"name": name, "uid": self.uid("csinode")},
                    "spec": {"drivers": [driver]},
                }
            )
        return out


def _on_node(pv: Manifest, node: str) -> bool:
    """A zonal PV may serve any node's pod (the generator does not keep zones consistent);
    a local one only its own node's."""
    if "local" not in pv["spec"]:
        return True
    terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    return bool(terms[0]["matchExpressions"][0]["values"] == [node])


def storage_classes() -> list[Manifest]:
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name},
            "provisioner": provisioner,
            "reclaimPolicy": "Delete",
            "volumeBindingMode": mode,
        }
        for name, (provisioner, mode) in STORAGE_CLASSES.items()
    ]


def namespaces() -> list[Manifest]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name} | labels},
        }
        for name, labels in NAMESPACES.items()
    ]


def scenario(seed: int) -> Manifest:
    """One cluster and one pod to place, for the scheduler oracle's `schedule` request."""
    draw = _Draw(seed)
    draw.nodes = [draw.node(i) for i in range(draw.rng.choice((1, 2, 3, 3, 4, 4, 5, 6)))]
    for i in range(draw.rng.randint(0, 12)):
        draw.pods.append(
            draw.pod(
                f"pod-{i}", node=draw.rng.choice(draw.nodes)["metadata"]["name"], incoming=False
            )
        )
    incoming = draw.pod("incoming", node=None, incoming=True)
    draw.volumes(incoming)
    return {
        "nodes": draw.nodes,
        "pods": draw.pods,
        "namespaces": namespaces(),
        "persistentVolumes": draw.pvs,
        "persistentVolumeClaims": draw.pvcs,
        "storageClasses": storage_classes(),
        "csiNodes": draw.csi_nodes(),
        "csiDrivers": [],
        "pod": incoming,
    }
