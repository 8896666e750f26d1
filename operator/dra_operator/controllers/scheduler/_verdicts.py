"""Allocator verdicts per (claim shape, node), reused until something they read changes.

Filling a cluster with pods of one template asks the allocator the same question for every pod:
do these claims fit on that node? The answer depends only on the claims' specs, the policy and
its step budget (the *shape*), and on what the node's allocation reads: the slices local to the
node and the node-independent ones (`_allocate_on` reads exactly these), every other slice of
the same pools (pool completeness counts them), the ledger's use of those pools, the node's
labels, the classes and the DeviceTaintRules. So a verdict is kept per shape and node and
dropped when one of those changes: `sync` reads what changed since the last decision from the
stores' and the ledger's journals (pull, not callbacks: nothing can forget to call it), drops
the nodes it touched, and everything on a class or rule change, a node-independent slice or
pool, or a journal that overflowed.

Hooked policies are never cached (a hook may answer differently each time), nor outcomes that
depend on the clock (a search that ran out of budget) or name a claim in a way another pod's
claims cannot be substituted into (`_explain.renamed_reason`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from dra_operator.allocator import Budget, Policy
from dra_operator.cluster import SLICES_BY_POOL, DeviceLedger, PoolKey, Store
from dra_operator.controllers.scheduler._taints import TaintedSlices
from dra_operator.hooks import HookPolicy
from dra_operator.model import DeviceClass, Node, ResourceClaim, ResourceSlice


@dataclass(frozen=True, slots=True)
class Fits:
    """The claims fit on the node, with the policy's score of the allocation found."""

    score: float


@dataclass(frozen=True, slots=True)
class Rejected:
    """The claims do not fit; `reason` names the claims `names` of the pod that asked first."""

    reason: str
    names: tuple[str, ...]


Verdict = Fits | Rejected


def shape_of(claims: Sequence[ResourceClaim], policy: Policy, budget: Budget) -> Hashable | None:
    """What an allocation's outcome depends on besides the cluster; None: never reuse it."""
    if isinstance(policy, HookPolicy):
        return None
    try:
        key = (policy, budget.max_steps, tuple(claim.spec for claim in claims))
        hash(key)
    except TypeError:  # a policy without value semantics
        return None
    return key


class Verdicts:
    """Verdicts by node and shape, and the journal positions they were last synced at."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[Hashable, Verdict]] = {}
        self._marks = (-1, -1, -1, -1, -1)  # slices, nodes, classes, rules, ledger revisions
        self._sorted: tuple[int, list[Node]] = (-1, [])
        self.reused = 0  # verdicts answered from here instead of the allocator

    def get(self, node: str, shape: Hashable) -> Verdict | None:
        found = self._by_node.get(node)
        return found.get(shape) if found is not None else None

    def put(self, node: str, shape: Hashable, verdict: Verdict) -> None:
        self._by_node.setdefault(node, {})[shape] = verdict

    def nodes_by_name(self, nodes: Store[Node]) -> list[Node]:
        """The nodes sorted by name, sorted again only when the node store changed."""
        if self._sorted[0] != nodes.revision:
            ordered = [entry.obj for entry in sorted(nodes, key=lambda e: e.key.name)]
            self._sorted = (nodes.revision, ordered)
        return self._sorted[1]

    def sync(
        self,
        *,
        slices: Store[ResourceSlice],
        nodes: Store[Node],
        classes: Store[DeviceClass],
        tainted: TaintedSlices,
        ledger: DeviceLedger,
    ) -> None:
        """Drop every verdict that a change since the last call may have made wrong."""
        marks = (
            slices.revision,
            nodes.revision,
            classes.revision,
            tainted.revision,
            ledger.revision,
        )
        old = self._marks
        self._marks = marks
        if marks == old:
            return
        if old[2:4] != marks[2:4] or old[0] < 0:
            self._by_node.clear()
            return
        if not self._slices_changed(slices, old[0]):
            self._by_node.clear()
            return
        node_changes = nodes.changes_since(old[1])
        if node_changes is None:
            self._by_node.clear()
            return
        for change in node_changes:
            self._by_node.pop(change.key.name, None)
        pools = ledger.pools_changed_since(old[4])
        if pools is None or not self._drop_pools(slices, (PoolKey(*p) for p in pools)):
            self._by_node.clear()

    def _slices_changed(self, slices: Store[ResourceSlice], since: int) -> bool:
        """Drop the nodes changed slices touch; False when everything must go."""
        changes = slices.changes_since(since)
        if changes is None:
            return False
        pools: set[PoolKey] = set()
        for change in changes:
            for piece in change.objects():
                if not piece.node_name:
                    return False
                self._by_node.pop(piece.node_name, None)
                pools.add(PoolKey(piece.driver, piece.pool.name))
        return self._drop_pools(slices, pools)

    def _drop_pools(self, slices: Store[ResourceSlice], pools: Iterable[PoolKey]) -> bool:
        """Drop every node with a slice in `pools`; False when one serves several nodes."""
        for pool in pools:
            for entry in slices.by_index(SLICES_BY_POOL, pool):
                if not entry.obj.node_name:
                    return False
                self._by_node.pop(entry.obj.node_name, None)
        return True
