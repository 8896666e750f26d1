"""What the scheduler knows of each node for one cycle: kube-scheduler's NodeInfo and Snapshot.

Amounts are integers in the units kube-scheduler's `framework.Resource` uses, so that scores
and fit checks round exactly as upstream's: `cpu` in millicores, every other resource (memory,
ephemeral-storage, hugepages-*, extended resources) in whole units rounded up. `pods` is not a
request: the pod count is `len(NodeInfo.pods)` against `allocatable["pods"]`.

A `Snapshot` is taken at the start of a cycle and never changes during it; the cycle's own
placement (Reserve) and preemption's simulation work on `NodeInfo.clone()`s.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

from dra_operator.model import Node, Pod

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"

ALL_ADDRESSES = "0.0.0.0"
"""A host port bound on every address; an empty `hostIP` means the same."""

DEFAULT_MILLI_CPU_REQUEST = 100
"""NodeResourcesFit scores a container without a cpu request as asking this much (100m)."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""... and one without a memory request as asking 200 MiB."""

_generations = itertools.count(1)


def next_generation() -> int:
    """A number larger than every one handed out before (upstream's `nextGeneration`): a
    NodeInfo's generation says whether a snapshot's copy of it is still current."""
    return next(_generations)


@dataclass(frozen=True, slots=True)
class HostPort:
    """A container port with `hostPort` set, as NodePorts compares them."""

    ip: str  # "" and "0.0.0.0" both mean every address
    protocol: str  # TCP, UDP, SCTP
    port: int


@dataclass(frozen=True, slots=True)
class ImageState:
    """An image present on a node, and on how many nodes of the snapshot it is."""

    size: int
    num_nodes: int


def host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """`GetHostPorts`: sidecars' then app containers' host ports, address and protocol filled."""
    sidecars = (c for c in pod.spec.init_containers if c.restart_policy == "Always")
    return tuple(
        HostPort(p.host_ip or ALL_ADDRESSES, p.protocol or "TCP", p.host_port)
        for containers in (sidecars, pod.spec.containers)
        for c in containers
        for p in c.ports
        if p.host_port > 0
    )


def _pvc_keys(pod: Pod) -> list[str]:
    """ "namespace/claim" of each `persistentVolumeClaim` volume (upstream's pvcRefCounts keys)."""
    namespace = pod.metadata.namespace
    return [f"{namespace}/{v.claim_name}" for v in pod.spec.volumes if v.claim_name is not None]


@dataclass(slots=True)
class PodInfo:
    """A pod placed on (or assumed on) a node, with what plugins precompute once per pod.

    `extra` is for plugins that derive something costly from the pod (InterPodAffinity's parsed
    terms): keyed by plugin name, filled on first use, dropped when the pod changes.
    """

    pod: Pod
    requests: Mapping[str, int]  # effective requests in framework units
    non_zero_requests: Mapping[str, int]  # cpu and memory with the defaults above for zero
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.pod.metadata.namespace}/{self.pod.metadata.name}"


@dataclass(slots=True)
class NodeInfo:
    """One node and the pods on it; mutable only in clones (Reserve, preemption)."""

    node: Node
    allocatable: Mapping[str, int]
    pods: list[PodInfo] = field(default_factory=list)
    pods_with_affinity: list[PodInfo] = field(default_factory=list)
    pods_with_required_anti_affinity: list[PodInfo] = field(default_factory=list)
    requested: dict[str, int] = field(default_factory=dict)
    non_zero_requested: dict[str, int] = field(default_factory=dict)
    used_ports: set[HostPort] = field(default_factory=set)
    images: Mapping[str, ImageState] = field(default_factory=dict)
    pvc_ref_counts: dict[str, int] = field(default_factory=dict)  # "namespace/claim" -> pods
    generation: int = 0
    # The node's name, read per node and plugin in every cycle: kept rather than looked up
    # through the node's metadata each time. A node object replaced keeps its name.
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.node.name

    def add_pod(self, info: PodInfo) -> None:
        """Count `info` on this node (a placed pod, or one assumed by Reserve), as upstream's
        `NodeInfo.AddPod`: its requests, host ports, PVCs and its place on the affinity lists."""
        self.pods.append(info)
        pod = info.pod
        rules = pod.spec.pod_affinity
        if rules is not None and rules.any:
            self.pods_with_affinity.append(info)
            if rules.required_anti_affinity:
                self.pods_with_required_anti_affinity.append(info)
        _add_to(self.requested, info.requests, 1)
        _add_to(self.non_zero_requested, info.non_zero_requests, 1)
        self.used_ports.update(host_ports(pod))
        for key in _pvc_keys(pod):
            self.pvc_ref_counts[key] = self.pvc_ref_counts.get(key, 0) + 1
        self.generation = next_generation()

    def remove_pod(self, uid: str) -> PodInfo | None:
        """Stop counting the pod with `uid`, undoing `add_pod`; the PodInfo removed, None if it
        is not here."""
        for at, info in enumerate(self.pods):
            if info.pod.metadata.uid == uid:
                del self.pods[at]
                break
        else:
            return None
        for group in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            if info in group:
                group.remove(info)
        _add_to(self.requested, info.requests, -1)
        _add_to(self.non_zero_requested, info.non_zero_requests, -1)
        if host_ports(info.pod):  # another pod may use the same port: count again
            self.used_ports = {port for other in self.pods for port in host_ports(other.pod)}
        for key in _pvc_keys(info.pod):
            _add_to(self.pvc_ref_counts, {key: 1}, -1)
        self.generation = next_generation()
        return info

    def clone(self) -> NodeInfo:
        return NodeInfo(
            node=self.node,
            allocatable=self.allocatable,
            pods=list(self.pods),
            pods_with_affinity=list(self.pods_with_affinity),
            pods_with_required_anti_affinity=list(self.pods_with_required_anti_affinity),
            requested=dict(self.requested),
            non_zero_requested=dict(self.non_zero_requested),
            used_ports=set(self.used_ports),
            images=self.images,
            pvc_ref_counts=dict(self.pvc_ref_counts),
            generation=self.generation,
        )


