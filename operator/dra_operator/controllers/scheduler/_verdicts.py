"""Allocator verdicts per (claim shape, node), reused until something they read changes.

Filling a cluster with pods of one template asks the allocator the same question for every pod:
do these claims fit on that node? The answer depends only on the claims' specs, the policy and
its step budget (the *shape*), and on what the node's allocation reads: the slices local to the
node and the node-independent ones (DynamicResources' `allocate_on` reads exactly these), every
other slice of the same pools (pool completeness counts them), the ledger's use of those pools,
the node's labels, the classes and the DeviceTaintRules. So a verdict is kept per shape and node
and dropped when one of those changes: `sync` reads what changed since the last decision from
the stores' and the ledger's journals (pull, not callbacks: nothing can forget to call it),
drops the nodes it touched, and everything on a class or rule change, a node-independent slice
or pool, or a journal that overflowed.

Hooked policies are never cached (a hook may answer differently each time), nor outcomes that
depend on the clock (a search that ran out of budget) or name a claim in a way another pod's
claims cannot be substituted into (`_explain.renamed_reason`).
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import overload

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


class _Named(Sequence[Node]):
    """Nodes by a list of their names (every one known), without copying either."""

    __slots__ = ("_by_name", "_names")

    def __init__(self, names: list[str], by_name: dict[str, Node]) -> None:
        self._names, self._by_name = names, by_name

    def __len__(self) -> int:
        return len(self._names)

    @overload
    def __getitem__(self, index: int) -> Node: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Node]: ...

    def __getitem__(self, index: int | slice) -> Node | Sequence[Node]:
        if isinstance(index, slice):
            return [self._by_name[name] for name in self._names[index]]
        return self._by_name[self._names[index]]


class Verdicts:
    """Verdicts by node and shape, per shape the nodes not known to miss (sorted by name), and
    the journal positions they were last synced at."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[Hashable, Verdict]] = {}
        self._open: dict[Hashable, list[str]] = {}
        self._marks = (-1, -1, -1, -1, -1)  # slices, nodes, classes, rules, ledger revisions
        self._sorted: tuple[int, list[Node], dict[str, Node]] = (-1, [], {})

    def get(self, node: str, shape: Hashable) -> Verdict | None:
        found = self._by_node.get(node)
        return found.get(shape) if found is not None else None

    def put(self, node: str, shape: Hashable, verdict: Verdict) -> None:
        self._by_node.setdefault(node, {})[shape] = verdict
        names = self._open.get(shape)
        if isinstance(verdict, Rejected) and names is not None:
            at = bisect.bisect_left(names, node)
            if at < len(names) and names[at] == node:
                del names[at]

    def nodes_by_name(self, nodes: Store[Node]) -> list[Node]:
        """The nodes sorted by name, sorted again only when the node store changed."""
        return self._nodes(nodes)[1]

    def open_nodes(self, shape: Hashable, nodes: Store[Node]) -> Sequence[Node]:
        """The nodes by name, but those known not to fit claims of `shape`: a full node costs
        nothing here, so a decision's walk does not grow with the nodes filled. A view, not a
        copy (a decision that starts mid-way reads it from there), valid until the next `put`
        or `sync`."""
        by_name = self._nodes(nodes)[2]
        names = self._open.get(shape)
        if names is None:
            names = self._open[shape] = [
                name for name in by_name if not isinstance(self.get(name, shape), Rejected)
            ]
        return _Named(names, by_name)

    def _nodes(self, nodes: Store[Node]) -> tuple[int, list[Node], dict[str, Node]]:
        if self._sorted[0] != nodes.revision:
            ordered = [entry.obj for entry in sorted(nodes, key=lambda e: e.key.name)]
            self._sorted = (nodes.revision, ordered, {node.name: node for node in ordered})
            self._open.clear()  # built from the nodes of before: only names known now
        return self._sorted

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
        if old[2:4] != marks[2:4] or old[0] < 0 or not self._slices_changed(slices, old[0]):
            self._clear()
            return
        node_changes = nodes.changes_since(old[1])
        if node_changes is None:
            self._clear()
            return
        if node_changes:
            self._open.clear()  # nodes came or went: built again when next asked
        for change in node_changes:
            self._drop(change.key.name)
        pools = ledger.pools_changed_since(old[4])
        if pools is None or not self._drop_pools(slices, (PoolKey(*p) for p in pools)):
            self._clear()

    def _clear(self) -> None:
        self._by_node.clear()
        self._open.clear()

    def _drop(self, node: str) -> None:
        """Forget `node`'s verdicts: where it was a miss, it is open again."""
        for shape, verdict in self._by_node.pop(node, {}).items():
            names = self._open.get(shape)
            if isinstance(verdict, Rejected) and names is not None:
                at = bisect.bisect_left(names, node)
                if at == len(names) or names[at] != node:
                    names.insert(at, node)

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
                self._drop(piece.node_name)
                pools.add(PoolKey(piece.driver, piece.pool.name))
        return self._drop_pools(slices, pools)

    def _drop_pools(self, slices: Store[ResourceSlice], pools: Iterable[PoolKey]) -> bool:
        """Drop every node with a slice in `pools`; False when one serves several nodes."""
        for pool in pools:
            for entry in slices.by_index(SLICES_BY_POOL, pool):
                if not entry.obj.node_name:
                    return False
                self._drop(entry.obj.node_name)
        return True
