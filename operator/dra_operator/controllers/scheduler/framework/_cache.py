"""The live scheduler's NodeInfos, kept from node and pod events and from the pods it assumed.

kube-scheduler's cache (pkg/scheduler/backend/cache): building every NodeInfo again for each
pod would read every pod of the cluster per decision, so the NodeInfos are updated as events
arrive, and a pod counts on its node from the moment the scheduler decides it (assumed) until
the watch shows it bound; a failed binding forgets it again. Terminal pods do not count.

`snapshot()` is taken at the start of a cycle. It copies only the NodeInfos that changed since
the previous snapshot (their generation moved) and returns the previous snapshot itself when
nothing did, so a cycle after one binding costs one NodeInfo copy, not one per node. Nor does
it index every node again: a snapshot is the copies of an earlier moment (the base, by name)
with the copies changed since laid over them, and the changes are folded into a new base only
once they outnumber the square root of the nodes, so at 5,000 nodes a snapshot costs about 70
dictionary steps instead of 5,000. A snapshot never changes afterwards: the cache's own
NodeInfos are the ones updated, and a base or a layer once handed over is never written.

Pods bound to a node not known yet are kept aside and counted when the node appears (the watch
of pods may deliver before the watch of nodes). Used from the event loop only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dra_operator.controllers.scheduler.framework._images import node_image_states
from dra_operator.controllers.scheduler.framework._nodeinfo import (
    NodeInfo,
    PodInfo,
    Snapshot,
    next_generation,
)
from dra_operator.controllers.scheduler.framework._snapshot import (
    counts_on_node,
    node_info,
    pod_info,
)
from dra_operator.model import Node, Pod


@dataclass(frozen=True, slots=True)
class _Placed:
    node: str
    info: PodInfo
    assumed: bool


def _differs(old: Pod, new: Pod) -> bool:
    """Whether an update changes what plugins read of a placed pod (its spec, its labels);
    status updates, the most frequent by far, leave the NodeInfo as it is."""
    return old.spec != new.spec or old.metadata.labels != new.metadata.labels


_MIN_LAYER = 16
"""Changed copies a snapshot lays over its base before they are folded in, at the least."""


class NodeInfoCache:
    """See the module docstring."""

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}  # the live NodeInfos, updated in place
        self._placed: dict[str, _Placed] = {}  # by pod uid
        self._by_node: dict[str, dict[str, PodInfo]] = {}  # node -> uid -> pod, known or not
        self._base: dict[str, NodeInfo] = {}  # copies, shared with snapshots: never written
        self._names: list[str] = []  # the base's names, sorted; shared too
        self._layer: dict[str, NodeInfo | None] = {}  # copies changed since (None: gone)
        self._changed: set[str] = set()  # nodes whose copy is stale or gone
        self._affinity: set[str] = set()  # nodes with pods with affinity
        self._anti_affinity: set[str] = set()  # ... with required anti-affinity
        self._snapshot = Snapshot(())

    # -- nodes -------------------------------------------------------------------------------

    def node_changed(self, node: Node) -> None:
        """A node was added or updated."""
        fresh = node_info(node)
        current = self._nodes.get(node.name)
        images_moved = current is None or current.node.images != node.images
        if current is None:
            fresh.generation = next_generation()  # never 0: results on it may be reused
            for info in self._by_node.get(node.name, {}).values():
                fresh.add_pod(info)
            self._nodes[node.name] = fresh
        else:
            current.node = fresh.node
            current.allocatable = fresh.allocatable
            current.generation = next_generation()
        self._changed.add(node.name)
        if images_moved:
            self._refresh_images()

    def node_deleted(self, name: str) -> None:
        """The node is gone; its pods stay aside in case it comes back."""
        if self._nodes.pop(name, None) is not None:
            self._changed.add(name)
            self._refresh_images()

    def _refresh_images(self) -> None:
        """Every node's images with how many nodes have each (a node's images, or the set of
        nodes, changed): only nodes whose image states moved change generation."""
        states = node_image_states(info.node for info in self._nodes.values())
        for name, info in self._nodes.items():
            images = states.get(name, {})
            if images != info.images:
                info.images = images
                info.generation = next_generation()
                self._changed.add(name)

    # -- pods --------------------------------------------------------------------------------

    def pod_changed(self, pod: Pod) -> None:
        """A pod was added or updated in the watch."""
        uid = pod.metadata.uid
        current = self._placed.get(uid)
        if not counts_on_node(pod):
            if not pod.spec.node_name and current is not None and current.assumed:
                return  # ours, bound by us; the watch has not shown the binding yet
            self.forget(uid)
        elif current is not None and current.assumed and current.node == pod.spec.node_name:
            info = current.info  # the binding we assumed: its amounts stand
            if _differs(info.pod, pod):
                info = pod_info(pod)
            else:
                info = PodInfo(pod, info.requests, info.non_zero_requests)
            self._place(_Placed(current.node, info, assumed=False))
        elif current is None or current.assumed or current.node != pod.spec.node_name:
            self._place(_Placed(pod.spec.node_name, pod_info(pod), assumed=False))
        elif _differs(current.info.pod, pod):
            self._place(_Placed(current.node, pod_info(pod), assumed=False))

    def assume(self, pod: Pod, node: str) -> None:
        """The scheduler decided to bind `pod` to `node`: count it there from now on."""
        self._place(_Placed(node, pod_info(pod), assumed=True))

    def forget(self, uid: str) -> None:
        """The pod is gone, finished, or our binding of it failed."""
        placed = self._placed.pop(uid, None)
        if placed is None:
            return
        on_node = self._by_node.get(placed.node)
        if on_node is not None:
            on_node.pop(uid, None)
            if not on_node:
                del self._by_node[placed.node]
        info = self._nodes.get(placed.node)
        if info is not None:
            info.remove_pod(uid)
            self._changed.add(placed.node)

    def node_of(self, uid: str) -> str | None:
        """The node a pod is placed on (by the watch or by our decision), if any."""
        placed = self._placed.get(uid)
        return placed.node if placed is not None else None

    def is_assumed(self, uid: str) -> bool:
        placed = self._placed.get(uid)
        return placed is not None and placed.assumed

    def _place(self, placed: _Placed) -> None:
        uid = placed.info.pod.metadata.uid
        self.forget(uid)
        self._placed[uid] = placed
        self._by_node.setdefault(placed.node, {})[uid] = placed.info
        info = self._nodes.get(placed.node)
        if info is not None:
            info.add_pod(placed.info)
            self._changed.add(placed.node)

    # -- snapshots ---------------------------------------------------------------------------

    def get(self, name: str) -> NodeInfo | None:
        """The live NodeInfo of `name` (changes with events; a cycle reads its snapshot)."""
        return self._nodes.get(name)

    def __len__(self) -> int:
        return len(self._nodes)

    def snapshot(self) -> Snapshot:
        """The NodeInfos as they are now, copying only those changed since the last call."""
        if not self._changed:
            return self._snapshot
        layer = self._layer
        affinity_moved = False
        for name in self._changed:
            live = self._nodes.get(name)
            copy = self._copy(name)
            if live is None:
                if name in self._base:
                    layer[name] = None
                else:
                    layer.pop(name, None)
            elif copy is None or copy.generation != live.generation:
                layer[name] = live.clone()
            affinity_moved |= self._track_affinity(name, live)
        self._changed.clear()
        if len(layer) > max(_MIN_LAYER, math.isqrt(len(self._base))):
            self._fold()
        previous = self._snapshot
        with_affinity = previous.have_pods_with_affinity
        with_anti = previous.have_pods_with_required_anti_affinity
        if affinity_moved:
            with_affinity = self._copies_of(self._affinity)
            with_anti = self._copies_of(self._anti_affinity)
        self._snapshot = Snapshot.layered(
            self._base,
            self._names,
            dict(self._layer),
            size=len(self._nodes),
            with_affinity=tuple(with_affinity),
            with_anti_affinity=tuple(with_anti),
        )
        return self._snapshot

    def _copy(self, name: str) -> NodeInfo | None:
        """The copy of `name` the next snapshot shows unless it changes."""
        if name in self._layer:
            return self._layer[name]
        return self._base.get(name)

    def _copies_of(self, names: set[str]) -> tuple[NodeInfo, ...]:
        return tuple(copy for n in sorted(names) if (copy := self._copy(n)) is not None)

    def _track_affinity(self, name: str, live: NodeInfo | None) -> bool:
        """Keep `name` in the sets of nodes with (anti-)affinity pods; whether it is or was in
        one (the snapshot's lists of them must be built again)."""
        was = name in self._affinity or name in self._anti_affinity
        for names, has in (
            (self._affinity, live is not None and bool(live.pods_with_affinity)),
            (self._anti_affinity, live is not None and bool(live.pods_with_required_anti_affinity)),
        ):
            if has:
                names.add(name)
            else:
                names.discard(name)
        return was or name in self._affinity or name in self._anti_affinity

    def _fold(self) -> None:
        """A new base: the old one with the layer applied (the old one stays as it was)."""
        base = dict(self._base)
        resized = False
        for name, copy in self._layer.items():
            if copy is None:
                del base[name]
                resized = True
            else:
                resized |= name not in base
                base[name] = copy
        self._base = base
        if resized:
            self._names = sorted(base)
        self._layer = {}
