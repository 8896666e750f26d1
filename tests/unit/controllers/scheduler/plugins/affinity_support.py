"""Builders for the InterPodAffinity and PodTopologySpread tests, shaped like upstream's.

`MakePod()` mirrors kube-scheduler's `st.MakePod()` wrapper (pkg/scheduler/testing) so that a
ported table case reads like the original: it builds the pod's raw JSON and parses it with the
model's parser. `snapshot` places pods on nodes by `spec.nodeName` and fills NodeInfo's
pods-with-affinity lists as the scheduler's cache does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dra_operator.controllers.scheduler.framework import NodeInfo, PodInfo, Snapshot
from dra_operator.model import FrozenMap, Node, ObjectMeta, Pod, Taint, parse_pod

REQUIRED, PREFERRED, REQUIRED_PREFERRED = "required", "preferred", "required+preferred"
_REQ = "requiredDuringSchedulingIgnoredDuringExecution"
_PREF = "preferredDuringSchedulingIgnoredDuringExecution"

Raw = dict[str, Any]


class MakeLabelSelector:
    """`st.MakeLabelSelector()`."""

    def __init__(self) -> None:
        self.raw: Raw = {}

    def label(self, k: str, v: str) -> MakeLabelSelector:
        self.raw.setdefault("matchLabels", {})[k] = v
        return self

    def _expr(self, key: str, op: str, values: Sequence[str] | None) -> MakeLabelSelector:
        e: Raw = {"key": key, "operator": op}
        if values is not None:
            e["values"] = list(values)
        self.raw.setdefault("matchExpressions", []).append(e)
        return self

    def in_(self, key: str, values: Sequence[str]) -> MakeLabelSelector:
        return self._expr(key, "In", values)

    def not_in(self, key: str, values: Sequence[str]) -> MakeLabelSelector:
        return self._expr(key, "NotIn", values)

    def exists(self, key: str) -> MakeLabelSelector:
        return self._expr(key, "Exists", None)

    def not_exist(self, key: str) -> MakeLabelSelector:
        return self._expr(key, "DoesNotExist", None)

    def obj(self) -> Raw:
        return self.raw


class MakePod:
    """`st.MakePod()`: chain the setters, then `obj()`."""

    def __init__(self) -> None:
        self.meta: Raw = {"name": "", "namespace": ""}
        self.spec: Raw = {"containers": [{"name": "c"}]}

    def name(self, name: str) -> MakePod:
        self.meta["name"] = name
        return self

    def namespace(self, ns: str) -> MakePod:
        self.meta["namespace"] = ns
        return self

    def uid(self, uid: str) -> MakePod:
        self.meta["uid"] = uid
        return self

    def labels(self, labels: Mapping[str, str]) -> MakePod:
        self.meta["labels"] = dict(labels)
        return self

    def label(self, k: str, v: str) -> MakePod:
        self.meta.setdefault("labels", {})[k] = v
        return self

    def node(self, name: str) -> MakePod:
        self.spec["nodeName"] = name
        return self

    def terminating(self) -> MakePod:
        self.meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def node_selector(self, labels: Mapping[str, str]) -> MakePod:
        self.spec["nodeSelector"] = dict(labels)
        return self

    def node_affinity_in(self, key: str, values: Sequence[str]) -> MakePod:
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
        affinity = self.spec.setdefault("affinity", {})
        affinity["nodeAffinity"] = {_REQ: {"nodeSelectorTerms": [term]}}
        return self

    def node_affinity_not_in(self, key: str, values: Sequence[str]) -> MakePod:
        term = {"matchExpressions": [{"key": key, "operator": "NotIn", "values": list(values)}]}
        affinity = self.spec.setdefault("affinity", {})
        affinity["nodeAffinity"] = {_REQ: {"nodeSelectorTerms": [term]}}
        return self

    def toleration(self, key: str) -> MakePod:
        self.spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists"})
        return self

    def _affinity(
        self, part: str, topology_key: str, selector: Raw | None, kind: str, weight: int = 1
    ) -> MakePod:
        affinity = self.spec.setdefault("affinity", {}).setdefault(part, {})
        term: Raw = {"topologyKey": topology_key}
        if selector is not None:
            term["labelSelector"] = selector
        if kind in (REQUIRED, REQUIRED_PREFERRED):
            affinity.setdefault(_REQ, []).append(term)
        if kind in (PREFERRED, REQUIRED_PREFERRED):
            affinity.setdefault(_PREF, []).append({"weight": weight, "podAffinityTerm": term})
        return self

    def pod_affinity(self, topology_key: str, selector: Raw | None, kind: str) -> MakePod:
        return self._affinity("podAffinity", topology_key, selector, kind)

    def pod_anti_affinity(self, topology_key: str, selector: Raw | None, kind: str) -> MakePod:
        return self._affinity("podAntiAffinity", topology_key, selector, kind)

    def pod_affinity_in(self, key: str, tk: str, vals: Sequence[str], kind: str) -> MakePod:
        return self.pod_affinity(tk, MakeLabelSelector().in_(key, vals).obj(), kind)

    def pod_affinity_not_in(self, key: str, tk: str, vals: Sequence[str], kind: str) -> MakePod:
        return self.pod_affinity(tk, MakeLabelSelector().not_in(key, vals).obj(), kind)

    def pod_affinity_exists(self, key: str, tk: str, kind: str) -> MakePod:
        return self.pod_affinity(tk, MakeLabelSelector().exists(key).obj(), kind)

    def pod_anti_affinity_in(self, key: str, tk: str, vals: Sequence[str], kind: str) -> MakePod:
        return self.pod_anti_affinity(tk, MakeLabelSelector().in_(key, vals).obj(), kind)

    def pod_anti_affinity_not_in(
        self, key: str, tk: str, vals: Sequence[str], kind: str
    ) -> MakePod:
        return self.pod_anti_affinity(tk, MakeLabelSelector().not_in(key, vals).obj(), kind)

    def pod_anti_affinity_exists(self, key: str, tk: str, kind: str) -> MakePod:
        return self.pod_anti_affinity(tk, MakeLabelSelector().exists(key).obj(), kind)

    def affinity_raw(self, affinity: Raw) -> MakePod:
        """Upstream's hand-written `v1.Affinity` literals, as JSON."""
        self.spec.setdefault("affinity", {}).update(affinity)
        return self

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        mode: str,
        selector: Raw | None,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: Sequence[str] | None = None,
    ) -> MakePod:
        c: Raw = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": mode}
        optional = {
            "labelSelector": selector,
            "minDomains": min_domains,
            "nodeAffinityPolicy": node_affinity_policy,
            "nodeTaintsPolicy": node_taints_policy,
            "matchLabelKeys": None if match_label_keys is None else list(match_label_keys),
        }
        c.update({k: v for k, v in optional.items() if v is not None})
        self.spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def obj(self) -> Pod:
        return parse_pod({"metadata": dict(self.meta), "spec": dict(self.spec)})