def _add_to(total: dict[str, int], amounts: Mapping[str, int], sign: int) -> None:
    for name, amount in amounts.items():
        value = total.get(name, 0) + sign * amount
        if value:
            total[name] = value
        else:
            total.pop(name, None)


class Snapshot(Sequence[NodeInfo]):
    """Every node's NodeInfo for one cycle, in a fixed order (by node name).

    A snapshot of the live cache is `layered`: the NodeInfos of an earlier moment (`base`)
    and the few changed since (`changes`), both shared with the cache's later snapshots and
    never changed once handed over, so taking one costs what changed, not one step per node.
    The sequence by name is built on first use; a cycle that only looks nodes up by name
    never builds it.
    """

    __slots__ = ("_base", "_changes", "_infos", "_names", "_size", "_with_affinity", "_with_anti")

    def __init__(self, node_infos: Iterable[NodeInfo]) -> None:
        infos = tuple(sorted(node_infos, key=lambda n: n.name))
        self._base: Mapping[str, NodeInfo] = {n.name: n for n in infos}
        self._names: Sequence[str] = tuple(self._base)
        self._changes: Mapping[str, NodeInfo | None] = {}
        self._size = len(self._base)
        self._infos: tuple[NodeInfo, ...] | None = infos
        self._with_affinity = tuple(n for n in infos if n.pods_with_affinity)
        self._with_anti = tuple(n for n in infos if n.pods_with_required_anti_affinity)

    @classmethod
    def layered(
        cls,
        base: Mapping[str, NodeInfo],
        names: Sequence[str],
        changes: Mapping[str, NodeInfo | None],
        *,
        size: int,
        with_affinity: tuple[NodeInfo, ...],
        with_anti_affinity: tuple[NodeInfo, ...],
    ) -> Snapshot:
        """`base` (its keys sorted: `names`) with `changes` over it (None: the node is gone);
        `size` nodes in all, those with pods with (anti-)affinity in name order. The caller
        never changes the mappings afterwards."""
        snapshot = cls.__new__(cls)
        snapshot._base, snapshot._names, snapshot._changes = base, names, changes
        snapshot._size = size
        snapshot._infos = None
        snapshot._with_affinity, snapshot._with_anti = with_affinity, with_anti_affinity
        return snapshot

    @property
    def node_infos(self) -> tuple[NodeInfo, ...]:
        """Every NodeInfo by name (built once, on first use)."""
        if self._infos is None:
            names: Iterable[str] = self._names
            added = [
                n for n, info in self._changes.items() if info is not None and n not in self._base
            ]
            if added:
                names = sorted([*self._names, *added])
            self._infos = tuple(info for n in names if (info := self.get(n)) is not None)
        return self._infos

    def get(self, name: str) -> NodeInfo | None:
        if name in self._changes:
            return self._changes[name]
        return self._base.get(name)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_infos)

    @overload
    def __getitem__(self, index: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[NodeInfo]: ...

    def __getitem__(self, index: int | slice) -> NodeInfo | Sequence[NodeInfo]:
        return self.node_infos[index]

    @property
    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        return self._with_affinity

    @property
    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        return self._with_anti
