"""What the pods already placed on each node request: kube-scheduler's NodeInfo, kept per node.

Node filtering compares a pod's requests with `allocatable - requested`; summing the pods of a
node on every decision would scan every pod (rule 6), so the sums are kept up to date from pod
watch events instead, plus the pods we bound ourselves before the watch shows their node (the
scheduler cache's "assumed" pods). A pod counts from the moment we decide its node, so two
decisions in a row never both fill the last CPU of a node; a failed binding forgets it again.

Terminal pods (Succeeded, Failed) do not count: kube-scheduler's pod informer leaves them out.
Pure data, used from the loop thread only.
"""

from __future__ import annotations

from dataclasses import dataclass

from dra_operator.model import FrozenMap, Pod, Quantity


@dataclass(frozen=True, slots=True)
class _Placed:
    node: str
    requests: FrozenMap[str, Quantity]
    assumed: bool


@dataclass(frozen=True, slots=True)
class NodeRequests:
    """The sum of the requests of the pods on one node, and how many pods there are."""

    requested: FrozenMap[str, Quantity]
    pods: int


_EMPTY = NodeRequests(FrozenMap(), 0)


class NodeUsage:
    """Requests of placed pods, summed per node; see the module docstring."""

    def __init__(self) -> None:
        self._placed: dict[str, _Placed] = {}
        self._totals: dict[str, dict[str, Quantity]] = {}
        self._counts: dict[str, int] = {}

    def pod_changed(self, pod: Pod) -> None:
        """A pod was added or updated in the watch."""
        uid = pod.metadata.uid
        current = self._placed.get(uid)
        if pod.status.phase in ("Succeeded", "Failed"):
            self.forget(uid)
        elif pod.spec.node_name:
            if current is None or current.assumed or current.node != pod.spec.node_name:
                self._set(uid, _Placed(pod.spec.node_name, pod.effective_requests, False))
        elif current is not None and not current.assumed:
            self.forget(uid)  # cannot happen (nodeName is immutable once set); keep sums exact

    def assume(self, pod: Pod, node: str) -> None:
        """We decided to bind `pod` to `node`: count it there until the watch shows it."""
        self._set(pod.metadata.uid, _Placed(node, pod.effective_requests, True))

    def forget(self, uid: str) -> None:
        """The pod is gone, finished, or our binding of it failed."""
        placed = self._placed.pop(uid, None)
        if placed is not None:
            self._add(placed, -1)

    def node_of(self, uid: str) -> str | None:
        """The node a pod is placed on (by the watch or by our decision), if any."""
        placed = self._placed.get(uid)
        return placed.node if placed is not None else None

    def on_node(self, node: str) -> NodeRequests:
        if node not in self._counts:
            return _EMPTY
        return NodeRequests(FrozenMap(self._totals.get(node, {})), self._counts[node])

    def _set(self, uid: str, placed: _Placed) -> None:
        self.forget(uid)
        self._placed[uid] = placed
        self._add(placed, +1)

    def _add(self, placed: _Placed, sign: int) -> None:
        count = self._counts.get(placed.node, 0) + sign
        totals = self._totals.setdefault(placed.node, {})
        for name, quantity in placed.requests.items():
            total = totals[name] + quantity * sign if name in totals else quantity * sign
            if total.is_zero() and sign < 0:
                del totals[name]
            else:
                totals[name] = total
        if count:
            self._counts[placed.node] = count
        else:
            self._counts.pop(placed.node, None)
            self._totals.pop(placed.node, None)