class MakeNode:
    """`st.MakeNode()`."""

    def __init__(self) -> None:
        self._name = ""
        self._labels: dict[str, str] = {}
        self._taints: tuple[Taint, ...] = ()

    def name(self, name: str) -> MakeNode:
        self._name = name
        return self

    def label(self, k: str, v: str) -> MakeNode:
        self._labels[k] = v
        return self

    def taints(self, taints: Iterable[Taint]) -> MakeNode:
        self._taints = tuple(taints)
        return self

    def obj(self) -> Node:
        return make_node(self._name, self._labels, self._taints)


def make_node(
    name: str, labels: Mapping[str, str] | None = None, taints: Iterable[Taint] = ()
) -> Node:
    return Node(
        metadata=ObjectMeta(name=name, labels=FrozenMap(labels or {})),
        taints=tuple(taints),
        ready=True,
    )


def pod_info(pod: Pod) -> PodInfo:
    return PodInfo(pod=pod, requests={}, non_zero_requests={})


def node_info(node: Node, pods: Iterable[Pod] = ()) -> NodeInfo:
    info = NodeInfo(node=node, allocatable={})
    for pod in pods:
        add_pod(info, pod_info(pod))
    return info


def add_pod(info: NodeInfo, pi: PodInfo) -> None:
    """As the cache's NodeInfo.AddPod does, for the lists these plugins read."""
    info.pods.append(pi)
    rules = pi.pod.spec.pod_affinity
    if rules is not None and rules.any:
        info.pods_with_affinity.append(pi)
    if rules is not None and rules.required_anti_affinity:
        info.pods_with_required_anti_affinity.append(pi)


def remove_pod(info: NodeInfo, pi: PodInfo) -> None:
    for group in (info.pods, info.pods_with_affinity, info.pods_with_required_anti_affinity):
        if pi in group:
            group.remove(pi)


def snapshot(pods: Iterable[Pod], nodes: Iterable[Node]) -> Snapshot:
    infos = {n.name: node_info(n) for n in nodes}
    for pod in pods:
        info = infos.get(pod.spec.node_name)
        if info is not None:
            add_pod(info, pod_info(pod))
    return Snapshot(list(infos.values()))


class FakeHandle:
    """A Handle with a fixed snapshot and namespaces (name -> labels)."""

    def __init__(self, snap: Snapshot, namespaces: Mapping[str, Mapping[str, str]] | None = None):
        self.snapshot = snap
        self._namespaces = dict(namespaces or {})

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        return self._namespaces.get(name)
