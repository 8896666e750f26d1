"""Pods nominated to a node by preemption, until they bind or go (upstream's `PodNominator`).

kube-scheduler v1.37.2, pkg/scheduler/backend/queue (`nominator`): a preemptor whose victims
are still terminating holds its node's room through its nomination. Filter counts the nominated
pods of equal or higher priority as if they ran there (`RunFilterPluginsWithNominatedPods`), so
a lower-priority pod does not take the room, while a higher one still may.
"""

from __future__ import annotations

from dra_operator.controllers.scheduler.framework._nodeinfo import PodInfo
from dra_operator.controllers.scheduler.framework._snapshot import pod_info
from dra_operator.model import Pod


class Nominator:
    """Nominated pods by node; a pod is on one node at most."""

    __slots__ = ("_by_node", "_node_of")

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def add(self, pod: Pod, node: str) -> None:
        """Nominate `pod` to `node` (replacing an earlier nomination); "" drops it."""
        uid = pod.metadata.uid
        self.delete(uid)
        if node:
            self._by_node.setdefault(node, {})[uid] = pod_info(pod)
            self._node_of[uid] = node

    def delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        pods = self._by_node[node]
        del pods[uid]
        if not pods:
            del self._by_node[node]

    def node_of(self, uid: str) -> str:
        """The node the pod is nominated to, "" if none."""
        return self._node_of.get(uid, "")

    def for_node(self, node: str) -> list[PodInfo]:
        """The pods nominated to `node`, in the order they were nominated."""
        return list(self._by_node.get(node, {}).values())
